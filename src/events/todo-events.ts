import { isDeepStrictEqual } from 'node:util';
import type { Todo, TodoStatus } from '../todos/todo.schemas.js';
import { todoUrl } from '../todos/todo-url.js';
import type { TodoEventRow } from './todo-event.table.js';
import type { TodoEvent } from './todo-event.schemas.js';
import type { TodoEventType } from './todo-event-types.js';

/**
 * The event catalogue and the one rule that turns a change into events. Each event type is
 * emitted at most once per change:
 * - `todo.updated` when fields other than the status changed (`changed` names them);
 * - `todo.status_changed` (`from`, `to`) when the status changed, plus `todo.completed` when it
 *   became completed, or `todo.reopened` when a closed (completed or cancelled) todo became open.
 *   A completion is therefore `todo.status_changed` + `todo.completed`, never a `todo.updated`;
 * - `todo.created`, `todo.deleted` and `todo.restored` for those changes alone.
 */

/** The todo as an event carries it: its representation without `url`, which each reader adds. */
export type EventTodo = Omit<Todo, 'url'>;

/** What an event says besides its type: the todo after the change, and what changed. */
export interface TodoEventData {
  readonly todo: EventTodo;
  /** `todo.updated`: the fields whose value changed. */
  readonly changed?: UpdatableField[];
  /** `todo.status_changed`: the status before and after. */
  readonly from?: TodoStatus;
  readonly to?: TodoStatus;
}

export interface NewTodoEvent {
  readonly type: TodoEventType;
  readonly data: TodoEventData;
}

/** Fields a `todo.updated` reports; the status has events of its own. */
const UPDATABLE_FIELDS = [
  'title',
  'description',
  'priority',
  'order',
  'labels',
  'due_date',
  'due_at',
  'metadata',
] as const satisfies readonly (keyof Todo)[];
type UpdatableField = (typeof UPDATABLE_FIELDS)[number];

const CLOSED: ReadonlySet<TodoStatus> = new Set(['completed', 'cancelled']);

export function eventTodo(todo: Todo): EventTodo {
  const { url: _url, ...rest } = todo;
  return rest;
}

/** The events of one change from `before` to `after` (none when nothing changed). */
export function eventsOfChange(before: Todo, after: Todo): NewTodoEvent[] {
  const todo = eventTodo(after);
  const events: NewTodoEvent[] = [];
  const changed = UPDATABLE_FIELDS.filter(
    (field) => !isDeepStrictEqual(before[field], after[field]),
  );
  if (changed.length > 0) events.push({ type: 'todo.updated', data: { todo, changed } });
  if (before.status !== after.status) {
    events.push({
      type: 'todo.status_changed',
      data: { todo, from: before.status, to: after.status },
    });
    if (after.status === 'completed') events.push({ type: 'todo.completed', data: { todo } });
    else if (after.status === 'open' && CLOSED.has(before.status)) {
      events.push({ type: 'todo.reopened', data: { todo } });
    }
  }
  return events;
}

/** The one event of a change that is nothing but itself: create, delete, restore. */
export function eventOf(
  type: 'todo.created' | 'todo.deleted' | 'todo.restored',
  todo: Todo,
): NewTodoEvent {
  return { type, data: { todo: eventTodo(todo) } };
}

/** The API object of a stored event, with the todo's `url` as the reader reaches it. */
export function todoEventOf(row: TodoEventRow, baseUrl: string): TodoEvent {
  const data = JSON.parse(row.data) as TodoEventData;
  return {
    id: row.id,
    sequence: row.seq,
    type: row.type as TodoEventType,
    timestamp: row.occurred_at,
    data: { ...data, todo: { ...data.todo, url: todoUrl(baseUrl, data.todo.id) } },
  };
}
