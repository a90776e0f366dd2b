import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROBLEM_CODES, type ProblemCode } from '../src/http/problem-codes.js';
import { expectProblem } from './helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const JSON_HEADERS = { 'content-type': 'application/json' };
const PROBLEM_KEYS = ['code', 'detail', 'instance', 'request_id', 'status', 'title', 'type'];

describe('HTTP errors (inject)', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  async function createTodo(): Promise<string> {
    const response = await t.inject({
      method: 'POST',
      url: '/api/todos',
      headers: JSON_HEADERS,
      payload: JSON.stringify({ title: 'probe' }),
    });
    expect(response.statusCode).toBe(201);
    return response.json<{ id: string }>().id;
  }

  describe('routing', () => {
    it('returns 404 not-found as a problem for an unknown route', async () => {
      const response = await t.inject({ method: 'GET', url: '/no/such/route' });
      expectProblem(response, 404, 'not-found', { instance: '/no/such/route' });
    });

    it('uses the path without the query string as instance', async () => {
      const response = await t.inject({ method: 'GET', url: '/nowhere?secret=1' });
      expectProblem(response, 404, 'not-found', { instance: '/nowhere' });
    });

    it.each(['PATCH', 'PUT'] as const)(
      'returns 405 with Allow for %s /api/todos',
      async (method) => {
        const response = await t.inject({ method, url: '/api/todos' });
        expectProblem(response, 405, 'method-not-allowed', { instance: '/api/todos' });
        const allow = String(response.headers.allow).split(', ');
        expect(allow).toEqual(expect.arrayContaining(['GET', 'POST', 'DELETE', 'OPTIONS']));
        expect(allow).not.toContain(method);
      },
    );

    it('returns 405 with Allow for POST on a todo', async () => {
      const response = await t.inject({ method: 'POST', url: '/api/todos/some-id' });
      expectProblem(response, 405, 'method-not-allowed', { instance: '/api/todos/some-id' });
      expect(String(response.headers.allow).split(', ')).toEqual(
        expect.arrayContaining(['GET', 'PUT', 'PATCH', 'DELETE']),
      );
    });
  });

  describe('content negotiation', () => {
    it('returns 406 for Accept: text/html on /api/todos', async () => {
      const response = await t.inject({
        method: 'GET',
        url: '/api/todos',
        headers: { accept: 'text/html' },
      });
      expectProblem(response, 406, 'not-acceptable', { instance: '/api/todos' });
    });

    it.each(['*/*', 'application/*', 'application/json;q=0.5, text/html', ''])(
      'returns 200 for Accept: %j',
      async (accept) => {
        const response = await t.inject({ method: 'GET', url: '/api/todos', headers: { accept } });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^application\/json/);
      },
    );

    it('returns 415 for a text/plain body', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: { 'content-type': 'text/plain' },
        payload: 'buy milk',
      });
      expectProblem(response, 415, 'unsupported-media-type', { instance: '/api/todos' });
    });

    it('returns 415 for application/merge-patch+json on POST', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: '{"title":"a"}',
      });
      expectProblem(response, 415, 'unsupported-media-type', { instance: '/api/todos' });
    });

    it('returns 415 for a body declared charset=latin1', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: { 'content-type': 'application/json; charset=latin1' },
        payload: '{"title":"a"}',
      });
      const problem = expectProblem(response, 415, 'unsupported-media-type', {
        instance: '/api/todos',
      });
      expect(problem.detail).toContain('latin1');
    });

    it('accepts charset=utf-8 on a JSON body', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: { 'content-type': 'application/json; charset=UTF-8' },
        payload: '{"title":"a"}',
      });
      expect(response.statusCode).toBe(201);
    });

    it.each(['GET', 'DELETE'] as const)(
      'accepts %s /api/todos with Content-Type: application/json and an empty body',
      async (method) => {
        await createTodo();
        const response = await t.inject({ method, url: '/api/todos', headers: JSON_HEADERS });
        expect(response.statusCode).toBe(method === 'GET' ? 200 : 204);
      },
    );
  });

  describe('JSON bodies', () => {
    it('returns 400 malformed-json for a syntax error', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload: '{"title":',
      });
      expectProblem(response, 400, 'malformed-json', { instance: '/api/todos' });
    });

    it('parses a body of exactly 64 KiB (then 422 for the too long description)', async () => {
      const prefix = '{"title":"a","description":"';
      const payload = prefix + 'x'.repeat(64 * 1024 - prefix.length - 2) + '"}';
      expect(Buffer.byteLength(payload)).toBe(64 * 1024);
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload,
      });
      expectProblem(response, 422, 'validation-error', { instance: '/api/todos' });
    });
  });

  describe('URL limits and query parameters', () => {
    it('returns 414 uri-too-long for a request target over 8192 bytes', async () => {
      const base = '/api/todos?q=';
      const url = base + 'a'.repeat(8193 - base.length);
      expect(url.length).toBe(8193);
      const response = await t.inject({ method: 'GET', url });
      expectProblem(response, 414, 'uri-too-long', { instance: '/api/todos' });
      expect(response.headers['access-control-allow-origin']).toBe('*');
    });

    it('does not return 414 for a request target of exactly 8192 bytes', async () => {
      const base = '/nowhere?q=';
      const url = base + 'a'.repeat(8192 - base.length);
      expect(url.length).toBe(8192);
      const response = await t.inject({ method: 'GET', url });
      expectProblem(response, 404, 'not-found', { instance: '/nowhere' });
    });
  });

  describe('internal errors', () => {
    /** Every query of todos fails; renamed, since todo_labels' key blocks a drop on PostgreSQL. */
    const breakTodosTable = () =>
      sql`alter table todos rename to todos_gone`.execute(t.database.db);

    it('returns 500 internal without any detail of the cause when the database fails', async () => {
      await breakTodosTable();
      const response = await t.inject({
        method: 'GET',
        url: '/api/todos',
        headers: { 'x-request-id': 'trace-500' },
      });
      const problem = expectProblem(response, 500, 'internal', { instance: '/api/todos' });
      expect(Object.keys(problem).sort()).toEqual(PROBLEM_KEYS);
      expect(problem.detail).toBe('The server failed to handle this request.');
      expect(problem.request_id).toBe('trace-500');
      expect(response.body).not.toMatch(
        /stack|sqlite|select |no such table|does not exist|node_modules|\.ts:/i,
      );
    });

    it('returns 500 internal on a write when the database fails', async () => {
      await breakTodosTable();
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload: '{"title":"a"}',
      });
      const problem = expectProblem(response, 500, 'internal', { instance: '/api/todos' });
      expect(Object.keys(problem).sort()).toEqual(PROBLEM_KEYS);
      expect(response.body).not.toMatch(
        /stack|sqlite|insert |no such table|does not exist|node_modules/i,
      );
    });
  });

  describe('X-Request-Id', () => {
    it('echoes a safe X-Request-Id in the header and the problem', async () => {
      const response = await t.inject({
        method: 'GET',
        url: '/nowhere',
        headers: { 'x-request-id': 'abc-123' },
      });
      expect(response.headers['x-request-id']).toBe('abc-123');
      expectProblem(response, 404, 'not-found', { instance: '/nowhere' });
    });

    it('echoes a safe X-Request-Id on a success', async () => {
      const response = await t.inject({
        method: 'GET',
        url: '/api/todos',
        headers: { 'x-request-id': 'abc-123' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-request-id']).toBe('abc-123');
    });

    it('generates a different id for every request without one', async () => {
      const first = await t.inject({ method: 'GET', url: '/healthz' });
      const second = await t.inject({ method: 'GET', url: '/healthz' });
      expect(first.headers['x-request-id']).toMatch(UUID);
      expect(second.headers['x-request-id']).toMatch(UUID);
      expect(first.headers['x-request-id']).not.toBe(second.headers['x-request-id']);
    });

    it.each([
      ['a 200', 'GET', '/api/todos'],
      ['a 404', 'GET', '/nowhere'],
      ['a 405', 'PATCH', '/api/todos'],
      ['a bad percent-escape', 'GET', '/api/todos/%E0%A4%A'],
      ['an over-long id', 'GET', `/api/todos/${'a'.repeat(200)}`],
      ['a 414', 'GET', `/api/todos?q=${'a'.repeat(9000)}`],
      ['a preflight', 'OPTIONS', '/api/todos'],
    ] as const)('sets X-Request-Id on %s', async (_label, method, url) => {
      const response = await t.inject(
        {
          method,
          url,
          headers: { origin: 'https://x.example', 'access-control-request-method': 'GET' },
        },
        { contract: false },
      );
      expect(response.headers['x-request-id']).toMatch(UUID);
    });
  });

  describe('CORS', () => {
    const preflightHeaders = {
      origin: 'https://client.example',
      'access-control-request-method': 'PUT',
      'access-control-request-headers': 'content-type, if-match, idempotency-key',
    };

    it.each([
      '/api/todos',
      '/api/todos/01a1fe80-9e7e-701f-975b-c311c00148bc',
      '/api/todos/01a1fe80-9e7e-701f-975b-c311c00148bc/complete',
      '/no/such/path',
    ])('answers a preflight on %s with 204 and the allowed methods and headers', async (url) => {
      const response = await t.inject({ method: 'OPTIONS', url, headers: preflightHeaders });
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect(response.headers['access-control-allow-origin']).toBe('*');
      const methods = String(response.headers['access-control-allow-methods']).split(/,\s*/);
      expect(methods).toEqual(
        expect.arrayContaining(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']),
      );
      const headers = String(response.headers['access-control-allow-headers'])
        .split(/,\s*/)
        .map((name) => name.toLowerCase());
      expect(headers).toEqual(
        expect.arrayContaining(['content-type', 'if-match', 'idempotency-key']),
      );
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    });

    it('exposes the paging, concurrency and tracing headers', async () => {
      const response = await t.inject({
        method: 'GET',
        url: '/api/todos',
        headers: { origin: 'https://client.example' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      const exposed = String(response.headers['access-control-expose-headers']).split(/,\s*/);
      expect(exposed).toEqual(
        expect.arrayContaining(['ETag', 'Location', 'Link', 'X-Request-Id', 'Idempotent-Replayed']),
      );
    });

    it('sets CORS headers on a 404', async () => {
      const response = await t.inject({
        method: 'GET',
        url: '/nowhere',
        headers: { origin: 'https://client.example' },
      });
      expectProblem(response, 404, 'not-found', { instance: '/nowhere' });
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-expose-headers']).toContain('X-Request-Id');
    });

    it('sets CORS headers on a 422', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: { ...JSON_HEADERS, origin: 'https://client.example' },
        payload: '{"title":""}',
      });
      expectProblem(response, 422, 'validation-error', { instance: '/api/todos' });
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-expose-headers']).toContain('X-Request-Id');
    });
  });

  describe('caching', () => {
    it('marks GET 200s private, no-cache', async () => {
      const id = await createTodo();
      for (const url of ['/api/todos', `/api/todos/${id}`]) {
        const response = await t.inject({ method: 'GET', url });
        expect(response.statusCode).toBe(200);
        expect(response.headers['cache-control']).toBe('private, no-cache');
      }
    });

    it('marks writes no-store', async () => {
      const created = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload: '{"title":"a"}',
      });
      expect(created.statusCode).toBe(201);
      expect(created.headers['cache-control']).toBe('no-store');
      const id = created.json<{ id: string }>().id;

      const patched = await t.inject({
        method: 'PATCH',
        url: `/api/todos/${id}`,
        headers: { 'content-type': 'application/merge-patch+json' },
        payload: '{"title":"b"}',
      });
      expect(patched.statusCode).toBe(200);
      expect(patched.headers['cache-control']).toBe('no-store');

      const deleted = await t.inject({ method: 'DELETE', url: `/api/todos/${id}` });
      expect(deleted.statusCode).toBe(204);
      expect(deleted.headers['cache-control']).toBe('no-store');
    });

    it('marks problems to GET requests no-store', async () => {
      const response = await t.inject({ method: 'GET', url: '/api/todos?limit=0' });
      expectProblem(response, 400, 'invalid-parameter', { instance: '/api/todos' });
    });
  });

  describe('documentation and probes', () => {
    it.each(Object.keys(PROBLEM_CODES) as ProblemCode[])(
      'serves /problems/%s as HTML',
      async (code) => {
        const response = await t.inject({ method: 'GET', url: `/problems/${code}` });
        expect(response.statusCode).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/html/);
        expect(response.body).toContain(`<code>${code}</code>`);
        expect(response.body).toContain(String(PROBLEM_CODES[code].status));
      },
    );

    it('returns 404 for an unknown problem code', async () => {
      const response = await t.inject({ method: 'GET', url: '/problems/no-such-code' });
      expectProblem(response, 404, 'not-found', { instance: '/problems/no-such-code' });
    });

    it('lists every problem code at /problems', async () => {
      const response = await t.inject({ method: 'GET', url: '/problems' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      for (const code of Object.keys(PROBLEM_CODES)) {
        expect(response.body).toContain(`href="/problems/${code}"`);
      }
    });

    it('serves Swagger UI at /docs without any external URL', async () => {
      const response = await t.inject({ method: 'GET', url: '/docs' });
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toContain('swagger-ui');
      expect(response.body).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
      expect(response.body).not.toMatch(/unpkg|jsdelivr|cdnjs/i);
      const script = /src="([^"]*swagger-ui-bundle\.js)"/.exec(response.body)?.[1];
      expect(script).toBeDefined();
      const bundle = await t.inject({ method: 'GET', url: script ?? '' });
      expect(bundle.statusCode).toBe(200);
    });

    it('answers /healthz and /readyz with 200', async () => {
      const health = await t.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(200);
      expect(health.json()).toEqual({ status: 'ok' });
      const ready = await t.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
    });
  });
});

describe('CORS with an explicit origin list', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp({ env: { CORS_ORIGINS: 'https://app.example' } });
  });
  afterEach(async () => {
    await t.close();
  });

  it('echoes an allowed origin with Vary: Origin', async () => {
    const response = await t.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { origin: 'https://app.example' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(String(response.headers.vary)).toMatch(/\bOrigin\b/i);
  });

  it('gives another origin no Access-Control-Allow-Origin', async () => {
    const response = await t.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { origin: 'https://evil.example' },
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    expect(String(response.headers.vary)).toMatch(/\bOrigin\b/i);
  });

  it('gives another origin no Access-Control-Allow-Origin on a preflight', async () => {
    const response = await t.inject({
      method: 'OPTIONS',
      url: '/api/todos',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    });
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
  });
});
