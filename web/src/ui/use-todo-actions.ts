import { useCallback } from 'preact/hooks';
import type { TodoAction } from '../../../src/todos/todo-transitions.js';
import type { ApiClient, Todo } from '../api/api-client.js';
import { ApiProblem, readableMessage } from '../api/api-problem.js';
import type { useTodoList } from '../todos/use-todo-list.js';
import { plural } from './plural.js';
import type { useToasts } from './use-toasts.js';

/** "Clear completed" offers undo for at most this many todos (five pages). */
const UNDO_CLEAR_LIMIT = 1000;

interface TodoActionsDeps {
  readonly api: ApiClient;
  readonly list: ReturnType<typeof useTodoList>;
  readonly show: ReturnType<typeof useToasts>['show'];
  /** Handles a 401 (asks for a key) and says whether it did. */
  readonly onAuthProblem: (problem: ApiProblem) => boolean;
}

/**
 * What the user can do to todos from the list, each a request (or a few) to the API followed by
 * what the list and the notices show: the answer, an undo, or the problem as a sentence.
 */
export function useTodoActions({ api, list, show, onAuthProblem }: TodoActionsDeps) {
  const { put, drop, refresh, refreshSoon } = list;

  const report = useCallback(
    (error: unknown, todo?: Todo) => {
      const problem = error instanceof ApiProblem ? error : ApiProblem.network();
      if (onAuthProblem(problem)) return;
      const stale = problem.code === 'precondition-failed' || problem.code === 'invalid-transition';
      const reload =
        todo && stale
          ? {
              label: 'Reload',
              run: () => {
                api.get(todo.id).then(put, (reloadError: unknown) => report(reloadError));
              },
            }
          : undefined;
      if (problem.code === 'not-found' && todo) drop(todo.id);
      show(readableMessage(problem), 'error', reload);
    },
    [api, drop, put, onAuthProblem, show],
  );

  const add = useCallback(
    async (title: string) => {
      try {
        const created = await api.create({ title });
        show(`Added “${created.title}”.`);
        refresh();
        return true;
      } catch (error) {
        report(error);
        return false;
      }
    },
    [api, refresh, report, show],
  );

  const act = useCallback(
    async (todo: Todo, action: TodoAction) => {
      try {
        put(await api.act(todo, action));
        refreshSoon();
      } catch (error) {
        report(error, todo);
      }
    },
    [api, put, refreshSoon, report],
  );

  const restore = useCallback(
    async (ids: readonly string[]) => {
      const results = await Promise.allSettled(ids.map((id) => api.restore(id)));
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) report(failed.reason);
      else show(ids.length === 1 ? 'Restored.' : `Restored ${plural(ids.length, 'todo')}.`);
      refresh();
    },
    [api, refresh, report, show],
  );

  const remove = useCallback(
    async (todo: Todo) => {
      try {
        await api.remove(todo);
        drop(todo.id);
        show(`Deleted “${todo.title}”.`, 'info', {
          label: 'Undo',
          run: () => void restore([todo.id]),
        });
      } catch (error) {
        report(error, todo);
      }
    },
    [api, drop, report, restore, show],
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
        show('There are no completed todos to clear.');
        return;
      }
      await api.removeMatching('status=completed');
      refresh();
      const undo = next === null ? { label: 'Undo', run: () => void restore(ids) } : undefined;
      show(`Cleared ${plural(ids.length, 'completed todo')}.`, 'info', undo);
    } catch (error) {
      report(error);
    }
  }, [api, refresh, report, restore, show]);

  return { add, act, remove, clearCompleted };
}
