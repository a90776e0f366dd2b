import { AppError } from '../http/app-error.js';
import type { TodoStatus } from './todo.schemas.js';
import { TRANSITIONS, canTransition } from './todo-transitions.js';

/** Throws the 409 `invalid-transition` problem when the table forbids `from → to`. */
export function assertTransition(from: TodoStatus, to: TodoStatus): void {
  if (canTransition(from, to)) return;
  throw new AppError(
    'invalid-transition',
    `A ${from} todo cannot become ${to}; it can become: ${TRANSITIONS[from].join(', ')}.`,
    { extensions: { current_status: from, allowed_transitions: TRANSITIONS[from] } },
  );
}
