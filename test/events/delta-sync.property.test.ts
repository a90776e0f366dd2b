import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChangesPage } from '../../src/events/todo-event.schemas.js';
import { purgeExpired } from '../../src/maintenance/purges.js';
import type { Todo } from '../../src/todos/todo.schemas.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 6 item 4: a client that keeps a copy of its todos by applying
 * `GET /api/todos/changes` pages — at any moments, with any page size — ends with exactly the
 * server's list, whatever happened in between.
 */

type Operation =
  | { readonly kind: 'create'; readonly title: string; readonly label: boolean }
  | { readonly kind: 'rename'; readonly pick: number; readonly title: string }
  | { readonly kind: 'complete' | 'reopen' | 'delete' | 'restore'; readonly pick: number }
  | { readonly kind: 'bulk-delete' }
  | { readonly kind: 'sync'; readonly limit: number };

const title = fc.string({ minLength: 1, maxLength: 12 }).filter((s) => s.trim() !== '');
const pick = fc.nat({ max: 50 });
const operation: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('create'), title, label: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('rename'), pick, title }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom('complete', 'reopen', 'delete', 'restore'),
      pick,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('bulk-delete') }) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('sync'), limit: fc.integer({ min: 1, max: 5 }) }),
  },
);

describe('delta sync', () => {
  let t: TestApp;
  let owners = 0;

  beforeAll(async () => {
    t = await buildTestApp({ env: { AUTH_MODE: 'required' } });
  });
  afterAll(async () => {
    await t.close();
  });

  /** A client: its copy of the todos and its token. */
  function clientOf(bearer: string) {
    const copy = new Map<string, Todo>();
    let since = '';
    const get = (url: string) =>
      t.inject({ method: 'GET', url, headers: { authorization: bearer } });
    return {
      copy,
      async start() {
        const response = await get('/api/todos/changes');
        expect(response.statusCode, response.body).toBe(200);
        since = response.json<ChangesPage>().next_since;
      },
      async sync(limit: number) {
        for (let calls = 0; calls < 1000; calls++) {
          const response = await get(
            `/api/todos/changes?since=${encodeURIComponent(since)}&limit=${limit}`,
          );
          expect(response.statusCode, response.body).toBe(200);
          const page = response.json<ChangesPage>();
          for (const change of page.changes) {
            if (change.deleted) copy.delete(change.id);
            else copy.set(change.id, change.todo);
          }
          since = page.next_since;
          if (!page.has_more) return;
        }
        throw new Error('sync never finished');
      },
    };
  }

  async function serverList(bearer: string): Promise<Todo[]> {
    const response = await t.inject({
      method: 'GET',
      url: '/api/todos?limit=200',
      headers: { authorization: bearer },
    });
    expect(response.headers.link).toBeUndefined();
    return response.json<Todo[]>();
  }

  it('converges on the server list whatever happens between syncs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 40 }), async (ops) => {
        const bearer = await t.bearer(`sync-${++owners}`);
        const client = clientOf(bearer);
        await client.start();
        const ids: string[] = [];
        const send = (method: 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
          t.inject({ method, url, payload, headers: { authorization: bearer } });
        const at = (n: number) => ids[n % Math.max(ids.length, 1)];

        for (const op of ops) {
          const id = at('pick' in op ? op.pick : 0);
          switch (op.kind) {
            case 'create': {
              const response = await send('POST', '/api/todos', {
                title: op.title,
                labels: op.label ? ['batch'] : [],
              });
              ids.push(response.json<Todo>().id);
              break;
            }
            case 'rename':
              if (id) await send('PATCH', `/api/todos/${id}`, { title: op.title });
              break;
            case 'complete':
            case 'reopen':
            case 'restore':
              if (id) await send('POST', `/api/todos/${id}/${op.kind}`);
              break;
            case 'delete':
              if (id) await send('DELETE', `/api/todos/${id}`);
              break;
            case 'bulk-delete':
              await send('DELETE', '/api/todos?labels=batch');
              break;
            case 'sync':
              await client.sync(op.limit);
              break;
          }
        }
        await client.sync(3);
        const server = await serverList(bearer);
        const byId = (a: Todo, b: Todo) => a.id.localeCompare(b.id);
        expect([...client.copy.values()].sort(byId)).toEqual([...server].sort(byId));
      }),
      { numRuns: 25 },
    );
  }, 120_000);

  it('refuses a token that is not ours or not yours (400)', async () => {
    const alice = await t.bearer('token-alice');
    const bob = await t.bearer('token-bob');
    const token = (
      await t.inject({
        method: 'GET',
        url: '/api/todos/changes',
        headers: { authorization: alice },
      })
    ).json<ChangesPage>().next_since;
    for (const [bearer, since] of [
      [bob, token],
      [alice, `${token.slice(0, -2)}AA`],
      [alice, 'not-a-token'],
    ] as const) {
      expectProblem(
        await t.inject({
          method: 'GET',
          url: `/api/todos/changes?since=${encodeURIComponent(since)}`,
          headers: { authorization: bearer },
        }),
        400,
        'invalid-parameter',
        { pointer: 'since' },
      );
    }
  });
});

describe('delta sync past the retention', () => {
  it('answers 410 sync-token-expired once the events after the token are purged', async () => {
    const clock = { now: new Date('2026-11-21T10:00:00Z') };
    const t = await buildTestApp({ now: () => clock.now });
    try {
      const token = (
        await t.inject({ method: 'GET', url: '/api/todos/changes' })
      ).json<ChangesPage>().next_since;
      await t.inject({ method: 'POST', url: '/api/todos', payload: { title: 'old news' } });
      const url = `/api/todos/changes?since=${encodeURIComponent(token)}`;
      expect((await t.inject({ method: 'GET', url })).json<ChangesPage>().changes).toHaveLength(1);

      clock.now = new Date('2026-11-22T11:00:00Z');
      const purged = await purgeExpired({
        database: t.database,
        now: () => clock.now,
        deletedRetentionDays: 30,
        eventRetentionHours: 24,
      });
      expect(purged.events).toBe(1);
      expectProblem(await t.inject({ method: 'GET', url }), 410, 'sync-token-expired');
      // A fresh token works again.
      const fresh = await t.inject({ method: 'GET', url: '/api/todos/changes' });
      expect(fresh.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
