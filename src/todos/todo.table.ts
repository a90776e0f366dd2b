import type { Insertable, Selectable } from 'kysely';
import type { TodoPriority, TodoStatus } from './todo.schemas.js';

/**
 * The `todos` row as stored. It differs from the API object on purpose: `position` is the API's
 * `order` (a reserved word in SQL), `labels` and `metadata` are JSON text, `owner_id` never
 * leaves the server. `todoRowToTodo` in the service is the one mapper between the two.
 */
export interface TodoTable {
  id: string;
  owner_id: string;
  title: string;
  description: string | null;
  status: TodoStatus;
  priority: TodoPriority;
  position: number;
  /** JSON array of strings. */
  labels: string;
  due_date: string | null;
  /** UTC, ISO 8601 with milliseconds: sorts as text. */
  due_at: string | null;
  /** JSON object of string values. */
  metadata: string;
  version: number;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
  /** Set while the todo is deleted (restorable until the purge removes it), else null. */
  deleted_at: string | null;
  // Derived columns (migration 0004): written only by the repository, from the fields above,
  // so that an index can serve every filter and sort of the list.
  /** `priorityRank(priority)`. */
  priority_rank: number;
  /** `statusRank(status)`. */
  status_rank: number;
  /** `titleKey(title)`. */
  title_key: string;
  /** `dueMoment(…)`, or `DUE_KEY_NONE.asc` (after every date) when there is no due. */
  due_asc_key: string;
  /** `dueMoment(…)`, or `DUE_KEY_NONE.desc` (before every date) when there is no due. */
  due_desc_key: string;
  /**
   * `fieldsJsonOf(…)` (migration 0013): the API JSON members `title` … `metadata`, which a list
   * reads instead of the columns they come from.
   */
  fields_json: string;
  // SQLite also has `search_key` (migration 0012), set by a trigger and read only by the SQL of
  // `todo-search.ts`; it is left out here so that no row type claims it.
}

/**
 * `due_asc_key`/`due_desc_key` of a todo without a due: one sorts after and one before every
 * date (they start with a digit), so that "no due" comes last in both directions.
 */
export const DUE_KEY_NONE = { asc: '~', desc: '' } as const;

/** One row per (todo, label), keyed case-insensitively: the label filters' index. */
export interface TodoLabelTable {
  owner_id: string;
  /** `labelKey(label)`. */
  label_key: string;
  todo_id: string;
}

/** The derived key columns (migration 0004). */
export const KEY_COLUMNS = [
  'priority_rank',
  'status_rank',
  'title_key',
  'due_asc_key',
  'due_desc_key',
] as const satisfies readonly (keyof TodoTable)[];
export type KeyColumn = (typeof KEY_COLUMNS)[number];

/** Columns that only the repository writes, from the fields they derive from. */
export const DERIVED_COLUMNS = [
  ...KEY_COLUMNS,
  'fields_json',
] as const satisfies readonly (keyof TodoTable)[];
export type DerivedColumn = (typeof DERIVED_COLUMNS)[number];

/** A row as the service reads it: the stored fields, without the derived columns. */
export type TodoRow = Omit<Selectable<TodoTable>, DerivedColumn>;

/** What a list reads of each todo: its JSON's parts (see `listedTodosJson`). */
export const LISTED_TODO_COLUMNS = [
  'id',
  'fields_json',
  'version',
  'created_at',
  'updated_at',
  'deleted_at',
] as const satisfies readonly (keyof TodoTable)[];
/** A listed row also carries the key columns of its sort, for the next page's cursor. */
export type ListedTodoRow = Pick<Selectable<TodoTable>, (typeof LISTED_TODO_COLUMNS)[number]> &
  Partial<Pick<Selectable<TodoTable>, 'position' | KeyColumn>>;

/**
 * The columns of `TodoRow`. Reads name them instead of `select *`: materialising the derived
 * keys and `owner_id` as JS strings was a measurable share of a list request.
 */
export const TODO_ROW_COLUMNS = [
  'id',
  'owner_id',
  'title',
  'description',
  'status',
  'priority',
  'position',
  'labels',
  'due_date',
  'due_at',
  'metadata',
  'version',
  'completed_at',
  'created_at',
  'updated_at',
  'deleted_at',
] as const satisfies readonly (keyof TodoRow)[];
/** What callers store; the repository adds the derived columns. */
export type NewTodoRow = Omit<Insertable<TodoTable>, DerivedColumn>;
/** Every mutable column at once, so that the derived columns can always be recomputed. */
export type TodoRowChanges = Omit<NewTodoRow, 'id' | 'owner_id' | 'created_at'>;
