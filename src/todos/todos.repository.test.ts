import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { fieldsJsonOf } from './todo-json.js';
import { derivedKeys, labelKey } from './todo-keys.js';
import type { Todo } from './todo.schemas.js';
import { DERIVED_COLUMNS } from './todo.table.js';
import { todoRowToTodo } from './todos.service.js';

/**
 * An update writes only the columns whose value changed (`todosRepository.update`). Whatever a
 * change touches, the stored derived keys and label rows must still be those of the todo.
 */
describe('stored keys after changes that write only what changed', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function send(
    method: 'POST' | 'PUT' | 'PATCH',
    url: string,
    payload: Record<string, unknown> | undefined,
    status: number,
  ): Promise<Todo> {
    const response = await t.inject({ method, url, payload });
    expect(response.statusCode, response.body).toBe(status);
    return response.json<Todo>();
  }

  /** The derived columns and label keys stored for `todo`, against those its fields imply. */
  async function expectKeysOf(todo: Todo): Promise<void> {
    const stored = await t.database.db
      .selectFrom('todos')
      .select([...DERIVED_COLUMNS, 'version'])
      .where('id', '=', todo.id)
      .executeTakeFirstOrThrow();
    expect(stored).toEqual({
      ...derivedKeys(todo),
      fields_json: fieldsJsonOf({
        ...todo,
        position: todo.order,
        labels: JSON.stringify(todo.labels),
        metadata: JSON.stringify(todo.metadata),
      }),
      version: todo.version,
    });
    const labels = await t.database.db
      .selectFrom('todo_labels')
      .select('label_key')
      .where('todo_id', '=', todo.id)
      .execute();
    expect(labels.map((row) => row.label_key).sort()).toEqual(
      [...new Set(todo.labels.map(labelKey))].sort(),
    );
  }

  it('keeps every derived key and label row in step, one field at a time and all at once', async () => {
    let todo = await send('POST', '/api/todos', { title: 'Alpha', labels: ['Home'] }, 201);
    await expectKeysOf(todo);
    const url = `/api/todos/${todo.id}`;
    const steps: ['POST' | 'PUT' | 'PATCH', string, Record<string, unknown>?][] = [
      ['PATCH', url, { priority: 'urgent' }],
      ['PATCH', url, { title: 'Éclair' }],
      ['PATCH', url, { due_date: '2026-03-01' }],
      ['PATCH', url, { due_date: null, due_at: '2026-03-02T10:00:00+02:00' }],
      ['POST', `${url}/start`],
      ['PATCH', url, { labels: ['home', 'Work'] }],
      ['PATCH', url, { description: 'only the description' }],
      ['PATCH', url, { completed: true }],
      ['PUT', url, { title: 'Zulu', priority: 'low', labels: ['Garden'], due_date: '2027-01-01' }],
      ['PATCH', url, { labels: null, due_date: null, priority: null }],
    ];
    for (const [method, target, body] of steps) {
      const next = await send(method, target, body, 200);
      expect(next.version).toBe(todo.version + 1);
      todo = next;
      await expectKeysOf(todo);
    }
    // And the lists that read those keys agree.
    const byTitle = await t.inject({ method: 'GET', url: `/api/todos?q=zulu&sort=title` });
    expect(byTitle.json<Todo[]>().map((found) => found.id)).toEqual([todo.id]);
  });

  it('lists every todo as its columns map, after every kind of write', async () => {
    const ids: string[] = [];
    for (const title of ['One "quoted"', 'Two \\ back', 'Three', 'Four', 'Five']) {
      ids.push((await send('POST', '/api/todos', { title, metadata: { k: title } }, 201)).id);
    }
    const [one, two, three, four] = ids.map((id) => `/api/todos/${id}`);
    await send('PATCH', `${one}`, { description: 'Line\nbreak', labels: ['x'] }, 200);
    await send('PUT', `${two}`, { title: 'Two again', priority: 'high' }, 200);
    await send('POST', `${three}/complete`, undefined, 200);
    await send('POST', `${four}/complete`, undefined, 200);
    expect((await t.inject({ method: 'DELETE', url: `${one}` })).statusCode).toBe(204);
    expect(
      (await t.inject({ method: 'DELETE', url: '/api/todos?status=completed' })).statusCode,
    ).toBe(204);
    await send('POST', `${four}/restore`, undefined, 200);

    const listed = (
      await t.inject({ method: 'GET', url: '/api/todos?include_deleted=true&limit=200' })
    ).json<Todo[]>();
    const rows = await t.database.db.selectFrom('todos').selectAll().execute();
    const baseUrl = listed[0]?.url.replace(/\/api\/todos\/.*$/, '') ?? '';
    expect(listed.map((todo) => todo.id).sort()).toEqual(rows.map((row) => row.id).sort());
    const mapped = new Map(rows.map((row) => [row.id, todoRowToTodo(row, baseUrl)]));
    expect(listed).toEqual(listed.map((todo) => mapped.get(todo.id)));
    expect(listed.filter((todo) => todo.deleted_at !== null)).toHaveLength(2);
  });
});
