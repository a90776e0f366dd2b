import type { TodoPriority, TodoStatus } from '../../../src/todos/todo.schemas.js';
import type { TodoAction } from '../../../src/todos/todo-transitions.js';

/** How each status reads on screen. A Record, so the compiler insists on every API status. */
export const STATUS_LABELS: Readonly<Record<TodoStatus, string>> = {
  open: 'Open',
  in_progress: 'In progress',
  blocked: 'Blocked',
  deferred: 'Deferred',
  completed: 'Completed',
  cancelled: 'Cancelled',
};

export const PRIORITY_LABELS: Readonly<Record<TodoPriority, string>> = {
  none: 'No priority',
  low: 'Low',
  normal: 'Normal',
  high: 'High',
  urgent: 'Urgent',
};

export const ACTION_LABELS: Readonly<Record<TodoAction, string>> = {
  start: 'Start',
  block: 'Block',
  defer: 'Defer',
  complete: 'Complete',
  cancel: 'Cancel',
  reopen: 'Reopen',
};

export const TODO_STATUSES = Object.keys(STATUS_LABELS) as TodoStatus[];
export const TODO_PRIORITIES = Object.keys(PRIORITY_LABELS) as TodoPriority[];
export const TODO_ACTIONS = Object.keys(ACTION_LABELS) as TodoAction[];
