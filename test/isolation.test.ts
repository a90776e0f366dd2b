import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACTIONS } from '../src/todos/todo-transitions.js';
import { ListQuerySchema, type Todo } from '../src/todos/todo.schemas.js';
import { expectProblem } from './helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';
import { ownerChecksum } from './security/owner-checksum.js';

/**
 * Per-owner isolation beyond the authorization matrix (API.md §7, RELIABILITY.md §3 API1):
 * every filter, search, count, cursor, idempotency key and bulk delete sees only the caller's
 * todos, and nothing B sends to A's ids changes them.
 */

const OWNER_A = 'isolation-a';
const OWNER_B = 'isolation-b';

/** Both owners get these same todos, so every filter that matches one of A's matches B's twin. */
const SEED: readonly Record<string, unknown>[] = [
  {
    title: 'Buy milk',
    description: 'Semi-skimmed, two bottles',
    status: 'open',
    priority: 'high',
    labels: ['errands', 'home'],
    due_date: '2030-01-10',
  },
  {
    title: 'Write quarterly report',
    status: 'in_progress',
    priority: 'urgent',
    labels: ['work'],
    due_at: '2020-02-01T09:00:00Z',
  },
  { title: 'Call the plumber', status: 'blocked', priority: 'low', labels: ['home'] },
  { title: 'Read a book', status: 'deferred', description: 'Any novel will do' },
  {
    title: 'File taxes',
    status: 'completed',
    priority: 'normal',
    labels: ['errands'],
    due_date: '2020-04-15',
  },
  { title: 'Old idea', status: 'cancelled', order: -5 },
];

/** Every list parameter but `cursor` (tested on its own), with values that match something. */
const LIST_QUERIES: Readonly<Record<string, readonly string[]>> = {
  status: ['open', 'open,blocked', 'completed,cancelled'],
  completed: ['true', 'false'],
  priority: ['high', 'urgent,low', 'none'],
  labels: ['home', 'errands,home'],
  labels_any: ['work,home', 'errands'],
  due_before: ['2031-01-01', '2020-03-01T00:00:00Z'],
  due_after: ['2020-01-01', '2029-12-31'],
  overdue: ['true', 'false'],
  created_after: ['2000-01-01'],
  created_before: ['2999-01-01'],
  updated_since: ['2000-01-01T00:00:00Z'],
  q: ['milk', 'report', 'b', 'novel', 'semi skimmed'],
  sort: ['-priority', 'title', '-due_at', 'status,-created_at'],
  limit: ['1', '200'],
  include_deleted: ['true', 'false'],
};

let t: TestApp;
let a: string;
let b: string;
let idsOfA: string[];
let idsOfB: string[];

beforeEach(async () => {
  t = await buildTestApp({ env: { AUTH_MODE: 'required' } });
  a = await t.bearer(OWNER_A);
  b = await t.bearer(OWNER_B);
  idsOfA = [];
  idsOfB = [];
  for (const todo of SEED) {
    idsOfA.push((await create(a, todo)).id);
    idsOfB.push((await create(b, todo)).id);
  }
});
afterEach(async () => {
  await t.close();
});

function as(authorization: string, request: InjectOptions): Promise<LightMyRequestResponse> {
  return t.inject({ ...request, headers: { ...request.headers, authorization } });
}

async function create(authorization: string, payload: Record<string, unknown>): Promise<Todo> {
  const response = await as(authorization, { method: 'POST', url: '/api/todos', payload });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Todo>();
}

async function list(authorization: string, query = ''): Promise<LightMyRequestResponse> {
  const response = await as(authorization, { method: 'GET', url: `/api/todos${query}` });
  expect(response.statusCode, `${query}: ${response.body}`).toBe(200);
  return response;
}

const idsIn = (response: LightMyRequestResponse) => response.json<Todo[]>().map((todo) => todo.id);
const titlesIn = (response: LightMyRequestResponse) =>
  response.json<Todo[]>().map((todo) => todo.title);

const checksumOfA = () => ownerChecksum(t.database.db, OWNER_A);

describe('GET /api/todos', () => {
  it("never lists A's todos to B, with any filter, search, sort or page size", async () => {
    const covered = Object.keys(LIST_QUERIES).sort();
    const parameters = Object.keys(ListQuerySchema.properties).filter((name) => name !== 'cursor');
    expect(covered).toEqual(parameters.sort());

    expect(idsIn(await list(b)).sort()).toEqual([...idsOfB].sort());
    for (const [name, values] of Object.entries(LIST_QUERIES)) {
      let matched = 0;
      for (const value of values) {
        const query = `?${new URLSearchParams({ [name]: value }).toString()}`;
        const seenByB = await list(b, query);
        const ids = idsIn(seenByB);
        expect(
          ids.filter((id) => idsOfA.includes(id)),
          query,
        ).toEqual([]);
        expect(
          ids.every((id) => idsOfB.includes(id)),
          query,
        ).toBe(true);
        // B's twins of exactly what A sees: the filter really ran, over B's rows only.
        expect(titlesIn(seenByB), query).toEqual(titlesIn(await list(a, query)));
        matched += ids.length;
      }
      expect(matched, `${name} matched nothing: the check proves little`).toBeGreaterThan(0);
    }

    const everything = '?status=open,blocked&labels_any=home&q=b&sort=-priority&limit=200';
    expect(titlesIn(await list(b, everything))).toEqual(['Buy milk']);
    expect(idsIn(await list(b, everything))).toEqual([idsOfB[0]]);
  });

  it("counts only the caller's todos under Prefer: count=exact", async () => {
    await create(a, { title: 'Only A has this one' });
    await create(a, { title: 'And this one' });
    const count = async (authorization: string, query = '') => {
      const response = await as(authorization, {
        method: 'GET',
        url: `/api/todos${query}`,
        headers: { prefer: 'count=exact' },
      });
      expect(response.statusCode).toBe(200);
      return response.headers['x-total-count'];
    };
    expect(await count(b)).toBe(String(SEED.length));
    expect(await count(a)).toBe(String(SEED.length + 2));
    expect(await count(b, '?status=open')).toBe('1');
    expect(await count(a, '?status=open')).toBe('3');
    expect(await count(b, '?q=one')).toBe('0');
    expect(await count(b, '?limit=1')).toBe(String(SEED.length));
  });

  it("refuses A's cursor from B with 400 invalid-cursor", async () => {
    const first = await list(a, '?limit=2&sort=title');
    const link = first.headers.link;
    expect(typeof link).toBe('string');
    const next = /<([^>]+)>; rel="next"/.exec(String(link))?.[1] ?? '';
    const url = new URL(next);
    expect(url.searchParams.get('cursor')).toBeTruthy();

    const stolen = await as(b, { method: 'GET', url: `${url.pathname}${url.search}` });
    expectProblem(stolen, 400, 'invalid-cursor', { pointer: 'cursor' });

    // The same cursor still pages A's own list.
    const own = await list(a, url.search);
    expect(titlesIn(own)).toEqual(titlesIn(await list(a, '?limit=200&sort=title')).slice(2, 4));
  });
});

describe('Idempotency-Key', () => {
  it('is per owner: the same key from A and B creates two todos', async () => {
    const request: InjectOptions = {
      method: 'POST',
      url: '/api/todos',
      headers: { 'idempotency-key': 'shared-key-1' },
      payload: { title: 'Same key, same body' },
    };
    const fromA = await as(a, request);
    const fromB = await as(b, request);
    expect(fromA.statusCode).toBe(201);
    expect(fromB.statusCode).toBe(201);
    expect(fromB.headers['idempotent-replayed']).toBeUndefined();
    const todoOfA = fromA.json<Todo>();
    const todoOfB = fromB.json<Todo>();
    expect(todoOfB.id).not.toBe(todoOfA.id);

    const owners = await t.database.db
      .selectFrom('todos')
      .select(['id', 'owner_id'])
      .where('id', 'in', [todoOfA.id, todoOfB.id])
      .orderBy('owner_id')
      .execute();
    expect(owners).toEqual([
      { id: todoOfA.id, owner_id: OWNER_A },
      { id: todoOfB.id, owner_id: OWNER_B },
    ]);

    // Each owner's replay returns its own response.
    const replayA = await as(a, request);
    expect(replayA.headers['idempotent-replayed']).toBe('true');
    expect(replayA.json<Todo>().id).toBe(todoOfA.id);
    const replayB = await as(b, request);
    expect(replayB.headers['idempotent-replayed']).toBe('true');
    expect(replayB.json<Todo>().id).toBe(todoOfB.id);
  });

  it('does not tell B that A used a key, even with another body', async () => {
    const key = { 'idempotency-key': 'shared-key-2' };
    const fromA = await as(a, {
      method: 'POST',
      url: '/api/todos',
      headers: key,
      payload: { title: "A's body" },
    });
    expect(fromA.statusCode).toBe(201);
    const fromB = await as(b, {
      method: 'POST',
      url: '/api/todos',
      headers: key,
      payload: { title: "B's different body" },
    });
    expect(fromB.statusCode, fromB.body).toBe(201);
    expect(fromB.json<Todo>().title).toBe("B's different body");
  });

  it("never replays A's stored PATCH or action response to B", async () => {
    const id = idsOfA[0] ?? '';
    const patch: InjectOptions = {
      method: 'PATCH',
      url: `/api/todos/${id}`,
      headers: { 'idempotency-key': 'patch-key' },
      payload: { title: 'Patched by A' },
    };
    expect((await as(a, patch)).statusCode).toBe(200);
    const start: InjectOptions = {
      method: 'POST',
      url: `/api/todos/${id}/block`,
      headers: { 'idempotency-key': 'action-key' },
    };
    expect((await as(a, start)).statusCode).toBe(200);
    const before = await checksumOfA();

    for (const request of [patch, start]) {
      const response = await as(b, request);
      expectProblem(response, 404, 'not-found');
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      expect(response.body).not.toContain('Patched by A');
    }
    expect(await checksumOfA()).toBe(before);
  });
});

describe('DELETE /api/todos by B', () => {
  it("deletes B's matching todos and none of A's", async () => {
    const before = await checksumOfA();
    for (const query of ['?status=open', '?labels=home', '?q=milk', '?overdue=true', '']) {
      const response = await as(b, { method: 'DELETE', url: `/api/todos${query}` });
      expect(response.statusCode, query).toBe(204);
      expect(await checksumOfA(), query).toBe(before);
    }
    expect(idsIn(await list(b))).toEqual([]);
    expect(idsIn(await list(a)).sort()).toEqual([...idsOfA].sort());
  });
});

describe("B's writes to A's ids", () => {
  const WRITES: readonly ((id: string) => InjectOptions)[] = [
    (id) => ({ method: 'PUT', url: `/api/todos/${id}`, payload: { title: 'Taken by B' } }),
    (id) => ({ method: 'PATCH', url: `/api/todos/${id}`, payload: { title: 'Taken by B' } }),
    (id) => ({
      method: 'PATCH',
      url: `/api/todos/${id}`,
      headers: { 'content-type': 'application/merge-patch+json' },
      payload: JSON.stringify({ status: 'cancelled' }),
    }),
    (id) => ({ method: 'DELETE', url: `/api/todos/${id}` }),
    ...Object.keys(ACTIONS).map((action) => (id: string): InjectOptions => ({
      method: 'POST',
      url: `/api/todos/${id}/${action}`,
    })),
  ];

  it('answer 404 and change nothing, with or without preconditions', async () => {
    const before = await checksumOfA();
    let sent = 0;
    for (const id of idsOfA) {
      for (const write of WRITES) {
        for (const ifMatch of [undefined, '*', '"1"', '"999"']) {
          const request = write(id);
          const headers = { ...request.headers, ...(ifMatch ? { 'if-match': ifMatch } : {}) };
          const response = await as(b, { ...request, headers });
          const path = typeof request.url === 'string' ? request.url : '';
          const label = `${request.method ?? ''} ${path} if-match ${ifMatch ?? '-'}`;
          expect(response.statusCode, `${label}: ${response.body}`).toBe(404);
          expectProblem(response, 404, 'not-found');
          expect(response.headers.etag, label).toBeUndefined();
          sent++;
        }
      }
    }
    expect(sent).toBe(idsOfA.length * WRITES.length * 4);
    expect(await checksumOfA()).toBe(before);
    for (const id of idsOfA) {
      const own = await as(a, { method: 'GET', url: `/api/todos/${id}` });
      expect(own.statusCode).toBe(200);
      expect(own.json<Todo>().version).toBe(1);
    }
  });

  it("answer B's conditional reads of A's ids with 404, never 304", async () => {
    for (const id of idsOfA) {
      for (const ifNoneMatch of ['"1"', '*']) {
        const response = await as(b, {
          method: 'GET',
          url: `/api/todos/${id}`,
          headers: { 'if-none-match': ifNoneMatch },
        });
        expectProblem(response, 404, 'not-found');
      }
    }
  });
});
