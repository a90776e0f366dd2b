import type { Generated, Insertable, Selectable, Updateable } from 'kysely';
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
  version: Generated<number>;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export type TodoRow = Selectable<TodoTable>;
export type NewTodoRow = Insertable<TodoTable>;
export type TodoRowUpdate = Updateable<TodoTable>;
