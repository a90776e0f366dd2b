/**
 * The statements that read or write one todo, each built and compiled by Kysely once (see
 * `preparedQuery`): every GET and every write runs several of them, and building a query cost
 * more than SQLite takes to answer it. `todos.repository.ts` is their one user.
 */

import type { Insertable, Updateable } from 'kysely';
import type { Db } from '../db/database.js';
import { dialectOf } from '../db/dialect.js';
import { preparedQueries, preparedQuery } from '../db/prepared-query.js';
import { LIMITS } from './todo.schemas.js';
import {
  DERIVED_COLUMNS,
  TODO_ROW_COLUMNS,
  type DerivedColumn,
  type NewTodoRow,
  type TodoTable,
} from './todo.table.js';

/** One todo by id, as `findById` reads it: each variant compiled once (see `preparedQuery`). */
function byId(variant: { readonly includeDeleted: boolean; readonly forUpdate: boolean }) {
  return preparedQuery(2, (db: Db, ownerId: string, id: string) => {
    let query = db
      .selectFrom('todos')
      .select(TODO_ROW_COLUMNS)
      .where('owner_id', '=', ownerId)
      .where('id', '=', id);
    if (!variant.includeDeleted) query = query.where('deleted_at', 'is', null);
    return variant.forUpdate && dialectOf(db) === 'postgres' ? query.forUpdate() : query;
  });
}

export const FIND_BY_ID = {
  visible: {
    read: byId({ includeDeleted: false, forUpdate: false }),
    forUpdate: byId({ includeDeleted: false, forUpdate: true }),
  },
  any: {
    read: byId({ includeDeleted: true, forUpdate: false }),
    forUpdate: byId({ includeDeleted: true, forUpdate: true }),
  },
};

/** Every column a new todo stores; `deleted_at` starts null. */
export const INSERT_COLUMNS = [
  ...TODO_ROW_COLUMNS.filter(
    (column): column is Exclude<(typeof TODO_ROW_COLUMNS)[number], 'deleted_at'> =>
      column !== 'deleted_at',
  ),
  ...DERIVED_COLUMNS,
] satisfies readonly (keyof NewTodoRow | DerivedColumn)[];

/** Every column a change rewrites (`TodoRowChanges` but `deleted_at`, plus the derived keys). */
export const UPDATE_COLUMNS = INSERT_COLUMNS.filter(
  (column): column is Exclude<(typeof INSERT_COLUMNS)[number], 'id' | 'owner_id' | 'created_at'> =>
    column !== 'id' && column !== 'owner_id' && column !== 'created_at',
);

/** `{ column: value }` for the columns of a prepared statement, from its positional values. */
function columnValues<C extends string>(
  columns: readonly C[],
  values: readonly unknown[],
): Record<C, unknown> {
  return Object.fromEntries(columns.map((column, i) => [column, values[i]])) as Record<C, unknown>;
}

export const insertTodo = preparedQuery(INSERT_COLUMNS.length, (db: Db, ...values: unknown[]) =>
  db
    .insertInto('todos')
    .values(columnValues(INSERT_COLUMNS, values) as Insertable<TodoTable>)
    .returning(TODO_ROW_COLUMNS),
);

type UpdateColumn = (typeof UPDATE_COLUMNS)[number];

/**
 * The UPDATE of exactly `columns`, then owner and id: one per set of changed columns (a
 * handful in practice).
 */
export const updateOf = preparedQueries(
  128,
  (columns: readonly UpdateColumn[]) => columns.join(),
  (columns) =>
    preparedQuery(columns.length + 2, (db: Db, ...values: unknown[]) =>
      db
        .updateTable('todos')
        .set(columnValues(columns, values) as Updateable<TodoTable>)
        .where('owner_id', '=', values[columns.length] as string)
        .where('id', '=', values[columns.length + 1] as string)
        .returning(TODO_ROW_COLUMNS),
    ),
);

export const setDeletedAt = preparedQuery(
  4,
  (db: Db, deletedAt: string | null, at: string, ownerId: string, id: string) =>
    db
      .updateTable('todos')
      .set((eb) => ({ deleted_at: deletedAt, version: eb('version', '+', 1), updated_at: at }))
      .where('owner_id', '=', ownerId)
      .where('id', '=', id)
      .returning(TODO_ROW_COLUMNS),
);

export const labelKeysOfTodo = preparedQuery(2, (db: Db, id: string, ownerId: string) =>
  db
    .selectFrom('todo_labels')
    .select('label_key')
    .where('todo_id', '=', id)
    .where('owner_id', '=', ownerId),
);

export const todoCountOf = preparedQuery(1, (db: Db, ownerId: string) =>
  db.selectFrom('owner_usage').select('todo_count').where('owner_id', '=', ownerId),
);

export const maxPositionOf = preparedQuery(1, (db: Db, ownerId: string) =>
  db
    .selectFrom('todos')
    .select('position')
    .where('owner_id', '=', ownerId)
    .orderBy('position', 'desc')
    .limit(1),
);

/** One INSERT of `count` label rows (a todo has at most `LIMITS.labels`). */
const labelInsertOf = preparedQueries(
  LIMITS.labels,
  (count: number) => count,
  (count) =>
    preparedQuery(count + 2, (db: Db, ownerId: string, todoId: string, ...keys: string[]) =>
      db
        .insertInto('todo_labels')
        .values(keys.map((key) => ({ owner_id: ownerId, label_key: key, todo_id: todoId }))),
    ),
);

export async function insertLabels(
  db: Db,
  ownerId: string,
  todoId: string,
  keys: readonly string[],
): Promise<void> {
  if (keys.length > 0) await labelInsertOf(keys.length)(db, ownerId, todoId, ...keys);
}
