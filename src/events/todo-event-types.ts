/** The event catalogue (see `todo-events.ts` for when each is emitted). Free of server code. */
export const TODO_EVENT_TYPES = [
  'todo.created',
  'todo.updated',
  'todo.status_changed',
  'todo.completed',
  'todo.reopened',
  'todo.deleted',
  'todo.restored',
] as const;
export type TodoEventType = (typeof TODO_EVENT_TYPES)[number];
