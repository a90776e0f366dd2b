import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { TodoEvent } from '../../../src/events/todo-event.schemas.js';
import type { ApiClient, Todo } from '../api/api-client.js';
import type { ApiProblem } from '../api/api-problem.js';
import { listQuery, type ListView } from './list-view.js';
import { newer, withoutOlder } from './todo-versions.js';

export interface TodoListState {
  readonly todos: readonly Todo[];
  /** The next page's path, or null when every matching todo is loaded. */
  readonly next: string | null;
  readonly total: number | null;
  readonly loading: boolean;
  readonly error: ApiProblem | null;
}

const EMPTY: TodoListState = { todos: [], next: null, total: null, loading: true, error: null };
/** The most a refresh re-reads in one request (the API's largest page). */
const MAX_REFRESH = 200;
/** Events often come in bursts (a bulk delete, a status change's three events): one refresh. */
const REFRESH_DELAY_MS = 150;

/**
 * The loaded part of the list for a view: the first page, more pages on demand (infinite
 * scroll), and refreshes after changes. A refresh re-reads as many todos as are loaded (up to
 * 200), so that filters and sort stay the server's; beyond that, changes patch the loaded rows.
 */
export function useTodoList(api: ApiClient, view: ListView, enabled: boolean) {
  const [state, setState] = useState<TodoListState>(EMPTY);
  const stateRef = useRef(state);
  stateRef.current = state;
  // Answers for an older view (or an older refresh) are dropped.
  const generation = useRef(0);
  const refreshTimer = useRef<ReturnType<typeof setTimeout>>(undefined);

  const fetchHead = useCallback(
    async (size: number, keepRows: boolean) => {
      const ticket = ++generation.current;
      if (!keepRows) setState(EMPTY);
      const query = listQuery(view);
      query.set('limit', String(size));
      try {
        const page = await api.list(`/api/todos?${query.toString()}`, true);
        if (ticket !== generation.current) return;
        setState((current) => ({
          todos: withoutOlder(page.todos, current.todos),
          next: page.next,
          total: page.total,
          loading: false,
          error: null,
        }));
      } catch (error) {
        if (ticket !== generation.current) return;
        setState((current) => ({ ...current, loading: false, error: error as ApiProblem }));
      }
    },
    [api, view],
  );

  useEffect(() => {
    if (enabled) void fetchHead(Number(listQuery(view).get('limit')), false);
    return () => clearTimeout(refreshTimer.current);
  }, [enabled, fetchHead, view]);

  const refresh = useCallback(() => {
    clearTimeout(refreshTimer.current);
    const loaded = stateRef.current.todos.length;
    if (loaded > MAX_REFRESH) return;
    const pageSize = Number(listQuery(view).get('limit'));
    void fetchHead(Math.max(pageSize, loaded), true);
  }, [fetchHead, view]);

  const refreshSoon = useCallback(() => {
    clearTimeout(refreshTimer.current);
    refreshTimer.current = setTimeout(refresh, REFRESH_DELAY_MS);
  }, [refresh]);

  const loadMore = useCallback(async () => {
    const { next, loading } = stateRef.current;
    if (!next || loading) return;
    const ticket = generation.current;
    setState((current) => ({ ...current, loading: true }));
    try {
      const page = await api.list(next);
      if (ticket !== generation.current) return;
      setState((current) => {
        const known = new Set(current.todos.map((todo) => todo.id));
        const added = page.todos.filter((todo) => !known.has(todo.id));
        return { ...current, todos: [...current.todos, ...added], next: page.next, loading: false };
      });
    } catch (error) {
      if (ticket !== generation.current) return;
      setState((current) => ({ ...current, loading: false, error: error as ApiProblem }));
    }
  }, [api]);

  /** Shows a todo as the server now has it (after one of our writes, or an event). */
  const put = useCallback((todo: Todo) => {
    setState((current) => ({
      ...current,
      todos: current.todos.map((row) => (row.id === todo.id ? newer(row, todo) : row)),
    }));
  }, []);

  const drop = useCallback((id: string) => {
    setState((current) => {
      const todos = current.todos.filter((row) => row.id !== id);
      if (todos.length === current.todos.length) return current;
      return { ...current, todos, total: current.total === null ? null : current.total - 1 };
    });
  }, []);

  const applyEvent = useCallback(
    (event: TodoEvent) => {
      const todo = event.data.todo;
      if (event.type === 'todo.deleted') drop(todo.id);
      else put(todo);
      refreshSoon();
    },
    [drop, put, refreshSoon],
  );

  return { state, loadMore, refresh, refreshSoon, put, drop, applyEvent };
}
