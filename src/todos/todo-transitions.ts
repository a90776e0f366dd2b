import type { TodoStatus } from './todo.schemas.js';

/**
 * The one table that decides every status change, whether it comes from PUT, PATCH or an action
 * endpoint. `open → in_progress → completed` is the happy path; `blocked` and `deferred` are
 * parked; `completed` and `cancelled` are closed and can only be reopened. Free of server code:
 * the web app imports it to show only the moves the API allows.
 */
export const TRANSITIONS: Readonly<Record<TodoStatus, readonly TodoStatus[]>> = {
  open: ['in_progress', 'blocked', 'deferred', 'completed', 'cancelled'],
  in_progress: ['open', 'blocked', 'deferred', 'completed', 'cancelled'],
  blocked: ['open', 'in_progress', 'deferred', 'completed', 'cancelled'],
  deferred: ['open', 'in_progress', 'blocked', 'completed', 'cancelled'],
  completed: ['open'],
  cancelled: ['open'],
};

/** The action endpoints, `POST /api/todos/{id}/{action}`, and the status each one moves to. */
export const ACTIONS = {
  start: 'in_progress',
  block: 'blocked',
  defer: 'deferred',
  complete: 'completed',
  cancel: 'cancelled',
  reopen: 'open',
} as const satisfies Record<string, TodoStatus>;

export type TodoAction = keyof typeof ACTIONS;

/** A same-state write is allowed (and changes nothing); otherwise the table decides. */
export function canTransition(from: TodoStatus, to: TodoStatus): boolean {
  return from === to || TRANSITIONS[from].includes(to);
}
