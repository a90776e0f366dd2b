import type { Todo } from './todo.schemas.js';
import type { ListedTodoRow, TodoRow } from './todo.table.js';
import { todoUrl } from './todo-url.js';

/**
 * A todo's JSON, assembled from stored text. Lists read each todo's members `title` …
 * `metadata` as one stored column (`fields_json`, migration 0013) and put the rest around it,
 * instead of reading sixteen columns and serializing the objects: 1.4–1.8× the list requests
 * per second. Every other answer goes through `todoRowToTodo` and the response schema.
 */

/** The stored columns the members `title` … `metadata` come from. */
export interface FieldColumns {
  readonly title: string;
  readonly description?: string | null | undefined;
  readonly status: TodoRow['status'];
  readonly completed_at?: string | null | undefined;
  readonly priority: TodoRow['priority'];
  readonly position: number;
  /** JSON array of strings. */
  readonly labels: string;
  readonly due_date?: string | null | undefined;
  readonly due_at?: string | null | undefined;
  /** JSON object of string values. */
  readonly metadata: string;
}

/** The columns of `FieldColumns`, for a query that reads what `fieldsJsonOf` needs. */
export const FIELD_COLUMNS = [
  'title',
  'description',
  'status',
  'completed_at',
  'priority',
  'position',
  'labels',
  'due_date',
  'due_at',
  'metadata',
] as const satisfies readonly (keyof FieldColumns)[];

/** The members of `Todo` that `fields_json` holds, in the schema's order. */
export type FieldMembers = Omit<
  Todo,
  'id' | 'url' | 'version' | 'created_at' | 'updated_at' | 'deleted_at'
>;

/** The members `title` … `metadata`: what a write sets, plus `completed` and `completed_at`. */
export function fieldMembersOf(row: FieldColumns): FieldMembers {
  return {
    title: row.title,
    description: row.description ?? null,
    status: row.status,
    completed: row.status === 'completed',
    completed_at: row.completed_at ?? null,
    priority: row.priority,
    order: row.position,
    labels: JSON.parse(row.labels) as string[],
    due_date: row.due_date ?? null,
    due_at: row.due_at ?? null,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
  };
}

/**
 * The stored `fields_json`: the members `title` … `metadata` as JSON text without the braces.
 * Only the repository writes it, from the same columns it stores, so it cannot drift from them.
 */
export function fieldsJsonOf(row: FieldColumns): string {
  return JSON.stringify(fieldMembersOf(row)).slice(1, -1);
}

/**
 * A page of todos as the JSON array the API sends: each is `{"id","url",` + `fields_json` +
 * `"version","created_at","updated_at","deleted_at"}`, the order of `TodoSchema`. The members
 * around `fields_json` are the ones a delete or restore changes without rewriting it.
 *
 * Only the base URL is escaped. Ids (UUIDv7) and timestamps (`toISOString()`) are made by the
 * service and hold no character JSON escapes: quoting them with `JSON.stringify` took 28 of the
 * 32 µs a 50-todo page cost.
 */
export function listedTodosJson(rows: readonly ListedTodoRow[], baseUrl: string): string {
  // `"http://host/api/todos/` — the url of each todo without its id and closing quote.
  const urlPrefix = JSON.stringify(todoUrl(baseUrl, '')).slice(0, -1);
  let json = '[';
  for (const row of rows) {
    if (json.length > 1) json += ',';
    json +=
      `{"id":"${row.id}","url":${urlPrefix}${row.id}",${row.fields_json},` +
      `"version":${row.version},"created_at":"${row.created_at}",` +
      `"updated_at":"${row.updated_at}","deleted_at":` +
      (row.deleted_at === null ? 'null}' : `"${row.deleted_at}"}`);
  }
  return `${json}]`;
}
