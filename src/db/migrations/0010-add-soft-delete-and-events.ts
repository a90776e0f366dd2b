import { sql, type Kysely, type RawBuilder } from 'kysely';
import { dialectOf } from '../dialect.js';
import { createCountTriggers } from './0009-create-owner-usage.js';

/**
 * Soft delete and the transactional outbox.
 *
 * - `todos.deleted_at`: a deleted todo stays (restorable) until the purge removes it; the quota
 *   counts only todos that are not deleted. Every list index gets `deleted_at` as its last
 *   column, so that the indexes that served a count alone (without reading the table) still do
 *   now that every query leaves deleted todos out.
 * - `todo_events`: one row per event, written in the transaction of the change it describes.
 *   `seq` counts per owner without gaps: it is taken from `owner_usage.last_event_seq`, whose row
 *   the writer holds until it commits, so one owner's events commit in `seq` order and a reader
 *   that has seen `seq` n has seen everything up to n.
 */
/** The list indexes of migrations 0001, 0004 and 0007, by name, without `deleted_at`. */
const LIST_INDEXES: Readonly<Record<string, RawBuilder<unknown>>> = {
  todos_owner_order: sql`owner_id, position, created_at, id`,
  todos_owner_status_order: sql`owner_id, status, position, created_at, id`,
  todos_owner_position: sql`owner_id, position, id`,
  todos_owner_created: sql`owner_id, created_at, id`,
  todos_owner_updated: sql`owner_id, updated_at, id`,
  todos_owner_due_asc: sql`owner_id, due_asc_key, id, status`,
  todos_owner_due_desc: sql`owner_id, due_desc_key, id`,
  todos_owner_priority: sql`owner_id, priority_rank, id`,
  todos_owner_title: sql`owner_id, title_key, id`,
  todos_owner_status_rank: sql`owner_id, status_rank, id`,
  todos_owner_urgent_due: sql`owner_id, priority_rank desc, due_asc_key, id`,
  todos_owner_priority_due: sql`owner_id, priority_rank, due_asc_key, id`,
};

async function rebuildListIndexes(db: Kysely<unknown>, withDeletedAt: boolean): Promise<void> {
  for (const [name, columns] of Object.entries(LIST_INDEXES)) {
    await db.schema.dropIndex(name).execute();
    const all = withDeletedAt ? sql`${columns}, deleted_at` : columns;
    await sql`create index ${sql.ref(name)} on todos (${all})`.execute(db);
  }
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('todos').addColumn('deleted_at', 'text').execute();
  await rebuildListIndexes(db, true);
  // The purge's walk over deleted todos; live todos (the vast majority) stay out of it.
  await db.schema
    .createIndex('todos_deleted')
    .on('todos')
    .columns(['deleted_at'])
    .where(sql.ref('deleted_at'), 'is not', null)
    .execute();

  await db.schema
    .alterTable('owner_usage')
    .addColumn('last_event_seq', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('todo_events')
    .addColumn('owner_id', 'text', (col) => col.notNull())
    .addColumn('seq', 'integer', (col) => col.notNull())
    .addColumn('id', 'text', (col) => col.notNull().unique())
    .addColumn('type', 'text', (col) => col.notNull())
    .addColumn('todo_id', 'text', (col) => col.notNull())
    .addColumn('occurred_at', 'text', (col) => col.notNull())
    .addColumn('data', 'text', (col) => col.notNull())
    .addPrimaryKeyConstraint('todo_events_pk', ['owner_id', 'seq'])
    .execute();
  // The retention purge deletes the oldest events of every owner.
  await db.schema
    .createIndex('todo_events_occurred')
    .on('todo_events')
    .columns(['occurred_at'])
    .execute();

  if (dialectOf(db) === 'postgres') await replacePostgresCountTrigger(db);
  else await replaceSqliteCountTriggers(db);
  await addDeletedAtToStoredResponses(db);
}

/**
 * Responses stored for `Idempotency-Key` replays are todos without `deleted_at`, which the
 * response schema now requires: a replay after the upgrade would fail to serialize.
 */
async function addDeletedAtToStoredResponses(db: Kysely<unknown>): Promise<void> {
  if (dialectOf(db) === 'postgres') {
    await sql`
      update idempotency_keys set body = (body::jsonb || '{"deleted_at": null}'::jsonb)::text
      where body is not null and jsonb_typeof(body::jsonb) = 'object'
    `.execute(db);
  } else {
    await sql`
      update idempotency_keys set body = json_set(body, '$.deleted_at', null)
      where body is not null and json_valid(body) and json_type(body) = 'object'
    `.execute(db);
  }
}

async function replaceSqliteCountTriggers(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger todos_count_delete`.execute(db);
  await sql`
    create trigger todos_count_delete after delete on todos when old.deleted_at is null begin
      update owner_usage set todo_count = todo_count - 1 where owner_id = old.owner_id;
    end
  `.execute(db);
  await sql`
    create trigger todos_count_soft_delete after update of deleted_at on todos
    when (old.deleted_at is null) <> (new.deleted_at is null) begin
      update owner_usage
      set todo_count = todo_count + (case when new.deleted_at is null then 1 else -1 end)
      where owner_id = new.owner_id;
    end
  `.execute(db);
}

async function replacePostgresCountTrigger(db: Kysely<unknown>): Promise<void> {
  await sql`
    create or replace function todos_count_change() returns trigger language plpgsql as $$
    begin
      if tg_op = 'INSERT' then
        insert into owner_usage (owner_id, todo_count) values (new.owner_id, 1)
        on conflict (owner_id) do update set todo_count = owner_usage.todo_count + 1;
      elsif tg_op = 'DELETE' then
        if old.deleted_at is null then
          update owner_usage set todo_count = todo_count - 1 where owner_id = old.owner_id;
        end if;
      elsif (old.deleted_at is null) <> (new.deleted_at is null) then
        update owner_usage
        set todo_count = todo_count + (case when new.deleted_at is null then 1 else -1 end)
        where owner_id = new.owner_id;
      end if;
      return null;
    end $$
  `.execute(db);
  await sql`drop trigger todos_count_change on todos`.execute(db);
  await sql`
    create trigger todos_count_change after insert or delete or update of deleted_at on todos
    for each row execute function todos_count_change()
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Deleted todos would come back to life without the column: remove them for good (the count
  // triggers still know not to count them).
  await sql`delete from todos where deleted_at is not null`.execute(db);
  if (dialectOf(db) === 'postgres') {
    await sql`drop trigger todos_count_change on todos`.execute(db);
    await sql`drop function todos_count_change()`.execute(db);
  } else {
    await sql`drop trigger todos_count_soft_delete`.execute(db);
    await sql`drop trigger todos_count_delete`.execute(db);
    await sql`drop trigger todos_count_insert`.execute(db);
  }
  await db.schema.dropTable('todo_events').execute();
  await db.schema.alterTable('owner_usage').dropColumn('last_event_seq').execute();
  await db.schema.dropIndex('todos_deleted').execute();
  await rebuildListIndexes(db, false);
  await db.schema.alterTable('todos').dropColumn('deleted_at').execute();
  await createCountTriggers(db);
}
