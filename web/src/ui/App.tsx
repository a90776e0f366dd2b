import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { createApiClient, type Todo } from '../api/api-client.js';
import { readableMessage, type ApiProblem } from '../api/api-problem.js';
import { openEventStream, type StreamState } from '../api/event-stream.js';
import { forgetKey, readKey, saveKey } from '../auth/key-store.js';
import { viewFromSearch, viewToSearch, type ListView } from '../todos/list-view.js';
import { useTodoList } from '../todos/use-todo-list.js';
import { AddTodo } from './AddTodo.js';
import { KeyPrompt } from './KeyPrompt.js';
import { ShortcutsDialog } from './ShortcutsDialog.js';
import { TodoList } from './TodoList.js';
import { Toasts } from './Toasts.js';
import { Toolbar } from './Toolbar.js';
import { plural } from './plural.js';
import { useKeyboardShortcuts } from './use-keyboard-shortcuts.js';
import { useTodoActions } from './use-todo-actions.js';
import { useToasts } from './use-toasts.js';

const STREAM_LABELS: Readonly<Record<StreamState, string>> = {
  connecting: 'Connecting…',
  live: 'Live',
  offline: 'Offline, retrying',
};

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

  const { add, act, remove, clearCompleted } = useTodoActions({
    api,
    list,
    show: toasts.show,
    onAuthProblem,
  });

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

  useKeyboardShortcuts({
    todos: list.state.todos,
    act,
    edit,
    remove,
    undo: () => void toasts.runLatestAction(),
    addInput: addRef,
    searchInput: searchRef,
    helpDialog: dialogRef,
  });

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
                tokenRef.current = null;
                setToken(null);
                setKeyProblem(null);
                // A server that needs a key answers 401 and the prompt appears; one that serves
                // anonymous requests goes on without it.
                list.refresh();
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
