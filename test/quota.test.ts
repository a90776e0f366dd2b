import fc from 'fast-check';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/db/database.js';
import { expectProblem } from './helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';
import {
  createKeyedStore,
  startServerOn,
  type KeyedStore,
  type LimitsServer,
} from './limits/keyed-server.js';
import { uniqueOwner } from './limits/rate-limit-fields.js';

/**
 * API.md §8 and RELIABILITY.md §3 (API4, API6): the per-owner todo quota. Past it a create is
 * a 422 `quota-exceeded` that stores nothing; deletes free slots; and the trigger-maintained
 * `owner_usage` count the check reads stays exact under concurrent creators, in one process and
 * across two processes on one database (a SQLite file, or a PostgreSQL schema).
 */

const QUOTA = 5;
/** RELIABILITY §3 API4: the quota race runs this many creators at once. */
const CREATORS = 16;

const opened: TestApp[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

async function appWithQuota(quota: number): Promise<TestApp> {
  const t = await buildTestApp({ env: { TODO_QUOTA: String(quota), AUTH_MODE: 'required' } });
  opened.push(t);
  return t;
}

function createRequest(bearer: string, extra: Record<string, string> = {}): InjectOptions {
  return {
    method: 'POST',
    url: '/api/todos',
    headers: { authorization: bearer, ...extra },
    payload: { title: 'quota probe' },
  };
}

async function create(t: TestApp, bearer: string): Promise<LightMyRequestResponse> {
  return t.inject(createRequest(bearer));
}

/** Creates `count` todos one after another; each must succeed. Returns their ids. */
async function fill(t: TestApp, bearer: string, count: number): Promise<string[]> {
  const ids = [];
  for (let i = 0; i < count; i++) {
    const response = await create(t, bearer);
    expect(response.statusCode, response.body).toBe(201);
    ids.push(response.json<{ id: string }>().id);
  }
  return ids;
}

async function remove(t: TestApp, bearer: string, url: string): Promise<void> {
  const response = await t.inject({ method: 'DELETE', url, headers: { authorization: bearer } });
  expect(response.statusCode, response.body).toBe(204);
}

/** Todos the owner really keeps (deleted ones do not count), counted the slow way. */
async function rowsOf(db: Db, owner: string): Promise<number> {
  const { rows } = await sql<{ n: number | string }>`
    select count(*) as n from todos where owner_id = ${owner} and deleted_at is null
  `.execute(db);
  return Number(rows[0]?.n);
}

/** What the quota check reads: the trigger-maintained count (no row = none yet). */
async function usageOf(db: Db, owner: string): Promise<number> {
  const row = await db
    .selectFrom('owner_usage')
    .select('todo_count')
    .where('owner_id', '=', owner)
    .executeTakeFirst();
  return row?.todo_count ?? 0;
}

/** Every owner's usage row against a count of their rows; lists the owners that disagree. */
async function usageMismatches(db: Db): Promise<unknown[]> {
  // `actual` is a count, an int8: pg hands it over as text on PostgreSQL.
  const { rows } = await sql<{
    owner: string;
    usage: number | null;
    actual: number | string | null;
  }>`
    select owners.owner_id as owner, u.todo_count as usage, c.n as actual
    from (select owner_id from owner_usage union select owner_id from todos) as owners
    left join owner_usage as u on u.owner_id = owners.owner_id
    left join (
      select owner_id, count(*) as n from todos where deleted_at is null group by owner_id
    ) as c
      on c.owner_id = owners.owner_id
  `.execute(db);
  return rows.filter((row) => (row.usage ?? 0) !== Number(row.actual ?? 0));
}

function expectQuotaExceeded(response: LightMyRequestResponse, quota: number): void {
  expectProblem(response, 422, 'quota-exceeded', { instance: '/api/todos' });
  expect(response.json<{ limit?: unknown }>().limit).toBe(quota);
  expect(response.headers.location).toBeUndefined();
}

/** How many of each status, e.g. `{ 201: 5, 422: 11 }`. */
function tally(statuses: readonly number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

describe('the todo quota', () => {
  it('refuses the create past the quota with 422 quota-exceeded and its limit, storing nothing', async () => {
    const t = await appWithQuota(QUOTA);
    const owner = uniqueOwner('alice');
    const bearer = await t.bearer(owner);
    await fill(t, bearer, QUOTA);

    const refused = [await create(t, bearer), await create(t, bearer)];

    for (const response of refused) expectQuotaExceeded(response, QUOTA);
    expect(await rowsOf(t.database.db, owner)).toBe(QUOTA);
    expect(await usageOf(t.database.db, owner)).toBe(QUOTA);
  });

  it('frees a slot when a todo is deleted, and only one', async () => {
    const t = await appWithQuota(QUOTA);
    const owner = uniqueOwner('alice');
    const bearer = await t.bearer(owner);
    const [first] = await fill(t, bearer, QUOTA);

    await remove(t, bearer, `/api/todos/${first ?? ''}`);

    expect((await create(t, bearer)).statusCode).toBe(201);
    expectQuotaExceeded(await create(t, bearer), QUOTA);
    expect(await rowsOf(t.database.db, owner)).toBe(QUOTA);
  });

  it('frees exactly the slots a bulk delete empties', async () => {
    const t = await appWithQuota(QUOTA);
    const owner = uniqueOwner('alice');
    const bearer = await t.bearer(owner);
    const ids = await fill(t, bearer, QUOTA);
    for (const id of ids.slice(0, 2)) {
      const done = await t.inject({
        method: 'POST',
        url: `/api/todos/${id}/complete`,
        headers: { authorization: bearer },
      });
      expect(done.statusCode).toBe(200);
    }

    await remove(t, bearer, '/api/todos?completed=true');
    const usageAfterFiltered = await usageOf(t.database.db, owner);
    const refilled = [await create(t, bearer), await create(t, bearer), await create(t, bearer)];
    await remove(t, bearer, '/api/todos');
    const usageAfterAll = await usageOf(t.database.db, owner);

    expect(usageAfterFiltered).toBe(QUOTA - 2);
    expect(refilled.map((r) => r.statusCode)).toEqual([201, 201, 422]);
    expect(usageAfterAll).toBe(0);
    expect(await fill(t, bearer, QUOTA)).toHaveLength(QUOTA);
    expectQuotaExceeded(await create(t, bearer), QUOTA);
  });

  it("counts per owner: bob can still create while alice's quota is full", async () => {
    const t = await appWithQuota(QUOTA);
    const alice = await t.bearer(uniqueOwner('alice'));
    const bob = uniqueOwner('bob');
    const bobBearer = await t.bearer(bob);
    await fill(t, alice, QUOTA);
    expectQuotaExceeded(await create(t, alice), QUOTA);

    expect(await fill(t, bobBearer, QUOTA)).toHaveLength(QUOTA);
    expectQuotaExceeded(await create(t, bobBearer), QUOTA);
    expect(await rowsOf(t.database.db, bob)).toBe(QUOTA);
  });

  it('does not count an idempotent replay of a create twice, even at the quota', async () => {
    const t = await appWithQuota(QUOTA);
    const owner = uniqueOwner('alice');
    const bearer = await t.bearer(owner);
    const keyed = createRequest(bearer, { 'idempotency-key': 'create-once' });
    const original = await t.inject(keyed);
    const replay = await t.inject(keyed);
    expect(await rowsOf(t.database.db, owner)).toBe(1);
    await fill(t, bearer, QUOTA - 1);

    const replayAtQuota = await t.inject(keyed);

    expect(original.statusCode).toBe(201);
    for (const again of [replay, replayAtQuota]) {
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json<{ id: string }>().id).toBe(original.json<{ id: string }>().id);
    }
    expect(await rowsOf(t.database.db, owner)).toBe(QUOTA);
    expect(await usageOf(t.database.db, owner)).toBe(QUOTA);
  });

  it('lets a create refused by the quota be retried with the same Idempotency-Key once a slot frees', async () => {
    const t = await appWithQuota(QUOTA);
    const owner = uniqueOwner('alice');
    const bearer = await t.bearer(owner);
    const [first] = await fill(t, bearer, QUOTA);
    const keyed = createRequest(bearer, { 'idempotency-key': 'retry-after-delete' });
    expectQuotaExceeded(await t.inject(keyed), QUOTA);

    await remove(t, bearer, `/api/todos/${first ?? ''}`);
    const retried = await t.inject(keyed);

    expect(retried.statusCode, retried.body).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect(await rowsOf(t.database.db, owner)).toBe(QUOTA);
  });
});

describe(`exactly the quota under ${CREATORS} concurrent creators (API4)`, () => {
  it.each([1, 5, 15])('stores exactly Q = %i through inject, the rest 422', async (quota) => {
    const t = await appWithQuota(quota);
    const owner = uniqueOwner('racer');
    const bearer = await t.bearer(owner);

    const responses = await Promise.all(
      Array.from({ length: CREATORS }, () => t.inject(createRequest(bearer))),
    );

    expect(tally(responses.map((r) => r.statusCode))).toEqual({
      201: quota,
      422: CREATORS - quota,
    });
    for (const response of responses.filter((r) => r.statusCode === 422)) {
      expectQuotaExceeded(response, quota);
    }
    expect(await rowsOf(t.database.db, owner)).toBe(quota);
    expect(await usageOf(t.database.db, owner)).toBe(quota);
  });

  describe('over real HTTP', () => {
    /** Each round uses its own owner, so that every round races from zero. */
    const ROUNDS = 3;
    const solo = Array.from({ length: ROUNDS }, (_, i) => uniqueOwner(`solo${i}`));
    const pair = Array.from({ length: ROUNDS }, (_, i) => uniqueOwner(`pair${i}`));
    let store: KeyedStore | undefined;
    let servers: LimitsServer[] = [];

    beforeAll(async () => {
      const keys = await createKeyedStore([...solo, ...pair]);
      store = keys;
      const env = { AUTH_MODE: 'required', TODO_QUOTA: String(QUOTA) };
      // Started one after the other: both run the migrator at start-up.
      servers.push(await startServerOn(keys, env));
      servers.push(await startServerOn(keys, env));
    }, 40_000);

    afterAll(async () => {
      await Promise.all(servers.map((server) => server.stop()));
      servers = [];
      await store?.close();
    });

    function keysOf(): KeyedStore {
      if (!store) throw new Error('the store was not created');
      return store;
    }

    /** All creators at once, creator i on server i mod the number of servers given. */
    async function race(owner: string, on: readonly LimitsServer[]): Promise<number[]> {
      const authorization = keysOf().bearer(owner);
      return Promise.all(
        Array.from({ length: CREATORS }, async (_, i) => {
          const server = on[i % on.length];
          if (!server) throw new Error('no server');
          const response = await fetch(`${server.baseUrl}/api/todos`, {
            method: 'POST',
            headers: { authorization, 'content-type': 'application/json' },
            body: JSON.stringify({ title: `racer ${i}` }),
          });
          const body = await response.text();
          if (response.status === 422) {
            expect(JSON.parse(body)).toMatchObject({ code: 'quota-exceeded', limit: QUOTA });
          }
          return response.status;
        }),
      );
    }

    it(`stores exactly Q = ${QUOTA} per owner against one server process, ${ROUNDS} rounds`, async () => {
      for (const owner of solo) {
        const statuses = await race(owner, servers.slice(0, 1));

        expect(tally(statuses)).toEqual({ 201: QUOTA, 422: CREATORS - QUOTA });
        expect(await rowsOf(keysOf().database.db, owner)).toBe(QUOTA);
      }
    });

    it(`stores exactly Q = ${QUOTA} per owner across two server processes on one database, ${ROUNDS} rounds`, async () => {
      for (const owner of pair) {
        const statuses = await race(owner, servers);

        expect(tally(statuses)).toEqual({ 201: QUOTA, 422: CREATORS - QUOTA });
        expect(await rowsOf(keysOf().database.db, owner)).toBe(QUOTA);
      }
      expect(await usageMismatches(keysOf().database.db)).toEqual([]);
    });
  });
});

describe('owner_usage stays equal to the rows it counts (property)', () => {
  const PROPERTY_QUOTA = 4;
  const OWNERS = 2;

  type Command =
    | {
        readonly kind: 'create';
        readonly owner: number;
        readonly label: 'a' | 'b';
        readonly done: boolean;
      }
    | { readonly kind: 'create-many'; readonly owner: number; readonly count: number }
    | { readonly kind: 'delete-one'; readonly owner: number; readonly pick: number }
    | { readonly kind: 'delete-matching'; readonly owner: number; readonly query: string };

  const owner = fc.integer({ min: 0, max: OWNERS - 1 });
  const command: fc.Arbitrary<Command> = fc.oneof(
    fc.record({
      kind: fc.constant('create' as const),
      owner,
      label: fc.constantFrom('a' as const, 'b' as const),
      done: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant('create-many' as const),
      owner,
      count: fc.integer({ min: 2, max: 6 }),
    }),
    fc.record({ kind: fc.constant('delete-one' as const), owner, pick: fc.nat() }),
    fc.record({
      kind: fc.constant('delete-matching' as const),
      owner,
      query: fc.constantFrom(
        '?labels=a',
        '?labels_any=b',
        '?completed=true',
        '?completed=false',
        '',
      ),
    }),
  );

  it('after any mix of creates and deletes, and never lets an owner past the quota', async () => {
    const t = await appWithQuota(PROPERTY_QUOTA);
    const startedAt = performance.now();

    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 12 }), async (commands) => {
        // Fresh owners per run: each run starts from nothing, whatever earlier runs left.
        const owners = Array.from({ length: OWNERS }, () => uniqueOwner('mix'));
        const bearers = await Promise.all(owners.map((name) => t.bearer(name)));

        const post = (who: number, payload: Record<string, unknown>) =>
          t.inject({
            method: 'POST',
            url: '/api/todos',
            headers: { authorization: bearers[who] ?? '' },
            payload: { title: 'mixed', ...payload },
          });

        for (const step of commands) {
          const name = owners[step.owner] ?? '';
          const bearer = bearers[step.owner] ?? '';
          const before = await rowsOf(t.database.db, name);
          if (step.kind === 'create') {
            const response = await post(step.owner, { labels: [step.label], completed: step.done });
            expect(response.statusCode).toBe(before < PROPERTY_QUOTA ? 201 : 422);
          } else if (step.kind === 'create-many') {
            const responses = await Promise.all(
              Array.from({ length: step.count }, () => post(step.owner, { labels: ['a', 'b'] })),
            );
            const created = responses.filter((r) => r.statusCode === 201).length;
            expect(created).toBe(Math.min(step.count, PROPERTY_QUOTA - before));
            expect(responses.every((r) => r.statusCode === 201 || r.statusCode === 422)).toBe(true);
          } else if (step.kind === 'delete-one') {
            const mine = await t.database.db
              .selectFrom('todos')
              .select('id')
              .where('owner_id', '=', name)
              .where('deleted_at', 'is', null)
              .orderBy('id')
              .execute();
            const victim = mine[step.pick % Math.max(1, mine.length)];
            if (victim) await remove(t, bearer, `/api/todos/${victim.id}`);
          } else {
            await remove(t, bearer, `/api/todos${step.query}`);
          }
          for (const each of owners) {
            const rows = await rowsOf(t.database.db, each);
            expect(await usageOf(t.database.db, each)).toBe(rows);
            expect(rows).toBeLessThanOrEqual(PROPERTY_QUOTA);
          }
        }
      }),
      // Bounded in count and in time; an interrupted run still checked every command it ran.
      { numRuns: 40, interruptAfterTimeLimit: 15_000 },
    );

    expect(await usageMismatches(t.database.db)).toEqual([]);
    expect(performance.now() - startedAt).toBeLessThan(25_000);
  }, 30_000);
});
