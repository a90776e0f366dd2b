import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { TodoAction } from '../../../src/todos/todo-transitions.js';
import type { Todo } from '../api/api-client.js';
import { isPossible } from './TodoItem.js';
import { handleShortcut } from './shortcuts.js';

interface ShortcutTargets {
  readonly todos: readonly Todo[];
  readonly act: (todo: Todo, action: TodoAction) => Promise<void>;
  readonly edit: (todo: Todo) => void;
  readonly remove: (todo: Todo) => Promise<void>;
  readonly undo: () => void;
  readonly addInput: RefObject<HTMLInputElement | null>;
  readonly searchInput: RefObject<HTMLInputElement | null>;
  readonly helpDialog: RefObject<HTMLDialogElement | null>;
}

/** The keyboard shortcuts (see shortcuts.ts); they act on the todo whose row holds the focus. */
export function useKeyboardShortcuts(targets: ShortcutTargets): void {
  // One listener for the page's life, reading the latest targets.
  const latest = useRef(targets);
  latest.current = targets;

  useEffect(() => {
    const selected = () => {
      const row = document.activeElement?.closest<HTMLElement>('li[data-id]');
      return latest.current.todos.find((todo) => todo.id === row?.dataset.id);
    };
    const onKeyDown = (event: KeyboardEvent) => {
      const current = latest.current;
      handleShortcut(event, {
        newTodo: () => current.addInput.current?.focus(),
        search: () => current.searchInput.current?.focus(),
        move: (step) => {
          const rows = [...document.querySelectorAll<HTMLElement>('.todo-list > li')];
          const at = rows.findIndex((row) => row.contains(document.activeElement));
          rows[at === -1 ? 0 : Math.min(Math.max(at + step, 0), rows.length - 1)]?.focus();
        },
        toggle: () => {
          const todo = selected();
          if (!todo) return;
          const action = todo.status === 'completed' ? 'reopen' : 'complete';
          if (isPossible(todo, action)) void current.act(todo, action);
        },
        edit: () => {
          const todo = selected();
          if (todo) current.edit(todo);
        },
        remove: () => {
          const todo = selected();
          if (todo) void current.remove(todo);
        },
        undo: current.undo,
        help: () => current.helpDialog.current?.showModal(),
      });
    };
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);
}
