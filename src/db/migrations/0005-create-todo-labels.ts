import type { Kysely } from 'kysely';
import { inTransaction } from '../dialect.js';
import { labelKey } from '../../todos/todo-keys.js';

/**
 * One row per (todo, label key) for the `labels` and `labels_any` filters: a todo's labels live
 * in a JSON column, which no index can search. The repository keeps these rows in step with
 * the JSON in the same transaction as every write; deleting a todo cascades.
 */

// ≤ 20 labels a todo: at most 6,000 bound values per insert.
const BACKFILL_BATCH = 100;

interface Tables {
  todos: { id: string; owner_id: string; labels: string };
  todo_labels: { owner_id: string; label_key: string; todo_id: string };
}

export async function up(untyped: Kysely<unknown>): Promise<void> {
  const db = untyped as Kysely<Tables>;
  await inTransaction(db, async (trx) => {
    await trx.schema
      .createTable('todo_labels')
      .addColumn('owner_id', 'text', (col) => col.notNull())
      .addColumn('label_key', 'text', (col) => col.notNull())
      .addColumn('todo_id', 'text', (col) =>
        col.notNull().references('todos.id').onDelete('cascade'),
      )
      .addPrimaryKeyConstraint('todo_labels_pk', ['owner_id', 'label_key', 'todo_id'])
      .execute();
    // Rewriting or cascading one todo's labels looks its rows up by todo.
    await trx.schema
      .createIndex('todo_labels_todo')
      .on('todo_labels')
      .columns(['todo_id', 'owner_id', 'label_key'])
      .execute();

    let after = '';
    for (;;) {
      const rows = await trx
        .selectFrom('todos')
        .select(['id', 'owner_id', 'labels'])
        .where('id', '>', after)
        .orderBy('id')
        .limit(BACKFILL_BATCH)
        .execute();
      const labelRows = rows.flatMap((row) =>
        [...new Set((JSON.parse(row.labels) as string[]).map(labelKey))].map((key) => ({
          owner_id: row.owner_id,
          label_key: key,
          todo_id: row.id,
        })),
      );
      if (labelRows.length > 0) await trx.insertInto('todo_labels').values(labelRows).execute();
      const last = rows.at(-1);
      if (!last || rows.length < BACKFILL_BATCH) break;
      after = last.id;
    }
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('todo_labels').execute();
}
