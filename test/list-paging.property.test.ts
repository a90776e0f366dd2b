import type { LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TODO_PRIORITIES, TODO_STATUSES, type Todo } from '../src/todos/todo.schemas.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Keyset paging under concurrent change: while a client walks every page of a sorted list,
 * todos are created, changed and deleted between its requests. Whatever happens, every todo
 * that existed untouched for the whole walk is listed exactly once, and the rows come out in
 * strictly increasing sort order (judged by an oracle written here, independently of the SQL).
 */

const SORTS = [
  undefined,
  '-order',
  'created_at',
  '-updated_at',
  'due_at',
  '-due_at',
  'priority',
  '-priority',
  'title',
  '-title',
  'status',
  '-status',
  'priority,-due_at',
  '-status,title',
  'due_at,-priority,-created_at',
] as const;

// Titles that tie once case and accents are ignored, and digits that sort as text.
const TITLES = ['apple', 'Apple', 'éclair', 'Eclair', 'ECLAIR', 'banana', 'Zeta', '10', '2', 'İx'];
const ORDERS = [1, 2, 2, 3, -1];
const DUES: readonly Partial<Pick<Todo, 'due_date' | 'due_at'>>[] = [
  { due_date: null, due_at: null },
  { due_date: '2026-03-01', due_at: null },
  { due_date: null, due_at: '2026-03-01T23:59:59.999Z' }, // ties with the all-day one above
  { due_date: null, due_at: '2026-03-01T08:00:00.000Z' },
  { due_date: '2026-02-28', due_at: null },
];

// ---- the oracle ----

type Field = 'order' | 'created_at' | 'updated_at' | 'due_at' | 'priority' | 'title' | 'status';

const byCodePoint = (a: string, b: string): number =>
  Buffer.compare(Buffer.from(a), Buffer.from(b));
const foldTitle = (title: string): string =>
  title.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');
const dueOf = (todo: Todo): string | null =>
  todo.due_at ?? (todo.due_date === null ? null : `${todo.due_date}T23:59:59.999Z`);

/** Compares two todos by one key, ascending; `null` dues are handled by the caller. */
function compareField(field: Field, a: Todo, b: Todo): number {
  switch (field) {
    case 'order':
      return a.order - b.order;
    case 'created_at':
    case 'updated_at':
      return byCodePoint(a[field], b[field]);
    case 'priority':
      return TODO_PRIORITIES.indexOf(a.priority) - TODO_PRIORITIES.indexOf(b.priority);
    case 'status':
      return TODO_STATUSES.indexOf(a.status) - TODO_STATUSES.indexOf(b.status);
    case 'title':
      return byCodePoint(foldTitle(a.title), foldTitle(b.title));
    case 'due_at':
      return byCodePoint(dueOf(a) ?? '', dueOf(b) ?? '');
  }
}

function comparator(sort: string | undefined): (a: Todo, b: Todo) => number {
  const keys = (sort ?? 'order,created_at').split(',').map((item) => ({
    field: item.replace(/^-/, '') as Field,
    descending: item.startsWith('-'),
  }));
  const lastDescending = keys.at(-1)?.descending ?? false;
  return (a, b) => {
    for (const { field, descending } of keys) {
      if (field === 'due_at') {
        // No due comes last in both directions.
        const [da, db] = [dueOf(a), dueOf(b)];
        if ((da === null) !== (db === null)) return da === null ? 1 : -1;
      }
      const order = compareField(field, a, b);
      if (order !== 0) return descending ? -order : order;
    }
    const byId = byCodePoint(a.id, b.id);
    return lastDescending ? -byId : byId;
  };
}

// ---- the walk ----

const todoArb = fc.record({
  title: fc.constantFrom(...TITLES),
  order: fc.constantFrom(...ORDERS),
  priority: fc.constantFrom(...TODO_PRIORITIES),
  completed: fc.boolean(),
  due: fc.constantFrom(...DUES),
});

const mutationArb = fc.oneof(
  fc.record({ kind: fc.constant('create' as const), todo: todoArb }),
  fc.record({
    kind: fc.constant('patch' as const),
    pick: fc.nat(),
    change: fc.oneof(
      fc.record({ title: fc.constantFrom(...TITLES) }),
      fc.record({ order: fc.constantFrom(...ORDERS) }),
      fc.record({ priority: fc.constantFrom(...TODO_PRIORITIES) }),
      fc.record({ completed: fc.boolean() }),
      fc.constantFrom(...DUES),
    ),
  }),
  fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }),
);

const scenarioArb = fc.record({
  initial: fc.array(todoArb, { minLength: 0, maxLength: 18 }),
  limit: fc.integer({ min: 1, max: 6 }),
  // One batch of changes before each next page.
  batches: fc.array(fc.array(mutationArb, { maxLength: 3 }), { maxLength: 20 }),
});

type TodoSpec = typeof todoArb extends fc.Arbitrary<infer T> ? T : never;

function body(todo: TodoSpec): object {
  return {
    title: todo.title,
    order: todo.order,
    priority: todo.priority,
    completed: todo.completed,
    ...todo.due,
  };
}

/** `rel="next"` of a Link header, relative for `inject`. */
function nextPath(response: LightMyRequestResponse): string | undefined {
  const link = response.headers.link;
  if (link === undefined) return undefined;
  const url = new URL(/^<([^>]+)>; rel="next"$/.exec(String(link))?.[1] ?? '');
  return `${url.pathname}${url.search}`;
}

describe.each(SORTS)('walking every page with sort=%s while todos change', (sort) => {
  let t: TestApp;

  beforeAll(async () => {
    // Timestamps often tie (the clock stands still on every other reading), so `id` must decide.
    let time = Date.parse('2026-01-01T00:00:00.000Z');
    let readings = 0;
    t = await buildTestApp({
      now: () => new Date((time += readings++ % 2 === 0 ? 0 : 1000)),
    });
  });
  afterAll(async () => {
    await t.close();
  });

  async function request(
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
  ): Promise<LightMyRequestResponse> {
    return t.inject({ method, url, ...(payload ? { payload } : {}) });
  }

  it('lists every untouched todo exactly once, in strictly increasing order', async () => {
    const compare = comparator(sort);
    const query = sort === undefined ? '' : `&sort=${encodeURIComponent(sort)}`;
    await fc.assert(
      fc.asyncProperty(scenarioArb, async ({ initial, limit, batches }) => {
        expect((await request('DELETE', '/api/todos')).statusCode).toBe(204);
        const live: string[] = [];
        for (const todo of initial) {
          const created = await request('POST', '/api/todos', body(todo));
          expect(created.statusCode, created.body).toBe(201);
          live.push(created.json<Todo>().id);
        }
        const untouched = new Set(live);

        const seen: Todo[] = [];
        let url: string | undefined = `/api/todos?limit=${limit}${query}`;
        for (let page = 0; url !== undefined; page++) {
          const response = await request('GET', url);
          expect(response.statusCode, response.body).toBe(200);
          seen.push(...response.json<Todo[]>());
          url = nextPath(response);

          for (const mutation of batches[page] ?? []) {
            if (mutation.kind === 'create') {
              const created = await request('POST', '/api/todos', body(mutation.todo));
              live.push(created.json<Todo>().id);
              continue;
            }
            const id = live[mutation.pick % Math.max(live.length, 1)];
            if (id === undefined) continue;
            untouched.delete(id);
            if (mutation.kind === 'delete') {
              await request('DELETE', `/api/todos/${id}`);
              live.splice(live.indexOf(id), 1);
            } else {
              const patched = await request('PATCH', `/api/todos/${id}`, mutation.change);
              expect(patched.statusCode, patched.body).toBe(200);
            }
          }
          expect(page).toBeLessThan(200);
        }

        for (const id of untouched) {
          expect(
            seen.filter((todo) => todo.id === id),
            `todo ${id}`,
          ).toHaveLength(1);
        }
        for (let i = 1; i < seen.length; i++) {
          const [before, after] = [seen[i - 1] as Todo, seen[i] as Todo];
          expect(
            compare(before, after),
            `${JSON.stringify(before)}\nthen\n${JSON.stringify(after)}`,
          ).toBeLessThan(0);
        }
      }),
      { numRuns: 8, seed: 20260301 },
    );
  });
});
