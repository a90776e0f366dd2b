import type { Kysely } from 'kysely';
import { FIELD_COLUMNS, fieldsJsonOf } from '../../todos/todo-json.js';
import type { Db } from '../database.js';
import { inTransaction } from '../dialect.js';
import { preparedQuery } from '../prepared-query.js';

/**
 * Each todo keeps its API JSON members `title` … `metadata` as text (`todos.fields_json`), which
 * a list reads and splices instead of reading the columns they come from and serializing each
 * todo (see `todo-json.ts`). Existing todos are filled in here by `fieldsJsonOf`, the function
 * the repository uses on every write, as migration 0004 does for the sort keys.
 *
 * A later change to what those members hold needs a migration that fills the column again.
 */

const BACKFILL_BATCH = 1000;

const setFieldsJson = preparedQuery(2, (db: Db, fieldsJson: string, id: string) =>
  db.updateTable('todos').set({ fields_json: fieldsJson }).where('id', '=', id),
);

export async function up(db: Kysely<unknown>): Promise<void> {
  await inTransaction(db, async (trx) => {
    const todos = trx as unknown as Db;
    // The default only lets the column be added to a table with rows; every write sets it.
    await todos.schema
      .alterTable('todos')
      .addColumn('fields_json', 'text', (col) => col.notNull().defaultTo(''))
      .execute();
    // Keyset over id, so that each batch is one index seek whatever the table size.
    let after = '';
    for (;;) {
      const rows = await todos
        .selectFrom('todos')
        .select(['id', ...FIELD_COLUMNS])
        .where('id', '>', after)
        .orderBy('id')
        .limit(BACKFILL_BATCH)
        .execute();
      for (const row of rows) await setFieldsJson(todos, fieldsJsonOf(row), row.id);
      const last = rows.at(-1);
      if (!last || rows.length < BACKFILL_BATCH) break;
      after = last.id;
    }
  });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('todos').dropColumn('fields_json').execute();
}
