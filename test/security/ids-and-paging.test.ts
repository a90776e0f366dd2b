import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOT_FOUND_DETAIL } from '../../src/http/app-error.js';
import type { ProblemCode } from '../../src/http/problem-codes.js';
import type { Todo } from '../../src/todos/todo.schemas.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { SERVICE_ENV, withDefaults } from './defaults.js';

/**
 * RELIABILITY.md §5 rows 19 and 20, through `inject`: odd ids on every `:id` route answer 404
 * (the documented answer for a malformed id) or 400 for a broken escape, never 500, and touch no
 * todo; junk pagination answers 400 and valid pages never exceed their limit.
 */

const UNKNOWN_ID = '01a1fe80-9e7e-701f-975b-c311c00148bc';
/** Stands for the id of a real todo in the table below. */
const REAL = '{id}';
/** What a malformed id gets: the same answer as an id that names nothing. */
const ID_NOT_FOUND = NOT_FOUND_DETAIL;

/**
 * [label, path segment, answer]. `route` 404s come from a dot-segment that moves the path off the
 * `:id` route altogether; `id` 404s are the documented malformed-id answer.
 */
const ODD_IDS: readonly (readonly [string, string, 'id' | 'route' | ProblemCode])[] = [
  ['not a UUID', 'not-a-uuid', 'id'],
  ['unknown', UNKNOWN_ID, 'id'],
  ['a path traversal', '..%2F..%2Fetc%2Fpasswd', 'id'],
  ['..%2F..', '..%2F..', 'id'],
  ['%2e%2e (a dot-segment)', '%2e%2e', 'route'],
  ['%2e%2e%2f%2e%2e', '%2e%2e%2f%2e%2e', 'id'],
  ['double-encoded dots', '%252e%252e%252f', 'id'],
  ['unicode one-dot leaders', '%E2%80%A4%E2%80%A4%2F', 'id'],
  ['fullwidth dots and slash', '%EF%BC%8E%EF%BC%8E%EF%BC%8F', 'id'],
  ['a NUL', '%00', 'id'],
  ['the real id + NUL', `${REAL}%00`, 'id'],
  ['the real id + a space', `${REAL}%20`, 'id'],
  ['the real id after a traversal', `..%2F${REAL}`, 'id'],
  ['the real id + %2F..', `${REAL}%2F..`, 'id'],
  ['a SQL injection', "'%20OR%201=1--", 'id'],
  ['a LIKE wildcard', '%25', 'id'],
  ['100 characters', 'a'.repeat(100), 'id'],
  ['101 characters (over the router limit)', 'a'.repeat(101), 'id'],
  ['200 characters', 'a'.repeat(200), 'id'],
  ['a truncated escape %E0%A4%A', '%E0%A4%A', 'malformed-request'],
  ['overlong UTF-8 dots', '%C0%AE%C0%AE%2F', 'malformed-request'],
  ['a lone %', '%', 'malformed-request'],
  ['an escape of a lone surrogate', '%ED%A0%80', 'malformed-request'],
];

describe('odd ids on every :id route (row 19, inject)', () => {
  let t: TestApp;
  let todo: Todo;

  beforeAll(async () => {
    t = await buildTestApp({ env: SERVICE_ENV });
    const created = await t.inject({
      method: 'POST',
      url: '/api/todos',
      headers: withDefaults({ 'content-type': 'application/json' }),
      payload: '{"title":"target"}',
    });
    expect(created.statusCode).toBe(201);
    todo = created.json<Todo>();
  });

  afterAll(async () => {
    await t.close();
  });

  it.each(ODD_IDS)(
    'answers an id that is %s on every :id route without touching a todo',
    async (_label, segment, answer) => {
      const routes = t.app.routeIndex.routes().filter((route) => route.url.includes(':id'));
      expect(routes.length).toBeGreaterThanOrEqual(10);
      for (const { method, url: template } of routes) {
        const url = template.replace(':id', segment.replace(REAL, todo.id));
        const writes = method === 'PUT' || method === 'PATCH';
        const response = await t.inject({
          method,
          url,
          headers: withDefaults(
            writes || method === 'POST' ? { 'content-type': 'application/json' } : {},
          ),
          ...(writes
            ? {
                payload: template.startsWith('/api/webhooks')
                  ? '{"description":"hijacked"}'
                  : '{"title":"hijacked"}',
              }
            : method === 'POST'
              ? { payload: '{}' }
              : {}),
        });
        const context = `${method} ${url} → ${response.statusCode}`;
        const code: ProblemCode = answer === 'id' || answer === 'route' ? 'not-found' : answer;
        if (method === 'HEAD') {
          expect(response.statusCode, context).toBe(code === 'not-found' ? 404 : 400);
          expect(response.headers['content-type'], context).toMatch(/^application\/problem\+json/);
          continue;
        }
        const problem = expectProblem(response, code === 'not-found' ? 404 : 400, code);
        if (answer === 'id') {
          expect(problem.detail, context).toBe(ID_NOT_FOUND);
          expect(problem.instance, context).toBe(url.split('?')[0]);
        }
      }
      const after = await t.inject({
        method: 'GET',
        url: `/api/todos/${todo.id}`,
        headers: withDefaults(),
      });
      expect(after.json()).toEqual(todo);
      const list = await t.inject({ method: 'GET', url: '/api/todos', headers: withDefaults() });
      expect(list.json()).toEqual([todo]);
    },
  );
});

const TODOS = 205;

describe('junk pagination (row 20, inject)', () => {
  let t: TestApp;
  let firstCursor: string;

  /** The `cursor` of a response's `Link: rel="next"`. */
  function nextCursor(link: unknown): string | undefined {
    const url = /<([^>]+)>;\s*rel="next"/.exec(typeof link === 'string' ? link : '')?.[1];
    return url === undefined ? undefined : (new URL(url).searchParams.get('cursor') ?? undefined);
  }

  async function list(query: string) {
    return t.inject({ method: 'GET', url: `/api/todos?${query}`, headers: withDefaults() });
  }

  beforeAll(async () => {
    t = await buildTestApp({ env: SERVICE_ENV });
    // Concurrent creates share group commits: a few hundred todos in well under a second.
    const created = await Promise.all(
      Array.from({ length: TODOS }, (_, i) =>
        t.inject({
          method: 'POST',
          url: '/api/todos',
          headers: withDefaults({ 'content-type': 'application/json' }),
          payload: JSON.stringify({ title: `todo ${i}`, order: i }),
        }),
      ),
    );
    for (const response of created) expect(response.statusCode).toBe(201);
    const page = await list('limit=2');
    const cursor = nextCursor(page.headers.link);
    expect(cursor).toBeDefined();
    firstCursor = cursor ?? '';
  });

  afterAll(async () => {
    await t.close();
  });

  it.each([
    '-1',
    '0',
    '1.5',
    '0x10',
    '1e2',
    'Infinity',
    '-Infinity',
    '1e309',
    'NaN',
    '',
    '+1',
    '%201',
    '01',
    '1.0',
    '1,2',
    'abc',
    '%00',
    '%D9%A1',
    '9'.repeat(16),
    '-0',
  ])('returns 400 invalid-parameter for limit=%s', async (limit) => {
    const response = await list(`limit=${limit}`);
    const problem = expectProblem(response, 400, 'invalid-parameter', { instance: '/api/todos' });
    expect(problem.errors?.map((error) => error.pointer)).toEqual(['limit']);
  });

  it.each([
    ['limit', 'limit=1&limit=2'],
    ['limit', 'limit=&limit=5'],
    ['limit', 'limit[]=5'],
    ['cursor', 'cursor={c}&cursor={c}'],
    ['sort', 'sort=title&sort=order'],
  ])('returns 400 for a repeated or array-shaped %s (%s)', async (parameter, query) => {
    const response = await list(query.replaceAll('{c}', firstCursor));
    expect(response.statusCode, response.body).toBe(400);
    const problem = response.json<{ code: string; errors?: { pointer: string }[] }>();
    expect(['invalid-parameter', 'unknown-parameter']).toContain(problem.code);
    expect(problem.errors?.[0]?.pointer.startsWith(parameter)).toBe(true);
  });

  it('answers a 10 KB limit or cursor with 414 under the default 8 KiB URL limit', async () => {
    for (const query of [`limit=${'9'.repeat(10_240)}`, `cursor=${'a'.repeat(10_240)}`]) {
      const response = await list(query);
      expectProblem(response, 414, 'uri-too-long', { instance: '/api/todos' });
    }
  });

  it.each([
    ['limit', `limit=${'9'.repeat(10_240)}`],
    ['limit', `limit=${'x'.repeat(10_240)}`],
    ['cursor', `cursor=${'a'.repeat(10_240)}`],
  ])(
    'returns 400 invalid-parameter for a 10 KB %s when the URL limit lets it through',
    async (parameter, query) => {
      const wide = await buildTestApp({ env: { ...SERVICE_ENV, MAX_URL_LENGTH: '16384' } });
      try {
        const response = await wide.inject({
          method: 'GET',
          url: `/api/todos?${query}`,
          headers: withDefaults(),
        });
        expectProblem(response, 400, 'invalid-parameter', { pointer: parameter });
      } finally {
        await wide.close();
      }
    },
  );

  /** One character of `text` at `index` replaced by another base64url character. */
  const flip = (text: string, index: number) =>
    text.slice(0, index) + (text[index] === 'A' ? 'B' : 'A') + text.slice(index + 1);

  it.each([
    ['a changed payload character', (c: string) => flip(c, 3)],
    ['a changed signature character', (c: string) => flip(c, c.length - 2)],
    ['no signature', (c: string) => c.split('.')[0] ?? ''],
    ['an empty signature', (c: string) => `${c.split('.')[0] ?? ''}.`],
    ['a third part', (c: string) => `${c}.x`],
    ['the last character cut off', (c: string) => c.slice(0, -1)],
    ['swapped halves', (c: string) => c.split('.').reverse().join('.')],
    [
      'a forged payload with the real signature',
      (c: string) =>
        `${Buffer.from(JSON.stringify({ k: [0, '2000-01-01T00:00:00.000Z', 'x'], f: '' })).toString('base64url')}.${c.split('.')[1] ?? ''}`,
    ],
    ['a plain garbage string', () => 'garbage'],
    ['a JSON payload', () => encodeURIComponent('{"k":[1],"f":""}')],
  ])('returns 400 invalid-cursor for a cursor with %s', async (_label, tamper) => {
    const response = await list(`limit=2&cursor=${tamper(firstCursor)}`);
    expectProblem(response, 400, 'invalid-cursor', { instance: '/api/todos', pointer: 'cursor' });
  });

  it('returns 400 invalid-cursor for a cursor reused with another filter or sort', async () => {
    for (const query of ['status=open', 'sort=title', 'q=todo']) {
      const response = await list(`limit=2&${query}&cursor=${firstCursor}`);
      expectProblem(response, 400, 'invalid-cursor', { instance: '/api/todos' });
    }
  });

  it('returns 400 for an empty cursor', async () => {
    const response = await list('cursor=');
    expectProblem(response, 400, 'invalid-parameter', { pointer: 'cursor' });
  });

  it.each([
    ['1', 1],
    ['2', 2],
    ['10', 10],
    ['50', 50],
    ['200', 200],
    ['201 (capped)', 200],
    ['500 (capped)', 200],
    ['999999999999999 (capped)', 200],
  ])('answers limit=%s with at most that many todos', async (limit, expected) => {
    const response = await list(`limit=${limit.split(' ')[0] ?? ''}`);
    expect(response.statusCode).toBe(200);
    expect(response.json<Todo[]>()).toHaveLength(expected);
    expect(nextCursor(response.headers.link)).toBeDefined();
  });

  it('answers the default page with 50 todos', async () => {
    const response = await list('');
    expect(response.statusCode).toBe(200);
    expect(response.json<Todo[]>()).toHaveLength(50);
  });

  it('pages through every todo exactly once with limit=7, no page over 7', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < Math.ceil(TODOS / 7) + 2; page++) {
      const response = await list(`limit=7${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      expect(response.statusCode).toBe(200);
      const todos = response.json<Todo[]>();
      expect(todos.length).toBeLessThanOrEqual(7);
      seen.push(...todos.map((todo) => todo.id));
      cursor = nextCursor(response.headers.link);
      if (cursor === undefined) break;
    }
    expect(cursor).toBeUndefined();
    expect(seen).toHaveLength(TODOS);
    expect(new Set(seen).size).toBe(TODOS);
  });
});
