/**
 * The public Todo-Backend spec suite (TodoBackend/todo-backend-js-spec, `js/specs.js`): its 16
 * cases in its 4 groups, under their own names, run over real HTTP against `npm start` in
 * anonymous mode. The client below behaves like the spec's browser runner: every request carries
 * `Content-Type: application/json` (GET and DELETE too, with an empty body), is preceded by the
 * CORS preflight a browser would send from www.todobackend.com, accepts any 2xx, and parses
 * bodies with `JSON.parse`.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertMatchesOpenApi, type OpenApiDocument } from './helpers/openapi-contract.js';
import { spawnServer, type ServerProcess } from './helpers/spawn-server.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

const ORIGIN = 'http://www.todobackend.com';
/** Bounds every request, so that a hung server fails the case instead of the whole run. */
const REQUEST_TIMEOUT_MS = 5_000;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

interface Todo {
  readonly title: string;
  readonly completed: boolean;
  readonly url: string;
  readonly order: number;
}

let server: ServerProcess;
let database: TestDatabase;
let apiRoot: string;
/** The server's own OpenAPI document: every answer below must match it. */
let document: OpenApiDocument;

function headerList(value: string | null): string[] {
  return (value ?? '').split(',').map((item) => item.trim().toLowerCase());
}

/** The preflight a browser sends before a non-simple request; it must let the request through. */
async function preflight(method: Method, url: string): Promise<void> {
  const response = await fetch(url, {
    method: 'OPTIONS',
    headers: {
      Origin: ORIGIN,
      'Access-Control-Request-Method': method,
      'Access-Control-Request-Headers': 'content-type',
    },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  await response.arrayBuffer();
  expect(response.status, `preflight for ${method} ${url}`).toBeGreaterThanOrEqual(200);
  expect(response.status, `preflight for ${method} ${url}`).toBeLessThan(300);
  expect(['*', ORIGIN]).toContain(response.headers.get('access-control-allow-origin'));
  const methods = headerList(response.headers.get('access-control-allow-methods'));
  expect(methods.includes('*') || methods.includes(method.toLowerCase())).toBe(true);
  const headers = headerList(response.headers.get('access-control-allow-headers'));
  expect(headers.includes('*') || headers.includes('content-type')).toBe(true);
}

/**
 * One call as the spec's `ajax` helper makes it: preflighted, JSON content type on every method,
 * an empty body unless one is given, any 2xx accepted. Returns the raw body text.
 */
async function call(method: Method, url: string, body?: unknown): Promise<string> {
  await preflight(method, url);
  const init: RequestInit = {
    method,
    headers: { Origin: ORIGIN, 'Content-Type': 'application/json' },
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  };
  // fetch refuses a body on GET; the browser sends none there either, just the header.
  if (method !== 'GET') init.body = body === undefined ? '' : JSON.stringify(body);
  const response = await fetch(url, init);
  const text = await response.text();
  assertMatchesOpenApi(
    document,
    { method, url: new URL(url).pathname },
    { statusCode: response.status, headers: Object.fromEntries(response.headers), body: text },
  );
  expect(response.status, `${method} ${url} answered ${text}`).toBeGreaterThanOrEqual(200);
  expect(response.status, `${method} ${url} answered ${text}`).toBeLessThan(300);
  expect(['*', ORIGIN]).toContain(response.headers.get('access-control-allow-origin'));
  return text;
}

/** A todo's `url` must be absolute: the spec's runners resolve nothing against the API root. */
function expectAbsoluteTodoUrl(todo: Todo): void {
  expect(typeof todo.url).toBe('string');
  expect(URL.canParse(todo.url)).toBe(true);
  expect(todo.url.startsWith(`${apiRoot}/`)).toBe(true);
}

async function getRoot(): Promise<Todo[]> {
  const list = JSON.parse(await call('GET', apiRoot)) as Todo[];
  expect(Array.isArray(list)).toBe(true);
  for (const todo of list) expectAbsoluteTodoUrl(todo);
  return list;
}

async function getTodo(url: string): Promise<Todo> {
  return JSON.parse(await call('GET', url)) as Todo;
}

async function postRoot(body: Record<string, unknown>): Promise<Todo> {
  const todo = JSON.parse(await call('POST', apiRoot, body)) as Todo;
  expectAbsoluteTodoUrl(todo);
  return todo;
}

async function patchTodo(url: string, body: Record<string, unknown>): Promise<Todo> {
  const todo = JSON.parse(await call('PATCH', url, body)) as Todo;
  expectAbsoluteTodoUrl(todo);
  return todo;
}

async function deleteRoot(): Promise<void> {
  await call('DELETE', apiRoot);
}

beforeAll(async () => {
  database = await createTestDatabase('todo-backend-');
  server = await spawnServer({
    AUTH_MODE: 'anonymous',
    DATABASE_URL: database.url,
    PUBLIC_BASE_URL: '',
  });
  apiRoot = `${server.baseUrl}/api/todos`;
  document = (await (await fetch(`${server.baseUrl}/api/openapi.json`)).json()) as OpenApiDocument;
});

afterAll(async () => {
  await server.stop();
  await database.drop();
});

describe('Todo-Backend API residing at <apiRoot> (/api/todos, anonymous mode)', () => {
  describe('the pre-requisites', () => {
    it('the api root responds to a GET (i.e. the server is up and accessible, CORS headers are set up)', async () => {
      const text = await call('GET', apiRoot);
      expect(typeof text).toBe('string');
    });

    it('the api root responds to a POST with the todo which was posted to it', async () => {
      const todo = await postRoot({ title: 'a todo' });
      expect(todo).toHaveProperty('title', 'a todo');
    });

    it('the api root responds successfully to a DELETE', async () => {
      await deleteRoot();
    });

    it('after a DELETE the api root responds to a GET with a JSON representation of an empty array', async () => {
      await deleteRoot();
      expect(await getRoot()).toEqual([]);
    });
  });

  describe('storing new todos by posting to the root url', () => {
    beforeEach(async () => {
      await deleteRoot();
    });

    it('adds a new todo to the list of todos at the root url', async () => {
      await postRoot({ title: 'walk the dog' });
      const list = await getRoot();
      expect(list).toHaveLength(1);
      expect(list[0]).toHaveProperty('title', 'walk the dog');
    });

    it('sets up a new todo as initially not completed', async () => {
      const created = await postRoot({ title: 'blah' });
      expect(created.completed).toBe(false);
      const list = await getRoot();
      expect(list[0]?.completed).toBe(false);
    });

    it('each new todo has a url', async () => {
      const created = await postRoot({ title: 'blah' });
      expect(typeof created.url).toBe('string');
      const list = await getRoot();
      expect(typeof list[0]?.url).toBe('string');
    });

    it('each new todo has a url, which returns a todo', async () => {
      const created = await postRoot({ title: 'my todo' });
      const fetched = await getTodo(created.url);
      expect(fetched).toHaveProperty('title', 'my todo');
    });
  });

  describe('working with an existing todo', () => {
    beforeEach(async () => {
      await deleteRoot();
    });

    it('can navigate from a list of todos to an individual todo via urls', async () => {
      await Promise.all([
        postRoot({ title: 'todo the first' }),
        postRoot({ title: 'todo the second' }),
      ]);
      const list = await getRoot();
      expect(list).toHaveLength(2);
      const first = list[0];
      if (first === undefined) throw new Error('the list is empty');
      const fetched = await getTodo(first.url);
      expect(fetched).toHaveProperty('title');
    });

    it("can change the todo's title by PATCHing to the todo's url", async () => {
      const created = await postRoot({ title: 'initial title' });
      const patched = await patchTodo(created.url, { title: 'bathe the cat' });
      expect(patched).toHaveProperty('title', 'bathe the cat');
    });

    it("can change the todo's completedness by PATCHing to the todo's url", async () => {
      const created = await postRoot({ title: 'an uncompleted todo' });
      const patched = await patchTodo(created.url, { completed: true });
      expect(patched.completed).toBe(true);
    });

    it('changes to a todo are persisted and show up when re-fetching the todo', async () => {
      const created = await postRoot({ title: 'initial title' });
      await patchTodo(created.url, { title: 'changed title', completed: true });

      const fetched = await getTodo(created.url);
      expect(fetched).toHaveProperty('title', 'changed title');
      expect(fetched.completed).toBe(true);

      const list = await getRoot();
      expect(list).toHaveLength(1);
      expect(list[0]).toHaveProperty('title', 'changed title');
      expect(list[0]?.completed).toBe(true);
    });

    it("can delete a todo making a DELETE request to the todo's url", async () => {
      const created = await postRoot({ title: 'a todo to delete' });
      await call('DELETE', created.url);
      expect(await getRoot()).toEqual([]);
    });
  });

  // No beforeEach here, as in the spec: todos left by the groups above are still stored.
  describe('tracking todo order', () => {
    it('can create a todo with an order field', async () => {
      const created = await postRoot({ title: 'blah', order: 523 });
      expect(created.order).toBe(523);
    });

    it('can PATCH a todo to change its order', async () => {
      const created = await postRoot({ title: 'blah', order: 10 });
      const patched = await patchTodo(created.url, { order: 95 });
      expect(patched.order).toBe(95);
    });

    it("remembers changes to a todo's order", async () => {
      const created = await postRoot({ title: 'blah', order: 10 });
      const patched = await patchTodo(created.url, { order: 95 });
      const fetched = await getTodo(patched.url);
      expect(fetched.order).toBe(95);
    });
  });
});
