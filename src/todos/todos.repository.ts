import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Db, Tables } from '../db/database.js';
import type { NewTodoRow, TodoRow, TodoRowUpdate } from './todo.table.js';
import type { TodoStatus } from './todo.schemas.js';

/** Which todos a list or bulk delete covers. Every query is also scoped by owner. */
export interface TodoFilter {
  readonly statuses?: readonly TodoStatus[] | undefined;
  readonly completed?: boolean | undefined;
}

/** Sort-key values of the last row of a page: the next page starts strictly after them. */
export interface TodoKeyset {
  readonly position: number;
  readonly createdAt: string;
  readonly id: string;
}

/** The owner scope and the filter as one condition, shared by list and bulk delete. */
function matching(
  eb: ExpressionBuilder<Tables, 'todos'>,
  ownerId: string,
  filter: TodoFilter,
): Expression<SqlBool> {
  const conditions: Expression<SqlBool>[] = [eb('owner_id', '=', ownerId)];
  if (filter.statuses) conditions.push(eb('status', 'in', filter.statuses));
  if (filter.completed !== undefined) {
    conditions.push(eb('status', filter.completed ? '=' : '!=', 'completed'));
  }
  return eb.and(conditions);
}

/** All SQL over `todos`. Each function takes the database or the caller's transaction. */
export const todosRepository = {
  findById(db: Db, ownerId: string, id: string): Promise<TodoRow | undefined> {
    return db
      .selectFrom('todos')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  async insert(db: Db, row: NewTodoRow): Promise<TodoRow> {
    return db.insertInto('todos').values(row).returningAll().executeTakeFirstOrThrow();
  },

  async update(db: Db, ownerId: string, id: string, changes: TodoRowUpdate): Promise<TodoRow> {
    return db
      .updateTable('todos')
      .set(changes)
      .where('owner_id', '=', ownerId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async delete(db: Db, ownerId: string, id: string): Promise<boolean> {
    const result = await db
      .deleteFrom('todos')
      .where('owner_id', '=', ownerId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  },

  async deleteMatching(db: Db, ownerId: string, filter: TodoFilter): Promise<number> {
    const result = await db
      .deleteFrom('todos')
      .where((eb) => matching(eb, ownerId, filter))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** One page in the default order (`order`, `created_at`, `id`), keyset-paged, never OFFSET. */
  list(
    db: Db,
    ownerId: string,
    query: { filter: TodoFilter; after: TodoKeyset | undefined; limit: number },
  ): Promise<TodoRow[]> {
    const { filter, after, limit } = query;
    let select = db
      .selectFrom('todos')
      .selectAll()
      .where((eb) => matching(eb, ownerId, filter));
    if (after) {
      // A row-value comparison, which both SQLite and PostgreSQL answer from the index.
      select = select.where((eb) =>
        eb(
          eb.refTuple('position', 'created_at', 'id'),
          '>',
          eb.tuple(after.position, after.createdAt, after.id),
        ),
      );
    }
    return select.orderBy('position').orderBy('created_at').orderBy('id').limit(limit).execute();
  },

  async maxOrder(db: Db, ownerId: string): Promise<number | undefined> {
    const row = await db
      .selectFrom('todos')
      .select('position')
      .where('owner_id', '=', ownerId)
      .orderBy('position', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.position;
  },
};
