import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertMatchesOpenApi, openApiDocumentOf } from './helpers/openapi-contract.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

interface Exchange {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: unknown;
}

interface TodoBody {
  id: string;
  url: string;
  title: string;
  status: string;
  version: number;
}

/**
 * Every endpoint once over a real socket, not `inject`: what a client on the network sees,
 * each response checked against the OpenAPI document like the inject suites do.
 */
describe('the API over real HTTP', () => {
  let t: TestApp;
  let base: string;

  async function call(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Exchange> {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    assertMatchesOpenApi(
      openApiDocumentOf(t.app),
      { method, url: path },
      { statusCode: response.status, headers: Object.fromEntries(response.headers), body: text },
    );
    return {
      status: response.status,
      headers: response.headers,
      text,
      body:
        text !== '' && response.headers.get('content-type')?.includes('json')
          ? JSON.parse(text)
          : undefined,
    };
  }

  beforeAll(async () => {
    t = await buildTestApp({ env: { PUBLIC_BASE_URL: '' } });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates, reads, lists, updates, transitions and deletes a todo', async () => {
    const created = await call('POST', '/api/todos', {
      title: 'Write the report',
      priority: 'high',
    });
    expect(created.status).toBe(201);
    const todo = created.body as TodoBody;
    expect(created.headers.get('location')).toBe(`${base}/api/todos/${todo.id}`);
    expect(todo.url).toBe(`${base}/api/todos/${todo.id}`);
    expect(created.headers.get('etag')).toBe('"1"');

    const detail = await call('GET', `/api/todos/${todo.id}`);
    expect((detail.body as TodoBody).title).toBe('Write the report');
    const unchanged = await call('GET', `/api/todos/${todo.id}`, undefined, {
      'if-none-match': '"1"',
    });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe('"1"');
    expect(unchanged.headers.get('content-type')).toBeNull();
    expect(unchanged.headers.get('content-length')).toBeNull();

    const list = await call('GET', '/api/todos?status=open');
    expect((list.body as TodoBody[]).map((item) => item.id)).toEqual([todo.id]);

    const replaced = await call(
      'PUT',
      `/api/todos/${todo.id}`,
      { title: 'Write the final report' },
      { 'if-match': '"1"' },
    );
    expect(replaced.body as TodoBody).toMatchObject({
      title: 'Write the final report',
      version: 2,
    });

    const patched = await call('PATCH', `/api/todos/${todo.id}`, { status: 'in_progress' });
    expect(patched.body as TodoBody).toMatchObject({ status: 'in_progress', version: 3 });

    for (const [action, status] of [
      ['block', 'blocked'],
      ['defer', 'deferred'],
      ['start', 'in_progress'],
      ['complete', 'completed'],
      ['reopen', 'open'],
      ['cancel', 'cancelled'],
    ] as const) {
      const moved = await call('POST', `/api/todos/${todo.id}/${action}`);
      expect(moved.status).toBe(200);
      expect((moved.body as TodoBody).status).toBe(status);
    }
    const refused = await call('POST', `/api/todos/${todo.id}/start`);
    expect(refused.status).toBe(409);

    expect((await call('DELETE', `/api/todos/${todo.id}`)).status).toBe(204);
    expect((await call('GET', `/api/todos/${todo.id}`)).status).toBe(404);
    expect((await call('DELETE', '/api/todos')).status).toBe(204);
  });

  it('answers the health, readiness, OpenAPI and problem documentation endpoints', async () => {
    expect((await call('GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await call('GET', '/readyz')).body).toEqual({
      status: 'ready',
      checks: { database: 'ok' },
    });
    expect(((await call('GET', '/api/openapi.json')).body as { openapi: string }).openapi).toBe(
      '3.1.0',
    );
    const problem = await call('GET', '/problems/not-found');
    expect(problem.headers.get('content-type')).toMatch(/^text\/html/);
    expect(problem.text).toContain('not-found');
  });

  it('answers an unknown route and a wrong method with problem documents', async () => {
    const missing = await call('GET', '/api/nothing');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const wrongMethod = await call('PUT', '/api/todos');
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('DELETE, GET, HEAD, OPTIONS, POST');
  });
});
