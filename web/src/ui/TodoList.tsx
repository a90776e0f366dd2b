import { useEffect, useRef } from 'preact/hooks';
import type { TodoAction } from '../../../src/todos/todo-transitions.js';
import type { ApiClient, Todo } from '../api/api-client.js';
import type { ApiProblem } from '../api/api-problem.js';
import type { TodoListState } from '../todos/use-todo-list.js';
import { TodoEditor } from './TodoEditor.js';
import { TodoItem } from './TodoItem.js';

interface TodoListProps {
  readonly api: ApiClient;
  readonly state: TodoListState;
  /** Todos being edited, each with the version its editing began from. */
  readonly editing: ReadonlyMap<string, Todo>;
  readonly onLoadMore: () => void;
  readonly onAct: (todo: Todo, action: TodoAction) => void;
  readonly onEdit: (todo: Todo) => void;
  readonly onEditDone: (id: string, saved?: Todo) => void;
  readonly onRebase: (todo: Todo) => void;
  readonly onDelete: (todo: Todo) => void;
  readonly onAuthProblem: (problem: ApiProblem) => boolean;
}

/** Loads the next page when its end comes within this distance of the viewport. */
const PRELOAD_MARGIN = '400px';

export function TodoList(props: TodoListProps) {
  const { state, editing, onLoadMore } = props;
  const sentinel = useRef<HTMLDivElement>(null);
  const now = new Date();

  useEffect(() => {
    const target = sentinel.current;
    if (!target || !state.next) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((entry) => entry.isIntersecting)) onLoadMore();
      },
      { rootMargin: PRELOAD_MARGIN },
    );
    observer.observe(target);
    return () => observer.disconnect();
  }, [state.next, state.todos.length, onLoadMore]);

  if (!state.loading && state.todos.length === 0 && !state.error) {
    return <p class="empty">Nothing here. Add a todo above, or change the filters.</p>;
  }

  return (
    <>
      <ul class="todo-list" aria-label="Todos" aria-busy={state.loading}>
        {state.todos.map((todo) => {
          const base = editing.get(todo.id);
          return base ? (
            <li key={todo.id} class="todo todo-editing" data-id={todo.id} tabIndex={-1}>
              <TodoEditor
                api={props.api}
                base={base}
                latest={todo}
                onSaved={(saved) => props.onEditDone(todo.id, saved)}
                onRebase={props.onRebase}
                onClose={() => props.onEditDone(todo.id)}
                onAuthProblem={props.onAuthProblem}
              />
            </li>
          ) : (
            <TodoItem
              key={todo.id}
              todo={todo}
              now={now}
              onAct={props.onAct}
              onEdit={props.onEdit}
              onDelete={props.onDelete}
            />
          );
        })}
      </ul>
      <div ref={sentinel} class="list-end">
        {state.loading && <span role="status">Loading…</span>}
        {!state.loading && state.next && (
          <button type="button" class="button" onClick={onLoadMore}>
            Load more
          </button>
        )}
      </div>
    </>
  );
}
