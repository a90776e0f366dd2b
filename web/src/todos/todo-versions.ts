/**
 * Which copy of a todo the app shows. Versions only grow, and answers, events and re-read pages
 * may arrive in any order, so the higher version is the later state.
 */
import type { Todo } from '../../../src/todos/todo.schemas.js';

/** The newer of two copies of the same todo. */
export function newer(current: Todo, incoming: Todo): Todo {
  return incoming.version >= current.version ? incoming : current;
}

/**
 * A re-read page, each todo no older than the copy already `held`. The page may have been asked
 * for before one of our own writes answered and arrive after it; taken as it is, it would put
 * the todo back to its old version, and the next change, sent with that version in If-Match,
 * would be refused with 412.
 */
export function withoutOlder(page: readonly Todo[], held: readonly Todo[]): Todo[] {
  const byId = new Map(held.map((todo) => [todo.id, todo]));
  return page.map((todo) => {
    const current = byId.get(todo.id);
    return current ? newer(current, todo) : todo;
  });
}
