import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/api-keys.js';
import { createDatabase } from '../../src/db/create-database.js';
import type { Database } from '../../src/db/database.js';
import { spawnServer, type ServerProcess } from '../helpers/spawn-server.js';
import { openSse } from '../helpers/sse-client.js';

/**
 * Nothing an instance keeps in memory may be needed for correctness. Four real service processes
 * share one PostgreSQL schema and one Redis:
 *
 * - pair M (A, B): no CURSOR_SECRET (the generated one lives in the database), a small
 *   TODO_QUOTA, no rate limit;
 * - pair R (A, B): the same explicit CURSOR_SECRET, a small RATE_LIMIT_MAX in Redis.
 *
 * Every request goes over real HTTP; what a test reads behind the servers' backs it reads with
 * SQL on its own connection.
 */

// Runs in the postgres project only (`*.postgres.test.ts`), where TEST_DATABASE_URL is set.
const POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = 'redis://127.0.0.1:6379';
const SCHEMA = `inst_${randomBytes(6).toString('hex')}`;
const DATABASE_URL = `${POSTGRES_URL}?options=${encodeURIComponent(`-c search_path=${SCHEMA}`)}`;

/** Pair M's TODO_QUOTA: small enough that 2 × 16 concurrent creates overshoot it. */
const QUOTA = 10;
/** Pair R's RATE_LIMIT_MAX, per owner per window. */
const RATE_MAX = 12;
/** Long enough that no rate-limit window ends during the file. */
const RATE_WINDOW_S = 60;
/** Pair R's explicit cursor secret; pair M generates its own. */
const CURSOR_SECRET = randomBytes(32).toString('base64url');
/** How long the file waits for both R instances to count in Redis rather than in memory. */
const SHARED_COUNT_WAIT_MS = 5000;
const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 5000;

interface Pair {
  readonly a: ServerProcess;
  readonly b: ServerProcess;
}

const started: ServerProcess[] = [];
let admin: pg.Client | undefined;
let database: Database | undefined;
let m: Pair;
let r: Pair;

function db(): Database {
  if (!database) throw new Error('the database is not open');
  return database;
}

async function stop(server: ServerProcess): Promise<void> {
  const kill = setTimeout(() => server.child.kill('SIGKILL'), STOP_GRACE_MS);
  try {
    await server.stop();
  } finally {
    clearTimeout(kill);
  }
}

/** Starts every server at once (on a fresh schema: they migrate it concurrently). */
async function startAll(envs: readonly Readonly<Record<string, string>>[]) {
  const outcomes = await Promise.allSettled(envs.map((env) => spawnServer(env, START_TIMEOUT_MS)));
  const servers: ServerProcess[] = [];
  for (const outcome of outcomes) {
    if (outcome.status === 'fulfilled') {
      started.push(outcome.value);
      servers.push(outcome.value);
    }
  }
  const failure = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failure) throw failure.reason;
  return servers;
}

beforeAll(async () => {
  admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`create schema "${SCHEMA}"`);
  const common = {
    DATABASE_URL,
    REDIS_URL,
    AUTH_MODE: 'required',
    SHUTDOWN_TIMEOUT_MS: '2000',
  };
  const pairM = { ...common, CURSOR_SECRET: '', TODO_QUOTA: String(QUOTA), RATE_LIMIT_MAX: '0' };
  const pairR = {
    ...common,
    CURSOR_SECRET,
    RATE_LIMIT_MAX: String(RATE_MAX),
    RATE_LIMIT_WINDOW_S: String(RATE_WINDOW_S),
  };
  const [ma, mb, ra, rb] = await startAll([pairM, pairM, pairR, pairR]);
  if (!ma || !mb || !ra || !rb) throw new Error('a server did not start');
  m = { a: ma, b: mb };
  r = { a: ra, b: rb };
  // The servers migrated the schema; keys go straight into it.
  database = createDatabase(DATABASE_URL);
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(started.splice(0).map(stop));
  await database?.close();
  if (admin) {
    await admin.query(`drop schema if exists "${SCHEMA}" cascade`);
    await admin.end();
  }
}, 30_000);

interface Owner {
  readonly id: string;
  readonly authorization: string;
}

/** A fresh owner (unique in Redis too, which other runs share) with a read-write key. */
async function newOwner(name: string): Promise<Owner> {
  const id = `${name}-${randomUUID()}`;
  const { token } = await createApiKey(db(), {
    ownerId: id,
    scopes: ['todos:read', 'todos:write'],
  });
  return { id, authorization: `Bearer ${token}` };
}

interface Exchange {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly body: unknown;
}

interface RequestOptions {
  readonly method?: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

async function call(
  server: ServerProcess,
  owner: Owner,
  path: string,
  options: RequestOptions = {},
): Promise<Exchange> {
  const headers: Record<string, string> = { authorization: owner.authorization };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: options.method ?? 'GET',
    headers: { ...headers, ...options.headers },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: parseJson(text),
  };
}

/** The body as JSON; `undefined` when empty or not JSON (the test then fails on its status). */
function parseJson(text: string): unknown {
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

interface Todo {
  readonly id: string;
  readonly url: string;
  readonly title: string;
  readonly version: number;
}

interface ProblemBody {
  readonly code: string;
  readonly status: number;
  readonly limit?: number;
}

async function createTodo(server: ServerProcess, owner: Owner, title: string): Promise<Todo> {
  const response = await call(server, owner, '/api/todos', { method: 'POST', body: { title } });
  expect(response.status, response.text).toBe(201);
  return response.body as Todo;
}

function expectProblem(response: Exchange, status: number, code: string): ProblemBody {
  expect(response.status, response.text).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  const problem = response.body as ProblemBody;
  expect(problem).toMatchObject({ status, code });
  return problem;
}

/** The path and query of the `rel="next"` link, to be sent to any instance. */
function nextPath(response: Exchange): string | undefined {
  const link = response.headers.get('link');
  const target = link === null ? undefined : /<([^>]+)>;\s*rel="next"/.exec(link)?.[1];
  if (target === undefined) return undefined;
  const url = new URL(target);
  return `${url.pathname}${url.search}`;
}

/** Todos the owner keeps (deleted ones are kept too, restorable, but do not count). */
async function rowsOf(owner: Owner): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`
    select count(*) as n from todos where owner_id = ${owner.id} and deleted_at is null
  `.execute(db().db);
  return Number(rows[0]?.n);
}

/** Pages through the owner's todos, `limit` at a time, sending page i to `servers[i % n]`. */
async function pageAcross(
  servers: readonly ServerProcess[],
  owner: Owner,
  limit: number,
): Promise<string[]> {
  const ids: string[] = [];
  let path: string | undefined = `/api/todos?limit=${limit}`;
  for (let page = 0; path !== undefined; page++) {
    const server = servers[page % servers.length];
    if (!server) throw new Error('no server');
    const response = await call(server, owner, path);
    expect(response.status, `page ${page} on ${server.baseUrl}: ${response.text}`).toBe(200);
    ids.push(...(response.body as Todo[]).map((todo) => todo.id));
    path = nextPath(response);
    if (page > 20) throw new Error('paging does not end');
  }
  return ids;
}

describe('a todo written on one instance', () => {
  it('is visible on the other at once, in detail and in the list', async () => {
    const owner = await newOwner('visible');
    const created = await createTodo(m.a, owner, 'written on A');

    const detail = await call(m.b, owner, `/api/todos/${created.id}`);
    expect(detail.status, detail.text).toBe(200);
    expect(detail.headers.get('etag')).toBe('"1"');
    expect(detail.body).toMatchObject({ id: created.id, title: 'written on A' });

    const list = await call(m.b, owner, '/api/todos');
    expect(list.status).toBe(200);
    expect((list.body as Todo[]).map((todo) => todo.id)).toEqual([created.id]);
  });

  it('is gone on the other once deleted: 404 not-found there, and out of its list', async () => {
    const owner = await newOwner('deleted');
    const kept = await createTodo(m.b, owner, 'kept');
    const doomed = await createTodo(m.b, owner, 'deleted on A');
    expect((await call(m.b, owner, `/api/todos/${doomed.id}`)).status).toBe(200);

    const deleted = await call(m.a, owner, `/api/todos/${doomed.id}`, { method: 'DELETE' });
    expect(deleted.status, deleted.text).toBe(204);

    expectProblem(await call(m.b, owner, `/api/todos/${doomed.id}`), 404, 'not-found');
    expectProblem(
      await call(m.b, owner, `/api/todos/${doomed.id}`, { method: 'DELETE' }),
      404,
      'not-found',
    );
    const list = await call(m.b, owner, '/api/todos');
    expect((list.body as Todo[]).map((todo) => todo.id)).toEqual([kept.id]);
  });
});

describe('list cursors', () => {
  const TODOS = 7;
  const LIMIT = 2;

  async function ownerWithTodos(name: string): Promise<{ owner: Owner; ids: string[] }> {
    const owner = await newOwner(name);
    const ids: string[] = [];
    // Created one after another, on alternating instances: the default order is creation order.
    for (let i = 0; i < TODOS; i++) {
      ids.push((await createTodo(i % 2 === 0 ? m.a : m.b, owner, `todo ${i}`)).id);
    }
    return { owner, ids };
  }

  it('without CURSOR_SECRET: a cursor from A pages on B and back, every todo once', async () => {
    const { owner, ids } = await ownerWithTodos('cursor-generated');

    expect(await pageAcross([m.a, m.b], owner, LIMIT)).toEqual(ids);
    expect(await pageAcross([m.b, m.a], owner, LIMIT)).toEqual(ids);

    // One generated secret, in the shared database, that both instances use.
    const { rows } = await sql<{ n: string | number }>`
      select count(*) as n from settings where key = 'cursor_secret'
    `.execute(db().db);
    expect(Number(rows[0]?.n)).toBe(1);
  });

  it('with the same CURSOR_SECRET on both: a cursor from A pages on B and back', async () => {
    const { owner, ids } = await ownerWithTodos('cursor-configured');

    expect(await pageAcross([r.a, r.b], owner, LIMIT)).toEqual(ids);
    expect(await pageAcross([r.b, r.a], owner, LIMIT)).toEqual(ids);
  });

  it('refuses a cursor signed with another secret (so the instances above really checked it)', async () => {
    const { owner } = await ownerWithTodos('cursor-foreign');
    const fromM = nextPath(await call(m.a, owner, `/api/todos?limit=${LIMIT}`));
    const fromR = nextPath(await call(r.a, owner, `/api/todos?limit=${LIMIT}`));
    if (fromM === undefined || fromR === undefined) throw new Error('no next page');
    // The same position and query, signed with two secrets: only the signature differs.
    expect(fromM).not.toBe(fromR);

    expectProblem(await call(r.b, owner, fromM), 400, 'invalid-cursor');
    expectProblem(await call(m.b, owner, fromR), 400, 'invalid-cursor');
    const tampered = fromM.replace(/cursor=([^&]*)/, (_all, cursor: string) => {
      const [data = '', signature = ''] = decodeURIComponent(cursor).split('.');
      const flipped = signature.startsWith('A')
        ? `B${signature.slice(1)}`
        : `A${signature.slice(1)}`;
      return `cursor=${encodeURIComponent(`${data}.${flipped}`)}`;
    });
    expectProblem(await call(m.b, owner, tampered), 400, 'invalid-cursor');
  });
});

describe('Idempotency-Key', () => {
  it('replayed on B returns the response A gave, and creates nothing more', async () => {
    const owner = await newOwner('idempotent');
    const key = `key-${randomUUID()}`;
    const request = {
      method: 'POST',
      body: { title: 'pay invoice 42', priority: 'high' },
      headers: { 'idempotency-key': `"${key}"` },
    };

    const first = await call(m.a, owner, '/api/todos', request);
    expect(first.status, first.text).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const replay = await call(m.b, owner, '/api/todos', request);
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.headers.get('location')).toBe(first.headers.get('location'));
    expect(replay.headers.get('etag')).toBe(first.headers.get('etag'));
    expect(replay.body).toEqual(first.body);
    expect(await rowsOf(owner)).toBe(1);

    // The stored fingerprint travels too: B refuses the key for another body.
    expectProblem(
      await call(m.b, owner, '/api/todos', { ...request, body: { title: 'something else' } }),
      422,
      'idempotency-key-reused',
    );
    expect(await rowsOf(owner)).toBe(1);
  });

  // Of overlapping first attempts exactly one claims the key (insert … on conflict do nothing).
  it('sent to A and B at the same time, still creates one todo per key', async () => {
    const owner = await newOwner('idempotent-race');
    const KEYS = 4;
    const attempts = Array.from({ length: KEYS }, (_, i) => {
      const request = {
        method: 'POST',
        body: { title: `race ${i}` },
        headers: { 'idempotency-key': `race-${i}-${randomUUID()}` },
      };
      return [
        call(m.a, owner, '/api/todos', request),
        call(m.b, owner, '/api/todos', request),
      ] as const;
    });
    const outcomes = await Promise.all(attempts.map((pair) => Promise.all(pair)));

    for (const pair of outcomes) {
      for (const response of pair) expect([201, 409], response.text).toContain(response.status);
      const originals = pair.filter(
        (response) =>
          response.status === 201 && response.headers.get('idempotent-replayed') === null,
      );
      expect(originals).toHaveLength(1);
    }
    expect(await rowsOf(owner)).toBe(KEYS);
  });
});

describe('If-Match', () => {
  const patch = (title: string, etag: string): RequestOptions => ({
    method: 'PATCH',
    body: { title },
    headers: { 'content-type': 'application/merge-patch+json', 'if-match': etag },
  });

  it('stale on B after an update on A: 412 precondition-failed, and the todo keeps A’s change', async () => {
    const owner = await newOwner('etag');
    const todo = await createTodo(m.a, owner, 'v1');

    const onA = await call(m.a, owner, `/api/todos/${todo.id}`, patch('changed on A', '"1"'));
    expect(onA.status, onA.text).toBe(200);
    expect(onA.headers.get('etag')).toBe('"2"');

    expectProblem(
      await call(m.b, owner, `/api/todos/${todo.id}`, patch('stale on B', '"1"')),
      412,
      'precondition-failed',
    );
    const stale = await call(m.b, owner, `/api/todos/${todo.id}`, {
      method: 'DELETE',
      headers: { 'if-match': '"1"' },
    });
    expectProblem(stale, 412, 'precondition-failed');

    const current = await call(m.b, owner, `/api/todos/${todo.id}`);
    expect(current.headers.get('etag')).toBe('"2"');
    expect(current.body).toMatchObject({ title: 'changed on A', version: 2 });
    // B revalidates with the ETag A handed out: 304, so no copy of the old version survives.
    const revalidated = await call(m.b, owner, `/api/todos/${todo.id}`, {
      headers: { 'if-none-match': '"2"' },
    });
    expect(revalidated.status).toBe(304);

    const fresh = await call(m.b, owner, `/api/todos/${todo.id}`, patch('changed on B', '"2"'));
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.headers.get('etag')).toBe('"3"');
  });

  // A write locks the row as it reads it, so overlapping writes see each other's version.
  it('sent concurrently on A and B with the same If-Match: exactly one wins', async () => {
    const owner = await newOwner('etag-race');
    const todo = await createTodo(m.a, owner, 'v1');
    const WRITERS = 10;

    const outcomes = await Promise.all(
      Array.from({ length: WRITERS }, (_, i) =>
        call(i % 2 === 0 ? m.a : m.b, owner, `/api/todos/${todo.id}`, patch(`writer ${i}`, '"1"')),
      ),
    );

    const statuses = outcomes.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 412)).toHaveLength(WRITERS - 1);
    const winner = outcomes.find((response) => response.status === 200)?.body as Todo | undefined;
    const current = await call(m.b, owner, `/api/todos/${todo.id}`);
    expect(current.body).toMatchObject({ title: winner?.title, version: 2 });
  });
});

describe('the todo quota', () => {
  it(`holds exactly under 2 × 16 concurrent creates on A and B (quota ${QUOTA})`, async () => {
    const owner = await newOwner('quota');
    const PER_INSTANCE = 16;

    const outcomes = await Promise.all(
      Array.from({ length: 2 * PER_INSTANCE }, (_, i) =>
        call(i % 2 === 0 ? m.a : m.b, owner, '/api/todos', {
          method: 'POST',
          body: { title: `quota ${i}` },
        }),
      ),
    );

    for (const response of outcomes) expect(response.status, response.text).toBeLessThan(500);
    const created = outcomes.filter((response) => response.status === 201);
    const refused = outcomes.filter((response) => response.status !== 201);
    expect(created).toHaveLength(QUOTA);
    expect(refused).toHaveLength(2 * PER_INSTANCE - QUOTA);
    for (const response of refused) {
      expect(expectProblem(response, 422, 'quota-exceeded').limit).toBe(QUOTA);
    }
    // A quota kept per instance would have let up to 2 × QUOTA through. (Which instance wins
    // the owner's lock first is timing: one may create all ten, the other none.)
    expect(await rowsOf(owner)).toBe(QUOTA);
    const { rows } = await sql<{ todo_count: number }>`
      select todo_count from owner_usage where owner_id = ${owner.id}
    `.execute(db().db);
    expect(rows[0]?.todo_count).toBe(QUOTA);

    // Deleting on one instance frees room on the other at once.
    const victim = created[0]?.body as Todo | undefined;
    if (!victim) throw new Error('nothing was created');
    expect((await call(m.a, owner, `/api/todos/${victim.id}`, { method: 'DELETE' })).status).toBe(
      204,
    );
    await createTodo(m.b, owner, 'fits again');
    expectProblem(
      await call(m.a, owner, '/api/todos', { method: 'POST', body: { title: 'one too many' } }),
      422,
      'quota-exceeded',
    );
    expect(await rowsOf(owner)).toBe(QUOTA);
  });
});

describe('the rate limit', () => {
  /** `r` of the RateLimit field: requests left in the window. */
  function remaining(response: Exchange): number {
    const field = response.headers.get('ratelimit') ?? '';
    const match = /^"default";r=(\d+);t=(\d+)$/.exec(field);
    if (!match) throw new Error(`${response.status} carries no RateLimit field: "${field}"`);
    return Number(match[1]);
  }

  /**
   * Until its Redis connection is ready an instance counts in memory. A fresh owner asking A, B,
   * A sees the budget fall by one each time only when both count in the same (shared) place.
   */
  async function waitForSharedCounts(): Promise<void> {
    const deadline = Date.now() + SHARED_COUNT_WAIT_MS;
    let seen: number[] = [];
    while (Date.now() < deadline) {
      const probe = await newOwner('rate-probe');
      seen = [];
      for (const server of [r.a, r.b, r.a, r.b])
        seen.push(remaining(await call(server, probe, '/api/todos')));
      if (seen.every((left, i) => left === RATE_MAX - 1 - i)) return;
      await sleep(100);
    }
    throw new Error(
      `A and B never shared a budget in ${SHARED_COUNT_WAIT_MS} ms (last: ${seen.join(',')})`,
    );
  }

  it(`allows exactly ${RATE_MAX} requests of one owner across A and B together`, async () => {
    await waitForSharedCounts();
    const owner = await newOwner('rate');
    const REQUESTS = 3 * RATE_MAX;

    const outcomes: Exchange[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      outcomes.push(await call(i % 2 === 0 ? r.a : r.b, owner, '/api/todos'));
    }

    const statuses = outcomes.map((response) => response.status);
    expect(statuses).toEqual([
      ...Array<number>(RATE_MAX).fill(200),
      ...Array<number>(REQUESTS - RATE_MAX).fill(429),
    ]);
    // One budget, counted down by both instances in turn.
    expect(outcomes.slice(0, RATE_MAX).map(remaining)).toEqual(
      Array.from({ length: RATE_MAX }, (_, i) => RATE_MAX - 1 - i),
    );
    for (const response of outcomes.slice(RATE_MAX)) {
      expectProblem(response, 429, 'rate-limited');
      expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(remaining(response)).toBe(0);
    }

    // Another owner's budget is untouched on both.
    const other = await newOwner('rate-other');
    expect((await call(r.b, other, '/api/todos')).status).toBe(200);
    expect((await call(r.a, other, '/api/todos')).status).toBe(200);
  });
});

describe('events', () => {
  it('committed through A reach a stream held on B within a second', async () => {
    const owner = await newOwner('stream');
    const stream = await openSse(`${m.b.baseUrl}/api/todos/events`, {
      authorization: owner.authorization,
    });
    try {
      expect(stream.status).toBe(200);
      const latencies: number[] = [];
      for (let i = 0; i < 5; i++) {
        const sent = performance.now();
        const todo = await createTodo(m.a, owner, `streamed ${i}`);
        const message = await stream.next(1000);
        latencies.push(performance.now() - sent);
        expect(message.event).toBe('todo.created');
        expect(message.data).toContain(todo.id);
      }
      console.log(`event A → stream on B: ${latencies.map((ms) => ms.toFixed(1)).join(', ')} ms`);
    } finally {
      stream.close();
    }
  });

  it('page through delta sync across instances with one token', async () => {
    const owner = await newOwner('sync');
    const start = await call(m.a, owner, '/api/todos/changes');
    const first = await createTodo(m.a, owner, 'first');
    const second = await createTodo(m.b, owner, 'second');
    const token = (start.body as { next_since: string }).next_since;
    const page = await call(m.b, owner, `/api/todos/changes?since=${encodeURIComponent(token)}`);
    expect(page.status, page.text).toBe(200);
    const ids = (page.body as { changes: { id: string }[] }).changes.map((change) => change.id);
    expect(ids).toEqual([first.id, second.id]);
  });
});
