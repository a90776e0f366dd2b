import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { TodoAction } from '../../../src/todos/todo-transitions.js';
import { createApiClient, type Todo } from '../api/api-client.js';
import { ApiProblem, readableMessage } from '../api/api-problem.js';
import { openEventStream, type StreamState } from '../api/event-stream.js';
import { forgetKey, readKey, saveKey } from '../auth/key-store.js';
import { viewFromSearch, viewToSearch, type ListView } from '../todos/list-view.js';
import { useTodoList } from '../todos/use-todo-list.js';
import { AddTodo } from './AddTodo.js';
import { KeyPrompt } from './KeyPrompt.js';
import { ShortcutsDialog } from './ShortcutsDialog.js';
import { TodoList } from './TodoList.js';
import { isPossible } from './TodoItem.js';
import { Toasts } from './Toasts.js';
import { Toolbar } from './Toolbar.js';
import { handleShortcut } from './shortcuts.js';
import { useToasts } from './use-toasts.js';

const STREAM_LABELS: Readonly<Record<StreamState, string>> = {
  connecting: 'Connecting…',
  live: 'Live',
  offline: 'Offline, retrying',
};

/** "Clear completed" offers undo for at most this many todos (five pages). */
const UNDO_CLEAR_LIMIT = 1000;

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

export function App() {
  const [token, setToken] = useState<string | null>(readKey);
  const tokenRef = useRef(token);
  tokenRef.current = token;
  const api = useMemo(() => createApiClient(() => tokenRef.current), []);
  const [needsKey, setNeedsKey] = useState(false);
  const [keyProblem, setKeyProblem] = useState<string | null>(null);
  const [view, setView] = useState<ListView>(() => viewFromSearch(window.location.search));
  const list = useTodoList(api, view, !needsKey);
  const [editing, setEditing] = useState<ReadonlyMap<string, Todo>>(new Map());
  const [streamState, setStreamState] = useState<StreamState>('connecting');
  const toasts = useToasts();
  const addRef = useRef<HTMLInputElement>(null);
  const searchRef = useRef<HTMLInputElement>(null);
  const dialogRef = useRef<HTMLDialogElement>(null);

  /** A 401 anywhere means the key is missing or no longer valid: ask for one. */
  const onAuthProblem = useCallback((problem: ApiProblem): boolean => {
    if (problem.status !== 401) return false;
    setKeyProblem(
      tokenRef.current ? 'That key was not accepted: it is unknown, expired or revoked.' : null,
    );
    setNeedsKey(true);
    return true;
  }, []);

  const report = useCallback(
    (error: unknown, todo?: Todo) => {
      const problem = error instanceof ApiProblem ? error : ApiProblem.network();
      if (onAuthProblem(problem)) return;
      const reload =
        todo && (problem.code === 'precondition-failed' || problem.code === 'invalid-transition')
          ? {
              label: 'Reload',
              run: () => {
                api.get(todo.id).then(list.put, (reloadError: unknown) => report(reloadError));
              },
            }
          : undefined;
      if (problem.code === 'not-found' && todo) list.drop(todo.id);
      toasts.show(readableMessage(problem), 'error', reload);
    },
    [api, list.drop, list.put, onAuthProblem, toasts.show],
  );

  useEffect(() => {
    if (list.state.error) onAuthProblem(list.state.error);
  }, [list.state.error, onAuthProblem]);

  // The stream lives as long as the key; its handlers read the latest list through a ref.
  const listRef = useRef(list);
  listRef.current = list;
  useEffect(() => {
    if (needsKey) return;
    return openEventStream(() => tokenRef.current, {
      onEvent: (event) => listRef.current.applyEvent(event),
      onReset: () => listRef.current.refresh(),
      onState: setStreamState,
      onRefused: onAuthProblem,
    });
  }, [needsKey, token, onAuthProblem]);

  const changeView = useCallback((change: Partial<ListView>) => {
    setView((current) => ({ ...current, ...change }));
  }, []);
  // The view lives in the address too: a reload or a shared link shows the same list.
  useEffect(() => {
    window.history.replaceState(null, '', viewToSearch(view) || window.location.pathname);
  }, [view]);

  const add = useCallback(
    async (title: string) => {
      try {
        const created = await api.create({ title });
        toasts.show(`Added “${created.title}”.`);
        list.refresh();
        return true;
      } catch (error) {
        report(error);
        return false;
      }
    },
    [api, list.refresh, report, toasts.show],
  );

  const act = useCallback(
    async (todo: Todo, action: TodoAction) => {
      try {
        list.put(await api.act(todo, action));
        list.refreshSoon();
      } catch (error) {
        report(error, todo);
      }
    },
    [api, list.put, list.refreshSoon, report],
  );

  const restore = useCallback(
    async (ids: readonly string[]) => {
      const results = await Promise.allSettled(ids.map((id) => api.restore(id)));
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) report(failed.reason);
      else toasts.show(ids.length === 1 ? 'Restored.' : `Restored ${plural(ids.length, 'todo')}.`);
      list.refresh();
    },
    [api, list.refresh, report, toasts.show],
  );

  const remove = useCallback(
    async (todo: Todo) => {
      try {
        await api.remove(todo);
        list.drop(todo.id);
        toasts.show(`Deleted “${todo.title}”.`, 'info', {
          label: 'Undo',
          run: () => void restore([todo.id]),
        });
      } catch (error) {
        report(error, todo);
      }
    },
    [api, list.drop, report, restore, toasts.show],
  );

  const clearCompleted = useCallback(async () => {
    try {
      // The ids first, so that undo can restore exactly what this deletes.
      const ids: string[] = [];
      let next: string | null = '/api/todos?status=completed&limit=200';
      while (next && ids.length <= UNDO_CLEAR_LIMIT) {
        const page = await api.list(next);
        ids.push(...page.todos.map((todo) => todo.id));
        next = page.next;
      }
      if (ids.length === 0) {
        toasts.show('There are no completed todos to clear.');
        return;
      }
      await api.removeMatching('status=completed');
      list.refresh();
      const undo = next === null ? { label: 'Undo', run: () => void restore(ids) } : undefined;
      toasts.show(`Cleared ${plural(ids.length, 'completed todo')}.`, 'info', undo);
    } catch (error) {
      report(error);
    }
  }, [api, list.refresh, report, restore, toasts.show]);

  const edit = useCallback((todo: Todo) => {
    setEditing((current) => new Map(current).set(todo.id, todo));
  }, []);

  const editDone = useCallback(
    (id: string, saved?: Todo) => {
      setEditing((current) => {
        const next = new Map(current);
        next.delete(id);
        return next;
      });
      if (saved) {
        list.put(saved);
        list.refreshSoon();
      }
      // Back to the row the editor replaced, so that keyboard users keep their place.
      requestAnimationFrame(() =>
        document.querySelector<HTMLElement>(`li[data-id="${id}"]`)?.focus(),
      );
    },
    [list.put, list.refreshSoon],
  );

  const rebase = useCallback(
    (todo: Todo) => {
      setEditing((current) => new Map(current).set(todo.id, todo));
      list.put(todo);
    },
    [list.put],
  );

  // Keyboard shortcuts act on the todo whose row holds the focus.
  const shortcutState = useRef({
    act,
    edit,
    remove,
    todos: list.state.todos,
    runUndo: toasts.runLatestAction,
  });
  shortcutState.current = {
    act,
    edit,
    remove,
    todos: list.state.todos,
    runUndo: toasts.runLatestAction,
  };
  useEffect(() => {
    const selected = () => {
      const row = document.activeElement?.closest<HTMLElement>('li[data-id]');
      return shortcutState.current.todos.find((todo) => todo.id === row?.dataset.id);
    };
    const onKeyDown = (event: KeyboardEvent) =>
      handleShortcut(event, {
        newTodo: () => addRef.current?.focus(),
        search: () => searchRef.current?.focus(),
        move: (step) => {
          const rows = [...document.querySelectorAll<HTMLElement>('.todo-list > li')];
          const current = rows.findIndex((row) => row.contains(document.activeElement));
          const target =
            rows[current === -1 ? 0 : Math.min(Math.max(current + step, 0), rows.length - 1)];
          target?.focus();
        },
        toggle: () => {
          const todo = selected();
          if (!todo) return;
          const action = todo.status === 'completed' ? 'reopen' : 'complete';
          if (isPossible(todo, action)) void shortcutState.current.act(todo, action);
        },
        edit: () => {
          const todo = selected();
          if (todo) shortcutState.current.edit(todo);
        },
        remove: () => {
          const todo = selected();
          if (todo) void shortcutState.current.remove(todo);
        },
        undo: () => void shortcutState.current.runUndo(),
        help: () => dialogRef.current?.showModal(),
      });
    document.addEventListener('keydown', onKeyDown);
    return () => document.removeEventListener('keydown', onKeyDown);
  }, []);

  const { state } = list;
  return (
    <div class="app">
      <header class="app-header">
        <h1>Todos</h1>
        {!needsKey && (
          <span class={`live live-${streamState}`} role="status" data-testid="stream-state">
            {STREAM_LABELS[streamState]}
          </span>
        )}
        <nav class="app-nav" aria-label="Help">
          <a href="/docs">API reference</a>
          <button
            type="button"
            class="button button-small"
            onClick={() => dialogRef.current?.showModal()}
          >
            Shortcuts <kbd>?</kbd>
          </button>
          {token && (
            <button
              type="button"
              class="button button-small"
              onClick={() => {
                forgetKey();
                setToken(null);
                setNeedsKey(true);
                setKeyProblem(null);
              }}
            >
              Forget key
            </button>
          )}
        </nav>
      </header>
      <main>
        {needsKey ? (
          <KeyPrompt
            problem={keyProblem}
            onSubmit={(key, remember) => {
              saveKey(key, remember);
              setToken(key);
              setNeedsKey(false);
            }}
          />
        ) : (
          <>
            <AddTodo inputRef={addRef} onAdd={add} />
            <Toolbar view={view} onChange={changeView} searchRef={searchRef} />
            <div class="list-bar">
              <p class="summary" aria-live="polite" data-testid="summary">
                {state.total === null ? '\u00a0' : plural(state.total, 'todo')}
              </p>
              <button
                type="button"
                class="button button-small"
                onClick={() => void clearCompleted()}
              >
                Clear completed
              </button>
            </div>
            {state.error && state.error.status !== 401 && (
              <div class="problem" role="alert">
                <span>{readableMessage(state.error)}</span>
                <button type="button" class="button button-small" onClick={list.refresh}>
                  Retry
                </button>
              </div>
            )}
            <TodoList
              api={api}
              state={state}
              editing={editing}
              onLoadMore={() => void list.loadMore()}
              onAct={(todo, action) => void act(todo, action)}
              onEdit={edit}
              onEditDone={editDone}
              onRebase={rebase}
              onDelete={(todo) => void remove(todo)}
              onAuthProblem={onAuthProblem}
            />
          </>
        )}
      </main>
      <Toasts toasts={toasts.toasts} onDismiss={toasts.dismiss} />
      <ShortcutsDialog dialogRef={dialogRef} />
    </div>
  );
}
