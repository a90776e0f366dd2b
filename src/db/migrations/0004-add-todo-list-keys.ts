import type { Kysely } from 'kysely';
import { inTransaction } from '../dialect.js';
import { dueMoment, priorityRank, statusRank, titleKey } from '../../todos/todo-keys.js';
import type { TodoPriority, TodoStatus } from '../../todos/todo.schemas.js';
import { DUE_KEY_NONE } from '../../todos/todo.table.js';

/**
 * Derived columns and one index per sort key, so that every list sort is an index walk: see
 * "Listing" in the README. The keys are computed in TypeScript (the title key needs Unicode
 * case folding), by the same functions the repository uses on every write.
 */

const BACKFILL_BATCH = 500;

interface KeySource {
  id: string;
  title: string;
  status: TodoStatus;
  priority: TodoPriority;
  due_date: string | null;
  due_at: string | null;
}

interface Todos {
  todos: KeySource & {
    priority_rank: number;
    status_rank: number;
    title_key: string;
    due_asc_key: string;
    due_desc_key: string;
  };
}

/**
 * Sort indexes: the owner, then the key, then `id`, the final tie-break of every sort. The
 * ascending due index also carries `status`, so that `overdue` can be counted from it alone.
 */
const SORT_INDEXES: Readonly<Record<string, readonly string[]>> = {
  todos_owner_position: ['position', 'id'],
  todos_owner_created: ['created_at', 'id'],
  todos_owner_updated: ['updated_at', 'id'],
  todos_owner_due_asc: ['due_asc_key', 'id', 'status'],
  todos_owner_due_desc: ['due_desc_key', 'id'],
  todos_owner_priority: ['priority_rank', 'id'],
  todos_owner_title: ['title_key', 'id'],
  todos_owner_status_rank: ['status_rank', 'id'],
};

export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped as Kysely<Todos>;
  await inTransaction(db, async (trx) => {
    await trx.schema
      .alterTable('todos')
      .addColumn('priority_rank', 'integer', (col) => col.notNull().defaultTo(0))
      .execute();
    await trx.schema
      .alterTable('todos')
      .addColumn('status_rank', 'integer', (col) => col.notNull().defaultTo(0))
      .execute();
    await trx.schema
      .alterTable('todos')
      .addColumn('title_key', 'text', (col) => col.notNull().defaultTo(''))
      .execute();
    await trx.schema
      .alterTable('todos')
      .addColumn('due_asc_key', 'text', (col) => col.notNull().defaultTo(DUE_KEY_NONE.asc))
      .execute();
    await trx.schema
      .alterTable('todos')
      .addColumn('due_desc_key', 'text', (col) => col.notNull().defaultTo(DUE_KEY_NONE.desc))
      .execute();

    // Keyset over id, so that each batch is one index seek whatever the table size.
    let after = '';
    for (;;) {
      const rows = await trx
        .selectFrom('todos')
        .select(['id', 'title', 'status', 'priority', 'due_date', 'due_at'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(BACKFILL_BATCH)
        .execute();
      for (const row of rows) {
        const due = dueMoment(row.due_date, row.due_at);
        await trx
          .updateTable('todos')
          .set({
            priority_rank: priorityRank(row.priority),
            status_rank: statusRank(row.status),
            title_key: titleKey(row.title),
            due_asc_key: due ?? DUE_KEY_NONE.asc,
            due_desc_key: due ?? DUE_KEY_NONE.desc,
          })
          .where('id', '=', row.id)
          .execute();
      }
      const last = rows.at(-1);
      if (!last || rows.length < BACKFILL_BATCH) break;
      after = last.id;
    }

    for (const [name, columns] of Object.entries(SORT_INDEXES)) {
      await trx.schema
        .createIndex(name)
        .on('todos')
        .columns(['owner_id', ...columns])
        .execute();
    }
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of Object.keys(SORT_INDEXES)) {
    await db.schema.dropIndex(name).execute();
  }
  for (const column of [
    'due_desc_key',
    'due_asc_key',
    'title_key',
    'status_rank',
    'priority_rank',
  ]) {
    await db.schema.alterTable('todos').dropColumn(column).execute();
  }
}
