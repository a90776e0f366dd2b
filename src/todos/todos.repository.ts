import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Selectable,
  type SqlBool,
} from 'kysely';
import type { Db, Tables } from '../db/database.js';
import { dialectOf, type Dialect } from '../db/dialect.js';
import { preparedQueries, preparedQuery } from '../db/prepared-query.js';
import { derivedColumns } from './todo-derived.js';
import { labelKey, priorityRank } from './todo-keys.js';
import type { SortKey, TodoFilter } from './todo-list-query.js';
import { matchesSearch } from './todo-search.js';
import {
  FIND_BY_ID,
  INSERT_COLUMNS,
  UPDATE_COLUMNS,
  insertLabels,
  insertTodo,
  labelKeysOfTodo,
  maxPositionOf,
  setDeletedAt,
  todoCountOf,
  updateOf,
} from './todo-statements.js';
import type { SortField } from './todo.schemas.js';
import {
  DUE_KEY_NONE,
  LISTED_TODO_COLUMNS,
  TODO_ROW_COLUMNS,
  type ListedTodoRow,
  type NewTodoRow,
  type TodoRow,
  type TodoRowChanges,
  type TodoTable,
} from './todo.table.js';

/** Columns a list can be ordered by: one per sort key and direction, then `id`. */
type OrderColumn =
  | 'position'
  | 'created_at'
  | 'updated_at'
  | 'due_asc_key'
  | 'due_desc_key'
  | 'priority_rank'
  | 'title_key'
  | 'status_rank'
  | 'id';

interface Ordering {
  readonly column: OrderColumn;
  readonly descending: boolean;
}

/** A sort key's value in a keyset (see `TodoKeyset`). */
export type KeysetValue = string | number;
/** Sort-key values of the last row of a page, `id` last: the next page starts after them. */
export type TodoKeyset = readonly KeysetValue[];

export interface ListQuery {
  readonly filter: TodoFilter;
  readonly sort: readonly SortKey[];
  readonly after: TodoKeyset | undefined;
  readonly limit: number;
}

/** Every API sort key orders by one column, which has an index (migration 0004). */
const SORT_COLUMNS: Readonly<
  Record<SortField, OrderColumn | { asc: OrderColumn; desc: OrderColumn }>
> = {
  order: 'position',
  created_at: 'created_at',
  updated_at: 'updated_at',
  // Two columns, so that todos without a due come last in both directions.
  due_at: { asc: 'due_asc_key', desc: 'due_desc_key' },
  priority: 'priority_rank',
  title: 'title_key',
  status: 'status_rank',
};

/** Bounds of real due keys: every `dueMoment` starts with a digit; the sentinels fall outside. */
const DUE_KEY_MIN = '0';

/** The ORDER BY of a sort: its keys' columns, then `id` in the direction of the last key. */
function orderingOf(sort: readonly SortKey[]): Ordering[] {
  const columns = sort.map(({ field, descending }): Ordering => {
    const column = SORT_COLUMNS[field];
    return {
      column: typeof column === 'string' ? column : descending ? column.desc : column.asc,
      descending,
    };
  });
  // Same direction as the last key, so that one index walk (forwards or backwards) serves it.
  return [...columns, { column: 'id', descending: sort.at(-1)?.descending ?? false }];
}

function labelKeysOf(labelsJson: string): string[] {
  return [...new Set((JSON.parse(labelsJson) as string[]).map(labelKey))];
}

/** Columns whose index use the list controls: the order columns and `status`. */
type FilterColumn = OrderColumn | 'status';

/** Columns that hold numbers; the others hold text. */
const NUMERIC_COLUMNS: ReadonlySet<FilterColumn> = new Set([
  'position',
  'priority_rank',
  'status_rank',
]);

/**
 * Whether filters hide columns from the planner in `unindexed` forms. SQLite needs it (see
 * `matching`). PostgreSQL weighs plans by column statistics, which an expression hides: it then
 * expects a handful of matches and sorts all the owner's rows rather than walk the sort index
 * (test/query-plans.postgres.test.ts).
 */
const HIDES_FILTER_COLUMNS: Readonly<Record<Dialect, boolean>> = { sqlite: true, postgres: false };

/**
 * Whether text can hold U+0000. PostgreSQL's cannot and refuses a parameter with one, so a
 * label filter with one — which no stored label can match — must not reach it.
 */
const TEXT_HOLDS_NUL: Readonly<Record<Dialect, boolean>> = { sqlite: true, postgres: false };

/** `column` in a form no index serves (see `matching`), comparing exactly as the column does. */
function unindexed(column: FilterColumn, dialect: Dialect) {
  if (!HIDES_FILTER_COLUMNS[dialect]) return sql`${sql.ref(column)}`;
  return NUMERIC_COLUMNS.has(column) ? sql`${sql.ref(column)} + 0` : sql`${sql.ref(column)} || ''`;
}

type Eb = ExpressionBuilder<Tables, 'todos'>;

/**
 * The owner scope and the filter as one condition, shared by list, count and bulk delete.
 * Deleted todos never match unless the filter includes them.
 *
 * With an `ordering`, a list must walk that ordering's index: a filter on another indexed
 * column could tempt the planner into reading a range of that index and then sorting every
 * match, which a list must never do. Such columns are compared in an `unindexed` form, unless
 * their index also yields the order (a range on the leading sort column, one status in the
 * default order). Without an ordering (count, delete) every index is fair game.
 */
function matching(
  eb: Eb,
  dialect: Dialect,
  ownerId: string,
  filter: TodoFilter,
  ordering?: readonly Ordering[],
): Expression<SqlBool> {
  const unordered = ordering === undefined;
  const leading = ordering?.[0]?.column;
  /** The column as indexes may use it when `usable`, else in its unindexed form. */
  const ref = <T extends string | number>(column: FilterColumn, usable: boolean) =>
    usable ? sql<T>`${sql.ref(column)}` : sql<T>`${unindexed(column, dialect)}`;
  const leads = (column: FilterColumn) => unordered || column === leading;
  // The status index continues with the default order, so it serves one status in that order.
  const statusIndexServes =
    unordered ||
    (ordering.map((o) => o.column).join() === 'position,created_at,id' &&
      ordering.every((o) => o.descending === ordering[0]?.descending));

  const conditions: Expression<SqlBool>[] = [eb('owner_id', '=', ownerId)];
  if (filter.includeDeleted !== true) conditions.push(eb('deleted_at', 'is', null));
  const { statuses, completed, priorities, overdue } = filter;

  if (statuses) {
    const usable = unordered || (statuses.length === 1 && statusIndexServes);
    conditions.push(eb(ref<string>('status', usable), 'in', statuses));
  }
  if (completed !== undefined) {
    conditions.push(
      completed
        ? eb(ref<string>('status', statusIndexServes), '=', 'completed')
        : eb('status', '!=', 'completed'),
    );
  }
  if (priorities) {
    // By rank, so that a count reads the priority index alone. In a list, an IN list on the
    // leading column next to the keyset's row-value bound makes SQLite give up the index order
    // (measured), so only a single value may use the index there.
    const usable = unordered || (priorities.length === 1 && leads('priority_rank'));
    conditions.push(eb(ref<number>('priority_rank', usable), 'in', priorities.map(priorityRank)));
  }
  const storable = (key: string) => TEXT_HOLDS_NUL[dialect] || !key.includes('\0');
  for (const key of filter.allLabels ?? []) {
    conditions.push(storable(key) ? hasLabel(eb, ownerId, [key]) : sql<SqlBool>`1 = 0`);
  }
  if (filter.anyLabels) {
    const keys = filter.anyLabels.filter(storable);
    conditions.push(keys.length > 0 ? hasLabel(eb, ownerId, keys) : sql<SqlBool>`1 = 0`);
  }

  // Due ranges compare one due key column with [lower, upper); missing dues fall outside.
  const dueBefore =
    overdue?.value === true && (filter.dueBefore === undefined || overdue.now < filter.dueBefore)
      ? overdue.now
      : filter.dueBefore;
  if (dueBefore !== undefined || filter.dueAfter !== undefined) {
    const column = leading === 'due_desc_key' ? 'due_desc_key' : 'due_asc_key';
    const due = ref<string>(column, leads(column));
    conditions.push(eb(due, '>=', filter.dueAfter ?? DUE_KEY_MIN));
    conditions.push(eb(due, '<', dueBefore ?? DUE_KEY_NONE.asc));
  }
  if (overdue?.value === true) {
    conditions.push(eb(ref<string>('status', unordered), 'not in', ['completed', 'cancelled']));
  } else if (overdue?.value === false) {
    // `due_asc_key` of a todo without a due sorts after every date, so it is "not overdue".
    conditions.push(
      eb.or([
        eb(ref<string>('due_asc_key', unordered), '>=', overdue.now),
        eb(ref<string>('status', unordered), 'in', ['completed', 'cancelled']),
      ]),
    );
  }
  const created = ref<string>('created_at', leads('created_at'));
  if (filter.createdAfter !== undefined) conditions.push(eb(created, '>=', filter.createdAfter));
  if (filter.createdBefore !== undefined) conditions.push(eb(created, '<', filter.createdBefore));
  if (filter.updatedSince !== undefined) {
    conditions.push(eb(ref<string>('updated_at', leads('updated_at')), '>=', filter.updatedSince));
  }
  if (filter.search !== undefined) {
    conditions.push(matchesSearch(filter.search, dialect, { ordered: !unordered }));
  }
  return eb.and(conditions);
}

/** The todo has one of `keys` (a probe of `todo_labels` per todo, by its index). */
function hasLabel(eb: Eb, ownerId: string, keys: readonly string[]): Expression<SqlBool> {
  return eb.exists(
    eb
      .selectFrom('todo_labels')
      .select(sql.lit(1).as('one'))
      .whereRef('todo_labels.todo_id', '=', 'todos.id')
      .where('todo_labels.owner_id', '=', ownerId)
      .where('todo_labels.label_key', 'in', keys),
  );
}

/**
 * Rows strictly after `keyset` in `ordering`. One direction throughout: a row-value comparison,
 * which both SQLite and PostgreSQL answer with one index seek. Mixed directions: a bound on the
 * first column, which the index seeks, and the exact condition
 * `a > x OR (a = x AND (b < y OR (b = y AND …)))` over unindexed forms of the columns (else
 * SQLite answers the OR from several indexes and sorts all of it).
 */
function after(
  ordering: readonly Ordering[],
  keyset: TodoKeyset,
  dialect: Dialect,
): Expression<SqlBool> {
  const op = (descending: boolean) => sql.raw(descending ? '<' : '>');
  const first = ordering[0];
  if (first && ordering.every((o) => o.descending === first.descending)) {
    return sql<SqlBool>`(${sql.join(ordering.map((o) => sql.ref(o.column)))}) ${op(first.descending)} (${sql.join([...keyset])})`;
  }
  const expand = (index: number): Expression<SqlBool> => {
    const { column, descending } = ordering[index] as Ordering;
    const strictly = sql<SqlBool>`${unindexed(column, dialect)} ${op(descending)} ${keyset[index]}`;
    if (index === ordering.length - 1) return strictly;
    return sql<SqlBool>`(${strictly} or (${unindexed(column, dialect)} = ${keyset[index]} and ${expand(index + 1)}))`;
  };
  const { column, descending } = first as Ordering;
  return sql<SqlBool>`${sql.ref(column)} ${sql.raw(descending ? '<=' : '>=')} ${keyset[0]} and ${expand(0)}`;
}

/** What shapes a list statement: everything but the owner, the limit and the keyset's values. */
interface ListShape {
  readonly filter: TodoFilter;
  readonly sort: readonly SortKey[];
  readonly keysetLength: number;
}

/** Most list statements kept compiled: each filter value (a `q`, a date) makes a shape. */
const LIST_SHAPES_KEPT = 256;

/**
 * The list statement of a shape, built and compiled once (see `preparedQuery`): building and
 * compiling it took longer than SQLite takes to read a page (measured: 31 µs for the default
 * list, 40 µs filtered and sorted).
 */
const listOf = preparedQueries(
  LIST_SHAPES_KEPT,
  (shape: ListShape) => JSON.stringify(shape),
  ({ filter, sort, keysetLength }) =>
    preparedQuery(
      2 + keysetLength,
      (db: Db, ownerId: string, limit: number, ...keyset: KeysetValue[]) =>
        todosRepository.listQuery(db, ownerId, {
          filter,
          sort,
          after: keysetLength > 0 ? keyset : undefined,
          limit,
        }),
    ),
);

/**
 * All SQL over `todos` and its derived tables. Each function takes the database or the caller's
 * transaction; derived columns and label rows are written in the same one as the todo.
 */
export const todosRepository = {
  /**
   * One todo, unless it is deleted (`includeDeleted`: also then). `forUpdate` locks its row on
   * PostgreSQL (SQLite serializes writes anyway).
   */
  async findById(
    db: Db,
    ownerId: string,
    id: string,
    options: { readonly forUpdate?: boolean; readonly includeDeleted?: boolean } = {},
  ): Promise<TodoRow | undefined> {
    const find = FIND_BY_ID[options.includeDeleted === true ? 'any' : 'visible'];
    const [row] = await find[options.forUpdate === true ? 'forUpdate' : 'read'](db, ownerId, id);
    return row;
  },

  /** The owner's todos among `ids`, deleted ones included, in no particular order. */
  async findByIds(db: Db, ownerId: string, ids: readonly string[]): Promise<TodoRow[]> {
    if (ids.length === 0) return [];
    return db
      .selectFrom('todos')
      .select(TODO_ROW_COLUMNS)
      .where('owner_id', '=', ownerId)
      .where('id', 'in', ids)
      .execute();
  },

  async insert(db: Db, row: NewTodoRow): Promise<TodoRow> {
    const stored = { ...row, ...derivedColumns(row) };
    const [inserted] = await insertTodo(
      db,
      ...INSERT_COLUMNS.map((column) => stored[column] ?? null),
    );
    if (!inserted) throw new Error('insert returned no row');
    await insertLabels(db, row.owner_id, row.id, labelKeysOf(row.labels));
    return inserted;
  },

  /**
   * Stores `changes` over the todo, which held `before`. Only the columns whose value differs
   * are written: SQLite rewrites the entries of every index on a column the UPDATE assigns,
   * changed or not (measured: a title change costs 23 µs this way against 39 µs assigning all).
   */
  async update(
    db: Db,
    ownerId: string,
    id: string,
    changes: TodoRowChanges,
    before: TodoRowChanges,
  ): Promise<TodoRow> {
    const stored = { ...changes, ...derivedColumns(changes) };
    const previous = { ...before, ...derivedColumns(before) };
    const columns = UPDATE_COLUMNS.filter(
      (column) => (stored[column] ?? null) !== (previous[column] ?? null),
    );
    const values = columns.map((column) => stored[column] ?? null);
    const [row] = await updateOf(columns)(db, ...values, ownerId, id);
    if (!row) throw new Error('update found no row');
    if (changes.labels === before.labels) return row;
    // Rewrite only the label rows that changed.
    const storedKeys = (await labelKeysOfTodo(db, id, ownerId)).map((r) => r.label_key);
    const wanted = labelKeysOf(changes.labels);
    const removed = storedKeys.filter((key) => !wanted.includes(key));
    const added = wanted.filter((key) => !storedKeys.includes(key));
    if (removed.length > 0) {
      await db
        .deleteFrom('todo_labels')
        .where('todo_id', '=', id)
        .where('owner_id', '=', ownerId)
        .where('label_key', 'in', removed)
        .execute();
    }
    await insertLabels(db, ownerId, id, added);
    return row;
  },

  /**
   * Marks a todo deleted (`deletedAt`) or restores it (`null`), as a change: version + 1,
   * `updated_at` = `at`. Its label rows and search entry stay, for a restore.
   */
  async setDeleted(
    db: Db,
    ownerId: string,
    id: string,
    deletedAt: string | null,
    at: string,
  ): Promise<TodoRow> {
    const [row] = await setDeletedAt(db, deletedAt, at, ownerId, id);
    if (!row) throw new Error('setDeleted found no row');
    return row;
  },

  /** The statement `deleteMatching` runs (exposed so that tests can EXPLAIN it). */
  deleteMatchingQuery(db: Db, ownerId: string, filter: TodoFilter, at: string) {
    return db
      .updateTable('todos')
      .set((eb) => ({ deleted_at: at, version: eb('version', '+', 1), updated_at: at }))
      .where((eb) => matching(eb, dialectOf(db), ownerId, filter))
      .returning(TODO_ROW_COLUMNS);
  },

  /**
   * Locks every todo matching `filter` (PostgreSQL; SQLite serializes writes anyway), in id
   * order, before a bulk change touches the owner's row.
   */
  async lockMatching(db: Db, ownerId: string, filter: TodoFilter): Promise<void> {
    if (dialectOf(db) !== 'postgres') return;
    await db
      .selectFrom('todos')
      .select('id')
      .where((eb) => matching(eb, dialectOf(db), ownerId, filter))
      .orderBy('id')
      .forUpdate()
      .execute();
  },

  /** Marks every todo matching `filter` deleted at `at`, as `setDeleted` does; returns them. */
  deleteMatching(db: Db, ownerId: string, filter: TodoFilter, at: string): Promise<TodoRow[]> {
    return todosRepository.deleteMatchingQuery(db, ownerId, filter, at).execute();
  },

  /**
   * Removes for good up to `batch` todos deleted before `cutoff`, of every owner. Label rows and
   * the search index follow by cascade and trigger (migrations 0005, 0006).
   */
  async purgeDeleted(db: Db, cutoff: string, batch: number): Promise<number> {
    const result = await db
      .deleteFrom('todos')
      .where('id', 'in', (eb) =>
        eb.selectFrom('todos').select('id').where('deleted_at', '<', cutoff).limit(batch),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** The statement `list` runs (exposed so that tests can EXPLAIN it). */
  listQuery(db: Db, ownerId: string, query: ListQuery) {
    const ordering = orderingOf(query.sort);
    // The todo's JSON parts, plus the sort's key columns that the cursor of the next page needs.
    const keyColumns = ordering
      .map(({ column }) => column)
      .filter((column) => !(LISTED_TODO_COLUMNS as readonly string[]).includes(column));
    let select = db
      .selectFrom('todos')
      .select([...LISTED_TODO_COLUMNS, ...keyColumns])
      .where((eb) => matching(eb, dialectOf(db), ownerId, query.filter, ordering));
    if (query.after) select = select.where(after(ordering, query.after, dialectOf(db)));
    for (const { column, descending } of ordering) {
      select = select.orderBy(column, descending ? 'desc' : 'asc');
    }
    return select.limit(query.limit);
  },

  /** One page in `sort` order, keyset-paged (never OFFSET), served by the sort's index. */
  list(db: Db, ownerId: string, query: ListQuery): Promise<ListedTodoRow[]> {
    // `overdue` compares with the clock, which makes each such query a shape of its own.
    if (query.filter.overdue) return todosRepository.listQuery(db, ownerId, query).execute();
    const keyset = query.after ?? [];
    return listOf({ filter: query.filter, sort: query.sort, keysetLength: keyset.length })(
      db,
      ownerId,
      query.limit,
      ...keyset,
    );
  },

  /** The values `list` pages by, from a row it returned: the next page's `after`. */
  keysetOf(
    row: Partial<Pick<Selectable<TodoTable>, OrderColumn>>,
    sort: readonly SortKey[],
  ): TodoKeyset {
    return orderingOf(sort).map(({ column }) => {
      const value = row[column];
      if (value === undefined) throw new Error(`list did not select the sort column ${column}`);
      return value;
    });
  },

  /** How many values `keysetOf` gives for `sort`: a cursor must carry exactly these. */
  keysetLength(sort: readonly SortKey[]): number {
    return sort.length + 1;
  },

  /** The statement `count` runs (exposed so that tests can EXPLAIN it). */
  countQuery(db: Db, ownerId: string, filter: TodoFilter) {
    return db
      .selectFrom('todos')
      .select((eb) => eb.fn.countAll<number | bigint>().as('count'))
      .where((eb) => matching(eb, dialectOf(db), ownerId, filter));
  },

  /** Rows matching `filter`, regardless of paging (`Prefer: count=exact`). */
  async count(db: Db, ownerId: string, filter: TodoFilter): Promise<number> {
    const row = await todosRepository.countQuery(db, ownerId, filter).executeTakeFirstOrThrow();
    return Number(row.count);
  },

  /**
   * Holds the owner's `owner_usage` row until the end of the caller's write transaction, so
   * that the quota counts exactly under concurrent creates and restores. (Every write also
   * takes it at its end, when its events are numbered: so event numbers commit in order.)
   * SQLite serializes writes anyway; PostgreSQL locks the row (created first if missing, so
   * that two first writes cannot both see none).
   */
  async lockOwner(db: Db, ownerId: string): Promise<void> {
    if (dialectOf(db) !== 'postgres') return;
    await db
      .insertInto('owner_usage')
      .values({ owner_id: ownerId, todo_count: 0 })
      .onConflict((oc) => oc.column('owner_id').doNothing())
      .execute();
    await db
      .selectFrom('owner_usage')
      .select('owner_id')
      .where('owner_id', '=', ownerId)
      .forUpdate()
      .execute();
  },

  /** Todos the owner keeps (not deleted), from the trigger-maintained `owner_usage` row. */
  async todoCount(db: Db, ownerId: string): Promise<number> {
    const [row] = await todoCountOf(db, ownerId);
    return row?.todo_count ?? 0;
  },

  async maxOrder(db: Db, ownerId: string): Promise<number | undefined> {
    const [row] = await maxPositionOf(db, ownerId);
    return row?.position;
  },
};
