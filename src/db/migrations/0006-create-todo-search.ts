import { sql, type Kysely } from 'kysely';
import { dialectOf, inTransaction } from '../dialect.js';

/**
 * Full-text search over title and description (the `q` filter). This file and
 * `src/todos/todo-search.ts` are the only places that know how; the semantics are the same on
 * both databases (README, "Search").
 *
 * SQLite, FTS5:
 * - `todos_fts` is contentless (`content=''`, nothing is stored twice) with
 *   `contentless_delete=1`, so rows can be deleted by rowid. Tokenizer `unicode61` with
 *   `remove_diacritics 2`: case- and accent-insensitive, letters and digits form words.
 * - FTS5 rows need a stable integer rowid and `todos` has none (its implicit rowid may change
 *   on VACUUM), so `todo_search_keys` assigns one per todo.
 * - Triggers keep both in step with `todos` inside the writing transaction, whatever the write.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') await upPostgres(db);
  else await upSqlite(db);
}

async function upSqlite(db: Kysely<unknown>): Promise<void> {
  await inTransaction(db, async (trx) => {
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

/**
 * PostgreSQL: a `tsvector` column with a GIN index, set by a trigger from title and
 * description. The text is first reduced to what FTS5's `unicode61` tokenizer sees — letters
 * and digits, every other character a separator, diacritics removed (`unaccent`) — so that the
 * `simple` configuration's parser splits it into the same words on both databases.
 */
async function upPostgres(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists unaccent schema public`.execute(db);
  await sql`
    create function todo_search_vector(title text, description text) returns tsvector
    language sql immutable parallel safe as $$
      select to_tsvector('simple', regexp_replace(
        public.unaccent('public.unaccent'::regdictionary,
          coalesce(title, '') || ' ' || coalesce(description, '')),
        '[^[:alnum:]]+', ' ', 'g'))
    $$`.execute(db);
  await sql`alter table todos add column search_vector tsvector`.execute(db);
  await sql`update todos set search_vector = todo_search_vector(title, description)`.execute(db);
  await sql`
    create function todos_search_vector_set() returns trigger language plpgsql as $$
    begin
      new.search_vector := todo_search_vector(new.title, new.description);
      return new;
    end $$`.execute(db);
  await sql`
    create trigger todos_search_vector before insert or update of title, description on todos
    for each row execute function todos_search_vector_set()`.execute(db);
  await sql`create index todos_search on todos using gin (search_vector)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`drop trigger todos_search_vector on todos`.execute(db);
    await sql`drop function todos_search_vector_set()`.execute(db);
    await sql`alter table todos drop column search_vector`.execute(db);
    await sql`drop function todo_search_vector(text, text)`.execute(db);
    return;
  }
  for (const trigger of ['todos_search_insert', 'todos_search_update', 'todos_search_delete']) {
    await sql`drop trigger ${sql.id(trigger)}`.execute(db);
  }
  await sql`drop table todos_fts`.execute(db);
  await sql`drop table todo_search_keys`.execute(db);
}
