import { sql, type Kysely } from 'kysely';
import { dialectOf } from '../dialect.js';

/**
 * How many todos each owner keeps, maintained by triggers in the writing transaction, so that
 * the quota check on create reads one row instead of counting up to 100,000, and stays exact
 * under concurrent creates (SQLite serializes writes; on PostgreSQL the create locks the row).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('owner_usage')
    .addColumn('owner_id', 'text', (col) => col.primaryKey())
    .addColumn('todo_count', 'integer', (col) => col.notNull())
    .execute();
  await sql`
    insert into owner_usage (owner_id, todo_count)
    select owner_id, count(*) from todos group by owner_id
  `.execute(db);
  await createCountTriggers(db);
}

/** The triggers that keep `todo_count` (also what 0010's `down` goes back to). */
export async function createCountTriggers(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') await createPostgresTriggers(db);
  else await createSqliteTriggers(db);
}

async function createSqliteTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`
    create trigger todos_count_insert after insert on todos begin
      insert into owner_usage (owner_id, todo_count) values (new.owner_id, 1)
      on conflict (owner_id) do update set todo_count = todo_count + 1;
    end
  `.execute(db);
  await sql`
    create trigger todos_count_delete after delete on todos begin
      update owner_usage set todo_count = todo_count - 1 where owner_id = old.owner_id;
    end
  `.execute(db);
}

async function createPostgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function todos_count_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into owner_usage (owner_id, todo_count) values (new.owner_id, 1)
        on conflict (owner_id) do update set todo_count = owner_usage.todo_count + 1;
      else
        update owner_usage set todo_count = todo_count - 1 where owner_id = old.owner_id;
      end if;
      return null;
    end $$
  `.execute(db);
  await sql`
    create trigger todos_count_change after insert or delete on todos
    for each row execute function todos_count_change()
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`drop trigger todos_count_change on todos`.execute(db);
    await sql`drop function todos_count_change()`.execute(db);
  } else {
    await sql`drop trigger todos_count_delete`.execute(db);
    await sql`drop trigger todos_count_insert`.execute(db);
  }
  await db.schema.dropTable('owner_usage').execute();
}
