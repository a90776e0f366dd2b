import { sql, type Kysely } from 'kysely';
import { dialectOf, inTransaction } from '../dialect.js';

/**
 * SQLite: each todo carries its full-text key (`todos.search_key`, the `todo_search_keys` rowid
 * of migration 0006), so that a search compares it with the FTS5 rowids directly. Joining the
 * match set to `todo_search_keys` to get todo ids cost 8 of the 9 ms a search took at 1,000,000
 * todos, for a common word (10,000 matches); without the join the search takes 1.4 ms.
 *
 * The triggers of 0006 are replaced by ones that fill and use the column. PostgreSQL searches
 * a `tsvector` column and has nothing to change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await inTransaction(db, async (trx) => {
    await sql`alter table todos add column search_key integer`.execute(trx);
    await sql`
      update todos set search_key =
        (select k.rowid from todo_search_keys k where k.todo_id = todos.id)`.execute(trx);
    // Counts and bulk deletes with `q` go from the matches to the owner's todos by this index
    // (`deleted_at` last, as on every list index, so that a count reads the index alone).
    await sql`create index todos_owner_search_key on todos (owner_id, search_key, deleted_at)`.execute(
      trx,
    );
    for (const trigger of TRIGGERS) await sql`drop trigger ${sql.id(trigger)}`.execute(trx);
    await sql`
      create trigger todos_search_insert after insert on todos begin
        insert into todo_search_keys (todo_id) values (new.id);
        update todos set search_key = last_insert_rowid() where rowid = new.rowid;
        insert into todos_fts (rowid, title, description)
          values (last_insert_rowid(), new.title, new.description);
      end`.execute(trx);
    await sql`
      create trigger todos_search_update after update of title, description on todos
      when old.title is not new.title or old.description is not new.description begin
        delete from todos_fts where rowid = old.search_key;
        insert into todos_fts (rowid, title, description)
          values (old.search_key, new.title, new.description);
      end`.execute(trx);
    await sql`
      create trigger todos_search_delete after delete on todos begin
        delete from todos_fts where rowid = old.search_key;
        delete from todo_search_keys where rowid = old.search_key;
      end`.execute(trx);
  });
}

const TRIGGERS = ['todos_search_insert', 'todos_search_update', 'todos_search_delete'] as const;

/** Back to the triggers of 0006, which find the key by todo id. */
export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await inTransaction(db, async (trx) => {
    for (const trigger of TRIGGERS) await sql`drop trigger ${sql.id(trigger)}`.execute(trx);
    await sql`
      create trigger todos_search_insert after insert on todos begin
        insert into todo_search_keys (todo_id) values (new.id);
        insert into todos_fts (rowid, title, description)
          values ((select rowid from todo_search_keys where todo_id = new.id),
                  new.title, new.description);
      end`.execute(trx);
    await sql`
      create trigger todos_search_update after update of title, description on todos
      when old.title is not new.title or old.description is not new.description begin
        delete from todos_fts
          where rowid = (select rowid from todo_search_keys where todo_id = old.id);
        insert into todos_fts (rowid, title, description)
          values ((select rowid from todo_search_keys where todo_id = old.id),
                  new.title, new.description);
      end`.execute(trx);
    await sql`
      create trigger todos_search_delete after delete on todos begin
        delete from todos_fts
          where rowid = (select rowid from todo_search_keys where todo_id = old.id);
        delete from todo_search_keys where todo_id = old.id;
      end`.execute(trx);
    await sql`drop index todos_owner_search_key`.execute(trx);
    await sql`alter table todos drop column search_key`.execute(trx);
  });
}
