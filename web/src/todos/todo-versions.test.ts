import { describe, expect, it } from 'vitest';
import type { Todo } from '../../../src/todos/todo.schemas.js';
import { withoutOlder } from './todo-versions.js';

function todo(id: string, version: number, title = `${id} v${version}`): Todo {
  return {
    id,
    url: `http://localhost/api/todos/${id}`,
    title,
    description: null,
    status: 'open',
    completed: false,
    completed_at: null,
    priority: 'none',
    order: 1024,
    labels: [],
    due_date: null,
    due_at: null,
    metadata: {},
    version,
    created_at: '2026-11-24T00:00:00.000Z',
    updated_at: '2026-11-24T00:00:00.000Z',
    deleted_at: null,
  };
}

describe('withoutOlder: a re-read page against the todos already shown', () => {
  it('keeps a held todo that is newer than its copy in the page (our write answered first)', () => {
    const completed = todo('a', 2, 'completed meanwhile');
    const page = withoutOlder([todo('a', 1), todo('b', 1)], [completed, todo('b', 1)]);
    expect(page.map((t) => [t.id, t.version, t.title])).toEqual([
      ['a', 2, 'completed meanwhile'],
      ['b', 1, 'b v1'],
    ]);
  });

  it('takes the page copy when it is newer, and todos not held yet', () => {
    const page = withoutOlder([todo('a', 3), todo('c', 1)], [todo('a', 2)]);
    expect(page.map((t) => [t.id, t.version])).toEqual([
      ['a', 3],
      ['c', 1],
    ]);
  });

  it('follows the page for which todos are listed and in what order', () => {
    const page = withoutOlder([todo('b', 1), todo('a', 1)], [todo('a', 1), todo('gone', 4)]);
    expect(page.map((t) => t.id)).toEqual(['b', 'a']);
  });
});
