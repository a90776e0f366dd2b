import { sql, type Kysely } from 'kysely';

/**
 * Full-text search over title and description (the `q` filter), SQLite FTS5. This file and
 * `src/todos/todo-search.ts` are the only places that know FTS5; PostgreSQL will get a
 * tsvector column instead.
 *
 * - `todos_fts` is contentless (`content=''`, nothing is stored twice) with
 *   `contentless_delete=1`, so rows can be deleted by rowid. Tokenizer `unicode61` with
 *   `remove_diacritics 2`: case- and accent-insensitive, letters and digits form words.
 * - FTS5 rows need a stable integer rowid and `todos` has none (its implicit rowid may change
 *   on VACUUM), so `todo_search_keys` assigns one per todo.
 * - Triggers keep both in step with `todos` inside the writing transaction, whatever the write.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`
      create table todo_search_keys (
        rowid integer primary key,
        todo_id text not null unique
      )`.execute(trx);
    await sql`
      create virtual table todos_fts using fts5(
        title, description,
        content = '', contentless_delete = 1,
        tokenize = 'unicode61 remove_diacritics 2'
      )`.execute(trx);
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

    await sql`insert into todo_search_keys (todo_id) select id from todos order by id`.execute(trx);
    await sql`
      insert into todos_fts (rowid, title, description)
        select k.rowid, t.title, t.description
        from todo_search_keys k join todos t on t.id = k.todo_id`.execute(trx);
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const trigger of ['todos_search_insert', 'todos_search_update', 'todos_search_delete']) {
    await sql`drop trigger ${sql.id(trigger)}`.execute(db);
  }
  await sql`drop table todos_fts`.execute(db);
  await sql`drop table todo_search_keys`.execute(db);
}
