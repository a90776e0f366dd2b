import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { expectProblem } from './helpers/problem-assertions.js';
import { freePort } from './helpers/spawn-server.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';
import { createKeyedStore, startServerOn } from './limits/keyed-server.js';
import {
  percentile,
  rateLimitFieldsOf,
  uniqueOwner,
  type RateLimitFields,
} from './limits/rate-limit-fields.js';

/**
 * API.md §8 and RELIABILITY.md §3 (API2, API4) and §5 (rows 9 and 21) through the app: the
 * rate-limit fields on every response, 429 past the budget, whose budget each request spends,
 * one budget across instances sharing Redis, and failing open when Redis is gone.
 */

/** Long enough that no window ends during a test, except where a test waits for it. */
const WINDOW_S = 60;
const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';
/** RELIABILITY §5 row 9: an unreachable Redis costs a request at most this much, at p99. */
const OUTAGE_P99_ADDED_MS = 50;
/** No request may come close to hanging on a dead store. */
const OUTAGE_MAX_MS = 500;

const opened: TestApp[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

/** A fresh app with rate limiting on (test-app turns it off by default). */
async function limitedApp(max: number, env: Readonly<Record<string, string>> = {}) {
  const t = await buildTestApp({
    env: {
      RATE_LIMIT_MAX: String(max),
      RATE_LIMIT_WINDOW_S: String(WINDOW_S),
      AUTH_MODE: 'required',
      ...env,
    },
  });
  opened.push(t);
  return t;
}

function fieldsOf(response: LightMyRequestResponse): RateLimitFields {
  const fields = rateLimitFieldsOf(response.headers);
  if (!fields) throw new Error(`${response.statusCode} carries no rate-limit fields`);
  return fields;
}

function list(authorization: string, extra: Partial<InjectOptions> = {}): InjectOptions {
  return { method: 'GET', url: '/api/todos', headers: { authorization }, ...extra };
}

function create(authorization: string, title = 'rate-limit probe'): InjectOptions {
  return { method: 'POST', url: '/api/todos', headers: { authorization }, payload: { title } };
}

async function storedTodos(t: TestApp, owner: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*) as n from todos where owner_id = ${owner}
  `.execute(t.database.db);
  return Number(rows[0]?.n);
}

/** `count` requests in sequence; the statuses in order. */
async function statuses(t: TestApp, count: number, request: (i: number) => InjectOptions) {
  const seen: number[] = [];
  for (let i = 0; i < count; i++) seen.push((await t.inject(request(i))).statusCode);
  return seen;
}

function randomApiKey(): string {
  return `Bearer tdk_${randomBytes(24).toString('base64url')}`;
}

describe('RateLimit-Policy and RateLimit fields', () => {
  const MAX = 100;

  /** Each kind of answer the service gives, with what it takes to provoke it. */
  const KINDS: readonly [string, number, (t: TestApp, bearer: string) => Promise<InjectOptions>][] =
    [
      ['a 200 list', 200, async (_t, bearer) => list(bearer)],
      ['a 201 create', 201, async (_t, bearer) => create(bearer)],
      [
        'a 204 bulk delete',
        204,
        async (_t, bearer) => ({
          method: 'DELETE',
          url: '/api/todos',
          headers: { authorization: bearer },
        }),
      ],
      [
        'a 304 revalidation',
        304,
        async (t, bearer) => {
          const created = await t.inject(create(bearer));
          const { id } = created.json<{ id: string }>();
          return {
            method: 'GET',
            url: `/api/todos/${id}`,
            headers: { authorization: bearer, 'if-none-match': String(created.headers.etag) },
          };
        },
      ],
      [
        'a 400 malformed JSON body',
        400,
        async (_t, bearer) => ({
          ...create(bearer),
          payload: '{"title":',
          headers: { authorization: bearer, 'content-type': 'application/json' },
        }),
      ],
      [
        'a 400 bad query parameter',
        400,
        async (_t, bearer) => list(bearer, { url: '/api/todos?limit=0' }),
      ],
      [
        'a 400 unknown sort key',
        400,
        async (_t, bearer) => list(bearer, { url: '/api/todos?sort=nope' }),
      ],
      ['a 401 unknown token', 401, async () => list(randomApiKey())],
      ['a 401 missing token', 401, async () => ({ method: 'GET', url: '/api/todos' })],
      [
        'a 403 missing scope',
        403,
        async (t) => create(await t.bearer(uniqueOwner('reader'), ['todos:read'])),
      ],
      [
        'a 404 unknown route',
        404,
        async (_t, bearer) => list(bearer, { url: '/api/nothing-here' }),
      ],
      [
        'a 404 unknown todo',
        404,
        async (_t, bearer) => list(bearer, { url: `/api/todos/${randomUUID()}` }),
      ],
      ['a 405 wrong method', 405, async (_t, bearer) => list(bearer, { method: 'PATCH' })],
      [
        'a 406 unacceptable Accept',
        406,
        async (_t, bearer) =>
          list(bearer, { headers: { authorization: bearer, accept: 'text/html' } }),
      ],
      [
        'a 413 oversized body',
        413,
        async (_t, bearer) => ({
          ...create(bearer),
          payload: JSON.stringify({ title: 'x'.repeat(70_000) }),
          headers: { authorization: bearer, 'content-type': 'application/json' },
        }),
      ],
      ['a public /healthz', 200, async () => ({ method: 'GET', url: '/healthz' })],
      ['a public /readyz', 200, async () => ({ method: 'GET', url: '/readyz' })],
      ['a public /problems', 200, async () => ({ method: 'GET', url: '/problems' })],
      [
        'a public /problems/{code}',
        200,
        async () => ({ method: 'GET', url: '/problems/rate-limited' }),
      ],
    ];

  it.each(KINDS)('are on %s', async (_kind, status, requestFor) => {
    const t = await limitedApp(MAX);
    const bearer = await t.bearer(uniqueOwner('alice'));

    const response = await t.inject(await requestFor(t, bearer));

    expect(response.statusCode, response.body).toBe(status);
    const fields = fieldsOf(response);
    expect(fields).toMatchObject({ quota: MAX, window: WINDOW_S, retryAfter: undefined });
    expect(fields.remaining).toBeLessThan(MAX);
    expect(fields.reset).toBeGreaterThanOrEqual(1);
    expect(fields.reset).toBeLessThanOrEqual(WINDOW_S);
  });

  it('count down by one per request of the same owner, whatever the route answers', async () => {
    const t = await limitedApp(MAX);
    const bearer = await t.bearer(uniqueOwner('alice'));
    const requests = [
      list(bearer),
      create(bearer),
      list(bearer, { url: `/api/todos/${randomUUID()}` }),
      list(bearer, { url: '/api/todos?limit=0' }),
      list(bearer),
    ];

    const seen = [];
    for (const request of requests) seen.push(fieldsOf(await t.inject(request)));

    expect(seen.map((fields) => fields.remaining)).toEqual([99, 98, 97, 96, 95]);
    const resets = seen.map((fields) => fields.reset);
    expect(resets).toEqual([...resets].sort((a, b) => b - a)); // the window only runs down
  });

  it('are exposed to browsers (CORS), like Retry-After', async () => {
    const t = await limitedApp(MAX);
    const bearer = await t.bearer(uniqueOwner('alice'));

    const response = await t.inject(
      list(bearer, { headers: { authorization: bearer, origin: 'https://app.example' } }),
    );

    const exposed = String(response.headers['access-control-expose-headers'])
      .split(',')
      .map((name) => name.trim().toLowerCase());
    expect(exposed).toEqual(
      expect.arrayContaining(['ratelimit', 'ratelimit-policy', 'retry-after']),
    );
  });
});

describe('past the limit', () => {
  it('answers 429 rate-limited with Retry-After and r=0, without running the handler', async () => {
    const MAX = 3;
    const t = await limitedApp(MAX);
    const owner = uniqueOwner('alice');
    const bearer = await t.bearer(owner);
    for (let i = 0; i < MAX; i++) expect((await t.inject(create(bearer))).statusCode).toBe(201);

    const refused = [];
    for (let i = 0; i < 3; i++) refused.push(await t.inject(create(bearer, `over ${i}`)));
    // Not even parsed: a broken body past the limit gets the same 429, not a 400.
    refused.push(
      await t.inject({
        ...create(bearer),
        payload: '{"title":',
        headers: { authorization: bearer, 'content-type': 'application/json' },
      }),
    );

    for (const response of refused) {
      const problem = expectProblem(response, 429, 'rate-limited', { instance: '/api/todos' });
      expect(problem.detail).toContain(`${MAX} requests per ${WINDOW_S} s`);
      const fields = fieldsOf(response);
      expect(fields).toMatchObject({ quota: MAX, window: WINDOW_S, remaining: 0 });
      expect(fields.retryAfter).toBeGreaterThanOrEqual(1);
      expect(fields.retryAfter).toBeLessThanOrEqual(WINDOW_S);
      expect(fields.retryAfter).toBeGreaterThanOrEqual(fields.reset);
      expect(response.headers.location).toBeUndefined();
    }
    expect(await storedTodos(t, owner)).toBe(MAX);
  });

  it('carries CORS headers on the 429, so that a browser can read Retry-After', async () => {
    const t = await limitedApp(1);
    const bearer = await t.bearer(uniqueOwner('alice'));
    const headers = { authorization: bearer, origin: 'https://app.example' };
    await t.inject(list(bearer, { headers }));

    const response = await t.inject(list(bearer, { headers }));

    expectProblem(response, 429, 'rate-limited');
    expect(response.headers['access-control-allow-origin']).toBe('*');
  });

  it('lets the owner in again once Retry-After has passed', async () => {
    const t = await limitedApp(2, { RATE_LIMIT_WINDOW_S: '2' });
    const bearer = await t.bearer(uniqueOwner('alice'));
    await t.inject(list(bearer));
    await t.inject(list(bearer));
    const refused = await t.inject(list(bearer));
    expectProblem(refused, 429, 'rate-limited');
    const retryAfter = fieldsOf(refused).retryAfter ?? Number.NaN;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);

    await sleep(retryAfter * 1000 + 50);
    const again = await t.inject(list(bearer));

    expect(again.statusCode).toBe(200);
    expect(fieldsOf(again)).toMatchObject({ remaining: 1, retryAfter: undefined });
  });
});

describe('a 429 on each kind of route', () => {
  /** Routes whose budget is the owner's (with a bearer) or the client address's (without). */
  const ROUTES: readonly [string, boolean][] = [
    ['/api/todos', true],
    ['/api/todos/00000000-0000-4000-8000-000000000000', true],
    ['/healthz', false],
    ['/readyz', false],
    ['/problems', false],
    ['/problems/not-found', false],
    ['/docs', false],
    ['/no/such/route', false],
  ];

  it.each(ROUTES)('GET %s is a documented rate-limited problem', async (url, authenticated) => {
    const t = await limitedApp(1);
    const headers = authenticated ? { authorization: await t.bearer(uniqueOwner('ivan')) } : {};
    await t.inject({ method: 'GET', url, headers });

    // t.inject also checks the 429 against the route's OpenAPI operation.
    const response = await t.inject({ method: 'GET', url, headers });

    expectProblem(response, 429, 'rate-limited');
    expect(fieldsOf(response)).toMatchObject({ quota: 1, remaining: 0 });
  });
});

describe('whose budget a request spends', () => {
  it("leaves bob's budget untouched when alice exhausts hers", async () => {
    const MAX = 3;
    const t = await limitedApp(MAX);
    const alice = await t.bearer(uniqueOwner('alice'));
    const bob = await t.bearer(uniqueOwner('bob'));

    const aliceStatuses = await statuses(t, MAX + 2, () => list(alice));
    const bobFirst = await t.inject(list(bob));

    expect(aliceStatuses).toEqual([200, 200, 200, 429, 429]);
    expect(bobFirst.statusCode).toBe(200);
    expect(fieldsOf(bobFirst).remaining).toBe(MAX - 1);
    expect(await statuses(t, MAX - 1, () => list(bob))).toEqual([200, 200]);
  });

  it('makes two keys of one owner share one budget', async () => {
    const MAX = 4;
    const t = await limitedApp(MAX);
    const owner = uniqueOwner('carol');
    const keys = [await t.bearer(owner), await t.bearer(owner, ['todos:read'])];

    const remaining = [];
    for (let i = 0; i < MAX; i++) {
      remaining.push(fieldsOf(await t.inject(list(keys[i % 2] ?? ''))).remaining);
    }
    const refused = await Promise.all(keys.map((key) => t.inject(list(key))));

    expect(remaining).toEqual([3, 2, 1, 0]);
    for (const response of refused) expectProblem(response, 429, 'rate-limited');
  });

  it('limits anonymous requests per client address, whatever X-Forwarded-For claims', async () => {
    const MAX = 3;
    const t = await limitedApp(MAX, { AUTH_MODE: 'anonymous' });
    const from = (remoteAddress: string, headers: Record<string, string> = {}): InjectOptions => ({
      method: 'GET',
      url: '/api/todos',
      remoteAddress,
      headers,
    });

    const first = await statuses(t, MAX + 1, () => from('198.51.100.1'));
    const forged = await t.inject(from('198.51.100.1', { 'x-forwarded-for': '203.0.113.9' }));
    const other = await t.inject(from('198.51.100.2'));

    expect(first).toEqual([200, 200, 200, 429]);
    expectProblem(forged, 429, 'rate-limited'); // trustProxy is off: the header is not the client
    expect(other.statusCode).toBe(200);
    expect(fieldsOf(other).remaining).toBe(MAX - 1);
  });

  it('keeps the budget of an owner whose client address is exhausted by others', async () => {
    const MAX = 3;
    const t = await limitedApp(MAX);
    const alice = await t.bearer(uniqueOwner('alice'));
    const address = '198.51.100.7';

    const guesses = await statuses(t, MAX + 1, () => ({
      ...list(randomApiKey()),
      remoteAddress: address,
    }));
    const aliceThere = await t.inject({ ...list(alice), remoteAddress: address });

    expect(guesses).toEqual([401, 401, 401, 429]);
    expect(aliceThere.statusCode).toBe(200);
    expect(fieldsOf(aliceThere).remaining).toBe(MAX - 1);
  });
});

describe('failed authentication spends the client address budget (API2 brute force)', () => {
  const MAX = 10;
  const ATTEMPTS = 3 * MAX;

  const BAD_CREDENTIALS: readonly [string, () => Record<string, string>][] = [
    ['random API keys', () => ({ authorization: randomApiKey() })],
    [
      'random opaque tokens',
      () => ({ authorization: `Bearer ${randomBytes(32).toString('hex')}` }),
    ],
    [
      'malformed Authorization headers',
      () => ({ authorization: `Basic ${randomBytes(9).toString('base64')}` }),
    ],
    ['no credentials', () => ({})],
  ];

  it.each(BAD_CREDENTIALS)(
    'answers 429 after the limit to %s, never more 401s than the limit',
    async (_kind, headers) => {
      const t = await limitedApp(MAX);

      const seen = await statuses(t, ATTEMPTS, () => ({
        method: 'GET',
        url: '/api/todos',
        remoteAddress: '192.0.2.10',
        headers: headers(),
      }));

      const firstRefusal = seen.indexOf(429);
      expect(new Set(seen)).toEqual(new Set([401, 429]));
      expect(seen.filter((status) => status === 401).length).toBeLessThanOrEqual(MAX);
      expect(firstRefusal).toBeGreaterThanOrEqual(MAX - 1);
      expect(firstRefusal).toBeLessThanOrEqual(MAX + 1);
      expect(seen.slice(firstRefusal).every((status) => status === 429)).toBe(true);
    },
  );
});

describe('with a shared Redis', () => {
  /**
   * Until its Redis client is connected, an app answers from memory. Waits (≤ 5 s) until a
   * request counted by `a` is seen by `b`, each try under a fresh owner.
   */
  async function untilShared(a: TestApp, b: TestApp, max: number): Promise<void> {
    const deadline = performance.now() + 5000;
    while (performance.now() < deadline) {
      const owner = uniqueOwner('probe');
      await a.inject(list(await a.bearer(owner)));
      const seen = fieldsOf(await b.inject(list(await b.bearer(owner))));
      if (seen.remaining === max - 2) return;
      await sleep(50);
    }
    throw new Error('the two apps never shared a budget through Redis');
  }

  it('enforces one budget per owner across two apps (the same owner, each with its own key)', async () => {
    const MAX = 4;
    const env = { REDIS_URL: SHARED_REDIS_URL };
    const a = await limitedApp(MAX, env);
    const b = await limitedApp(MAX, env);
    await untilShared(a, b, MAX);
    const owner = uniqueOwner('dave');
    const keyA = await a.bearer(owner);
    const keyB = await b.bearer(owner);

    const remaining = [];
    for (const [t, key] of [
      [a, keyA],
      [b, keyB],
      [a, keyA],
      [b, keyB],
    ] as const) {
      remaining.push(fieldsOf(await t.inject(list(key))).remaining);
    }
    const refusedByA = await a.inject(list(keyA));
    const refusedByB = await b.inject(list(keyB));
    const someoneElse = await b.inject(list(await b.bearer(uniqueOwner('erin'))));

    expect(remaining).toEqual([3, 2, 1, 0]);
    expectProblem(refusedByA, 429, 'rate-limited');
    expectProblem(refusedByB, 429, 'rate-limited');
    expect(someoneElse.statusCode).toBe(200);
  });
});

describe('when Redis is unreachable', () => {
  const MAX = 40;

  /** `MAX` timed requests of one owner, then one more that must be refused. */
  async function timedBudget(t: TestApp) {
    const bearer = await t.bearer(uniqueOwner('frank'));
    const latencies: number[] = [];
    const seen: number[] = [];
    for (let i = 0; i < MAX; i++) {
      const started = performance.now();
      const response = await t.inject(list(bearer));
      latencies.push(performance.now() - started);
      seen.push(response.statusCode);
    }
    const over = await t.inject(list(bearer));
    return { latencies, seen, over };
  }

  it('fails open to the in-memory limit, fast', async () => {
    const normal = await limitedApp(MAX);
    const cut = await limitedApp(MAX, { REDIS_URL: `redis://127.0.0.1:${await freePort()}` });
    // Warm both up (first-use compilation), so that only the store makes a difference.
    await timedBudget(normal);
    await timedBudget(cut);

    const baseline = await timedBudget(normal);
    const outage = await timedBudget(cut);

    expect(outage.seen).toEqual(Array<number>(MAX).fill(200));
    expectProblem(outage.over, 429, 'rate-limited'); // the per-instance fallback still limits
    for (const ms of outage.latencies) expect(ms).toBeLessThan(OUTAGE_MAX_MS);
    expect(percentile(outage.latencies, 99)).toBeLessThan(
      percentile(baseline.latencies, 99) + OUTAGE_P99_ADDED_MS,
    );
  });

  it('does not stop a real server from starting, serving and limiting, and says why', async () => {
    const owner = uniqueOwner('grace');
    const store = await createKeyedStore([owner]);
    try {
      const server = await startServerOn(store, {
        AUTH_MODE: 'required',
        RATE_LIMIT_MAX: '20',
        RATE_LIMIT_WINDOW_S: String(WINDOW_S),
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
      });
      try {
        const seen: number[] = [];
        const latencies: number[] = [];
        for (let i = 0; i < 21; i++) {
          const started = performance.now();
          const response = await fetch(`${server.baseUrl}/api/todos`, {
            headers: { authorization: store.bearer(owner) },
          });
          await response.arrayBuffer();
          latencies.push(performance.now() - started);
          seen.push(response.status);
        }

        expect(seen).toEqual([...Array<number>(20).fill(200), 429]);
        expect(Math.max(...latencies)).toBeLessThan(OUTAGE_MAX_MS);
        expect(server.output()).toContain('Rate-limit store unavailable');
      } finally {
        await server.stop();
      }
    } finally {
      await store.close();
    }
  });
});

describe('with RATE_LIMIT_MAX=0', () => {
  it('sends no rate-limit fields and never 429, on any kind of response', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_MAX: '0', AUTH_MODE: 'required' } });
    opened.push(t);
    const bearer = await t.bearer(uniqueOwner('heidi'));
    const requests: InjectOptions[] = [
      list(bearer),
      create(bearer),
      list(randomApiKey()),
      list(bearer, { url: '/api/nothing-here' }),
      { method: 'GET', url: '/healthz' },
    ];

    const responses: LightMyRequestResponse[] = [];
    for (let round = 0; round < 40; round++) {
      for (const request of requests) responses.push(await t.inject(request));
    }

    expect(new Set(responses.map((r) => r.statusCode))).toEqual(new Set([200, 201, 401, 404]));
    for (const response of responses) {
      expect(rateLimitFieldsOf(response.headers)).toBeUndefined();
      expect(response.headers['retry-after']).toBeUndefined();
    }
  });
});
