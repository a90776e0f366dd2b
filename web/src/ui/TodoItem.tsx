import type { TodoAction } from '../../../src/todos/todo-transitions.js';
import { ACTIONS, canTransition } from '../../../src/todos/todo-transitions.js';
import type { Todo } from '../api/api-client.js';
import {
  ACTION_LABELS,
  PRIORITY_LABELS,
  STATUS_LABELS,
  TODO_ACTIONS,
} from '../todos/todo-values.js';

interface TodoItemProps {
  readonly todo: Todo;
  readonly now: Date;
  readonly onAct: (todo: Todo, action: TodoAction) => void;
  readonly onEdit: (todo: Todo) => void;
  readonly onDelete: (todo: Todo) => void;
}

const CLOSED = new Set(['completed', 'cancelled']);

/** Whether an action is a move the state table allows from here (not a same-state write). */
export function isPossible(todo: Todo, action: TodoAction): boolean {
  const target = ACTIONS[action];
  return target !== todo.status && canTransition(todo.status, target);
}

/** The due moment, as the API compares it: an all-day due date ends at 23:59:59.999 UTC. */
function dueMoment(todo: Todo): Date | null {
  if (todo.due_at) return new Date(todo.due_at);
  if (todo.due_date) return new Date(`${todo.due_date}T23:59:59.999Z`);
  return null;
}

function dueText(todo: Todo): string | null {
  if (todo.due_date)
    return new Date(`${todo.due_date}T00:00:00Z`).toLocaleDateString(undefined, {
      timeZone: 'UTC',
      dateStyle: 'medium',
    });
  if (todo.due_at)
    return new Date(todo.due_at).toLocaleString(undefined, {
      dateStyle: 'medium',
      timeStyle: 'short',
    });
  return null;
}

export function TodoItem({ todo, now, onAct, onEdit, onDelete }: TodoItemProps) {
  const titleId = `title-${todo.id}`;
  const due = dueMoment(todo);
  const overdue = due !== null && due < now && !CLOSED.has(todo.status);
  const completed = todo.status === 'completed';
  const toggle: TodoAction = completed ? 'reopen' : 'complete';
  return (
    <li
      class={`todo status-${todo.status}`}
      data-id={todo.id}
      tabIndex={-1}
      aria-labelledby={titleId}
    >
      <input
        type="checkbox"
        class="todo-check"
        checked={completed}
        disabled={!isPossible(todo, toggle)}
        aria-label={`${completed ? 'Reopen' : 'Complete'} “${todo.title}”`}
        onChange={() => onAct(todo, toggle)}
      />
      <div class="todo-main">
        <button
          type="button"
          class="todo-title"
          id={titleId}
          onClick={() => onEdit(todo)}
          title="Edit"
        >
          {todo.title}
        </button>
        <div class="todo-meta">
          <span class={`badge badge-status-${todo.status}`}>{STATUS_LABELS[todo.status]}</span>
          {todo.priority !== 'none' && (
            <span class={`badge badge-priority-${todo.priority}`}>
              {PRIORITY_LABELS[todo.priority]}
            </span>
          )}
          {todo.labels.map((label) => (
            <span key={label} class="chip">
              {label}
            </span>
          ))}
          {due && (
            <span class={overdue ? 'due due-overdue' : 'due'}>
              {overdue ? 'Overdue: ' : 'Due '}
              {dueText(todo)}
            </span>
          )}
        </div>
        {todo.description && <p class="todo-description">{todo.description}</p>}
      </div>
      <div class="todo-actions">
        <label class="visually-hidden" for={`move-${todo.id}`}>
          Change status of “{todo.title}”
        </label>
        <select
          id={`move-${todo.id}`}
          class="move"
          value=""
          onChange={(event) => {
            const action = event.currentTarget.value as TodoAction | '';
            event.currentTarget.value = '';
            if (action) onAct(todo, action);
          }}
        >
          <option value="">Move…</option>
          {TODO_ACTIONS.map((action) => (
            <option key={action} value={action} disabled={!isPossible(todo, action)}>
              {ACTION_LABELS[action]}
            </option>
          ))}
        </select>
        <button
          type="button"
          class="button button-small"
          onClick={() => onEdit(todo)}
          aria-label={`Edit “${todo.title}”`}
        >
          Edit
        </button>
        <button
          type="button"
          class="button button-small button-danger"
          onClick={() => onDelete(todo)}
          aria-label={`Delete “${todo.title}”`}
        >
          Delete
        </button>
      </div>
    </li>
  );
}
