import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Todo } from '../src/todos/todo.schemas.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

const MISSING_ID = '01890000-0000-7000-8000-000000000000';

// One app for the file: every case creates the todos it reads and writes, and touches no other.
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

async function create(title = 'Conditional probe'): Promise<Todo> {
  const response = await t.inject({ method: 'POST', url: '/api/todos', payload: { title } });
  expect(response.statusCode).toBe(201);
  return response.json<Todo>();
}

async function getTodo(id: string) {
  return t.inject({ method: 'GET', url: `/api/todos/${id}` });
}

/** A todo at version 2, so that `"1"` is a stale ETag. */
async function createAtVersion2(): Promise<Todo> {
  const todo = await create();
  const response = await t.inject({
    method: 'PATCH',
    url: `/api/todos/${todo.id}`,
    payload: { priority: 'high' },
  });
  expect(response.statusCode).toBe(200);
  const updated = response.json<Todo>();
  expect(updated.version).toBe(2);
  return updated;
}

describe('ETag', () => {
  it('POST /api/todos answers the strong ETag "1"', async () => {
    const response = await t.inject({
      method: 'POST',
      url: '/api/todos',
      payload: { title: 'New' },
    });
    expect(response.statusCode).toBe(201);
    expect(response.headers.etag).toBe('"1"');
    expect(response.json<Todo>().version).toBe(1);
  });

  it('GET /api/todos/{id} answers the strong ETag of the current version', async () => {
    const todo = await createAtVersion2();
    const response = await getTodo(todo.id);
    expect(response.statusCode).toBe(200);
    expect(response.headers.etag).toBe('"2"');
  });

  it.each<[string, (id: string) => InjectOptions]>([
    [
      'PUT /api/todos/{id}',
      (id) => ({ method: 'PUT', url: `/api/todos/${id}`, payload: { title: 'Put' } }),
    ],
    [
      'PATCH /api/todos/{id}',
      (id) => ({ method: 'PATCH', url: `/api/todos/${id}`, payload: { title: 'Patch' } }),
    ],
    ['POST /api/todos/{id}/start', (id) => ({ method: 'POST', url: `/api/todos/${id}/start` })],
  ])('%s answers the strong ETag of the new version', async (_name, request) => {
    const todo = await create();
    const response = await t.inject(request(todo.id));
    expect(response.statusCode).toBe(200);
    expect(response.json<Todo>().version).toBe(2);
    expect(response.headers.etag).toBe('"2"');
    expect((await getTodo(todo.id)).headers.etag).toBe('"2"');
  });

  it('is unchanged by a no-op write', async () => {
    const todo = await create();
    const response = await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/reopen` });
    expect(response.statusCode).toBe(200);
    expect(response.headers.etag).toBe('"1"');
  });
});

describe('GET /api/todos/{id} with If-None-Match', () => {
  it('returns 304 with the ETag and an empty body when the ETag is current', async () => {
    const todo = await create();
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos/${todo.id}`,
      headers: { 'if-none-match': '"1"' },
    });
    expect(response.statusCode).toBe(304);
    expect(response.headers.etag).toBe('"1"');
    expect(response.body).toBe('');
  });

  it('returns 304 for the weak form W/"1" (weak comparison)', async () => {
    const todo = await create();
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos/${todo.id}`,
      headers: { 'if-none-match': 'W/"1"' },
    });
    expect(response.statusCode).toBe(304);
    expect(response.headers.etag).toBe('"1"');
    expect(response.body).toBe('');
  });

  it('returns 304 for *', async () => {
    const todo = await create();
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos/${todo.id}`,
      headers: { 'if-none-match': '*' },
    });
    expect(response.statusCode).toBe(304);
    expect(response.body).toBe('');
  });

  it('returns 304 when a list contains the current ETag', async () => {
    const todo = await create();
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos/${todo.id}`,
      headers: { 'if-none-match': '"7", "1"' },
    });
    expect(response.statusCode).toBe(304);
  });

  it('returns 200 with the todo when the ETag is stale', async () => {
    const todo = await createAtVersion2();
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos/${todo.id}`,
      headers: { 'if-none-match': '"1"' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers.etag).toBe('"2"');
    expect(response.json<Todo>()).toEqual(todo);
  });

  it('returns 404 for a missing todo', async () => {
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos/${MISSING_ID}`,
      headers: { 'if-none-match': '*' },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ code: 'not-found' });
  });
});

interface ConditionalWrite {
  readonly name: string;
  readonly request: (id: string, ifMatch: string) => InjectOptions;
  readonly status: number;
  /** Asserts that the write took effect. */
  readonly applied: (id: string) => Promise<void>;
}

const WRITES: readonly ConditionalWrite[] = [
  {
    name: 'PUT /api/todos/{id}',
    request: (id, ifMatch) => ({
      method: 'PUT',
      url: `/api/todos/${id}`,
      headers: { 'if-match': ifMatch },
      payload: { title: 'Replaced' },
    }),
    status: 200,
    applied: async (id) => {
      expect((await getTodo(id)).json<Todo>().title).toBe('Replaced');
    },
  },
  {
    name: 'PATCH /api/todos/{id}',
    request: (id, ifMatch) => ({
      method: 'PATCH',
      url: `/api/todos/${id}`,
      headers: { 'if-match': ifMatch },
      payload: { title: 'Patched' },
    }),
    status: 200,
    applied: async (id) => {
      expect((await getTodo(id)).json<Todo>().title).toBe('Patched');
    },
  },
  {
    name: 'DELETE /api/todos/{id}',
    request: (id, ifMatch) => ({
      method: 'DELETE',
      url: `/api/todos/${id}`,
      headers: { 'if-match': ifMatch },
    }),
    status: 204,
    applied: async (id) => {
      expect((await getTodo(id)).statusCode).toBe(404);
    },
  },
  {
    name: 'POST /api/todos/{id}/start',
    request: (id, ifMatch) => ({
      method: 'POST',
      url: `/api/todos/${id}/start`,
      headers: { 'if-match': ifMatch },
    }),
    status: 200,
    applied: async (id) => {
      expect((await getTodo(id)).json<Todo>().status).toBe('in_progress');
    },
  },
];

describe.each(WRITES.map((write): [string, ConditionalWrite] => [write.name, write]))(
  '%s with If-Match',
  (_name, { request, status, applied }) => {
    it.each([
      ['the current ETag', '"1"'],
      ['*', '*'],
      ['a list containing the current ETag', '"7", "1"'],
    ])('succeeds with %s', async (_label, ifMatch) => {
      const todo = await create();
      const response = await t.inject(request(todo.id, ifMatch));
      expect(response.statusCode).toBe(status);
      await applied(todo.id);
    });

    it('returns 412 precondition-failed for a stale ETag and changes nothing', async () => {
      const todo = await createAtVersion2();
      const response = await t.inject(request(todo.id, '"1"'));
      expect(response.statusCode).toBe(412);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.json()).toMatchObject({
        type: '/problems/precondition-failed',
        status: 412,
        code: 'precondition-failed',
      });
      const after = await getTodo(todo.id);
      expect(after.statusCode).toBe(200);
      expect(after.json<Todo>()).toEqual(todo);
    });

    it.each([
      ['a weak ETag W/"1" (strong comparison)', 'W/"1"'],
      ['a list without the current ETag', '"7", "8"'],
      ['an unquoted version', '1'],
    ])('returns 412 for %s', async (_label, ifMatch) => {
      const todo = await create();
      const response = await t.inject(request(todo.id, ifMatch));
      expect(response.statusCode).toBe(412);
      expect(response.json()).toMatchObject({ code: 'precondition-failed' });
      expect((await getTodo(todo.id)).json<Todo>()).toEqual(todo);
    });

    it.each([['"1"'], ['*']])('returns 404 on a missing todo with If-Match %s', async (ifMatch) => {
      const response = await t.inject(request(MISSING_ID, ifMatch));
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ code: 'not-found' });
    });
  },
);
