import type { InjectOptions } from 'fastify';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TodoAction } from '../src/todos/todo-transitions.js';
import type { Todo, TodoStatus } from '../src/todos/todo.schemas.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';
import { STATUSES, TABLE, type Cell } from './helpers/transition-oracle.js';

/** The action endpoint that targets each status. */
const ACTION_TO: Readonly<Record<TodoStatus, TodoAction>> = {
  open: 'reopen',
  in_progress: 'start',
  blocked: 'block',
  deferred: 'defer',
  completed: 'complete',
  cancelled: 'cancel',
};

const TITLE = 'Transition probe';

const cells = STATUSES.flatMap((from) =>
  STATUSES.map((to, index) => {
    const cell = TABLE[from][index] ?? '✗';
    const outcome = cell === '✓' ? 'allowed' : cell === '✗' ? 'forbidden' : 'no-op';
    return { from, to, cell, outcome };
  }),
);

function allowedRow(from: TodoStatus): TodoStatus[] {
  return STATUSES.filter((_, index) => TABLE[from][index] === '✓');
}

interface Mechanism {
  readonly name: string;
  readonly request: (id: string, to: TodoStatus) => InjectOptions;
}

const MECHANISMS: readonly Mechanism[] = [
  {
    name: 'PUT /api/todos/{id} with a full body and `status`',
    request: (id, to) => ({
      method: 'PUT',
      url: `/api/todos/${id}`,
      payload: { title: TITLE, status: to },
    }),
  },
  {
    name: 'PATCH /api/todos/{id} with `{status}`',
    request: (id, to) => ({ method: 'PATCH', url: `/api/todos/${id}`, payload: { status: to } }),
  },
  {
    name: 'POST /api/todos/{id}/{action}',
    request: (id, to) => ({ method: 'POST', url: `/api/todos/${id}/${ACTION_TO[to]}` }),
  },
];

/** Test-table rows `[from, to, cell]` of one outcome, so titles read `open → completed (✓)`. */
function rowsOf(outcome: string): [TodoStatus, TodoStatus, Cell][] {
  return cells
    .filter((cell) => cell.outcome === outcome)
    .map(({ from, to, cell }): [TodoStatus, TodoStatus, Cell] => [from, to, cell]);
}

const byName = MECHANISMS.map((mechanism): [string, Mechanism] => [mechanism.name, mechanism]);

async function create(t: TestApp, body: Record<string, unknown> = { title: TITLE }) {
  const response = await t.inject({ method: 'POST', url: '/api/todos', payload: body });
  expect(response.statusCode).toBe(201);
  return response.json<Todo>();
}

async function act(t: TestApp, id: string, action: TodoAction) {
  const response = await t.inject({ method: 'POST', url: `/api/todos/${id}/${action}` });
  expect(response.statusCode).toBe(200);
  return response.json<Todo>();
}

async function get(t: TestApp, id: string) {
  const response = await t.inject({ method: 'GET', url: `/api/todos/${id}` });
  expect(response.statusCode).toBe(200);
  return response.json<Todo>();
}

/** A todo in `status`, reached from `open` along an allowed edge. */
async function createIn(t: TestApp, status: TodoStatus): Promise<Todo> {
  const todo = await create(t);
  if (status === 'open') return todo;
  const moved = await act(t, todo.id, ACTION_TO[status]);
  expect(moved.status).toBe(status);
  return moved;
}

async function patch(t: TestApp, id: string, body: Record<string, unknown>) {
  return t.inject({ method: 'PATCH', url: `/api/todos/${id}`, payload: body });
}

describe('status transitions', () => {
  // One app for the whole table: every case creates the todo it moves and reads only that one.
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe.each(byName)('%s', (_name, { request }) => {
    it.each(rowsOf('allowed'))(
      'moves %s → %s (%s): 200, new status, version + 1',
      async (from, to) => {
        const before = await createIn(t, from);
        const response = await t.inject(request(before.id, to));
        expect(response.statusCode).toBe(200);
        const after = response.json<Todo>();
        expect(after.status).toBe(to);
        expect(after.completed).toBe(to === 'completed');
        expect(after.version).toBe(before.version + 1);
        expect(response.headers.etag).toBe(`"${before.version + 1}"`);
        if (to === 'completed') expect(after.completed_at).toEqual(expect.any(String));
        else expect(after.completed_at).toBeNull();
        expect(await get(t, before.id)).toEqual(after);
      },
    );

    it.each(rowsOf('forbidden'))(
      'refuses %s → %s (%s): 409 invalid-transition, todo unchanged',
      async (from, to) => {
        const before = await createIn(t, from);
        const response = await t.inject(request(before.id, to));
        expect(response.statusCode).toBe(409);
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(response.json()).toMatchObject({
          type: '/problems/invalid-transition',
          status: 409,
          code: 'invalid-transition',
          current_status: from,
          allowed_transitions: allowedRow(from),
        });
        expect(response.json<{ allowed_transitions: string[] }>().allowed_transitions).toEqual(
          allowedRow(from),
        );
        const after = await get(t, before.id);
        expect(after).toEqual(before);
        expect(after.version).toBe(before.version);
      },
    );

    it.each(rowsOf('no-op'))(
      'treats %s → %s (%s) as a no-op: 200, version unchanged',
      async (from, to) => {
        const before = await createIn(t, from);
        const response = await t.inject(request(before.id, to));
        expect(response.statusCode).toBe(200);
        expect(response.json<Todo>()).toEqual(before);
        expect(response.headers.etag).toBe(`"${before.version}"`);
        expect(await get(t, before.id)).toEqual(before);
      },
    );
  });

  it('covers all 36 cells: 22 allowed, 8 forbidden, 6 no-ops', () => {
    const count = (outcome: string) => cells.filter((cell) => cell.outcome === outcome).length;
    expect([cells.length, count('allowed'), count('forbidden'), count('no-op')]).toEqual([
      36, 22, 8, 6,
    ]);
  });

  it('leaves every other field alone when a PUT with other changes is refused', async () => {
    const before = await createIn(t, 'completed');
    const response = await t.inject({
      method: 'PUT',
      url: `/api/todos/${before.id}`,
      payload: { title: 'Renamed', priority: 'high', status: 'in_progress' },
    });
    expect(response.statusCode).toBe(409);
    expect(await get(t, before.id)).toEqual(before);
  });
});

describe('completed_at', () => {
  let t: TestApp;
  let clock: Date;
  const tick = (iso: string) => {
    clock = new Date(iso);
  };
  beforeEach(async () => {
    clock = new Date('2030-01-01T10:00:00.000Z');
    t = await buildTestApp({ now: () => clock });
  });
  afterEach(async () => {
    await t.close();
  });

  it('is null on a new open todo', async () => {
    expect((await create(t)).completed_at).toBeNull();
  });

  it('is set when a todo is created completed', async () => {
    const todo = await create(t, { title: TITLE, status: 'completed' });
    expect(todo.completed_at).toBe('2030-01-01T10:00:00.000Z');
    expect(todo.completed).toBe(true);
  });

  it.each(byName)('is set to the time of entering completed via %s', async (_name, { request }) => {
    const todo = await createIn(t, 'in_progress');
    tick('2030-01-02T08:30:00.000Z');
    const response = await t.inject(request(todo.id, 'completed'));
    expect(response.statusCode).toBe(200);
    expect(response.json<Todo>().completed_at).toBe('2030-01-02T08:30:00.000Z');
  });

  it.each(byName)('is kept on a no-op complete via %s', async (_name, { request }) => {
    const todo = await createIn(t, 'completed');
    tick('2030-01-05T00:00:00.000Z');
    const response = await t.inject(request(todo.id, 'completed'));
    expect(response.statusCode).toBe(200);
    const after = response.json<Todo>();
    expect(after.completed_at).toBe('2030-01-01T10:00:00.000Z');
    expect(after.version).toBe(todo.version);
  });

  it('is kept when a completed todo changes another field', async () => {
    const todo = await createIn(t, 'completed');
    tick('2030-01-05T00:00:00.000Z');
    const response = await patch(t, todo.id, { title: 'Renamed' });
    expect(response.statusCode).toBe(200);
    const after = response.json<Todo>();
    expect(after.title).toBe('Renamed');
    expect(after.version).toBe(todo.version + 1);
    expect(after.completed_at).toBe('2030-01-01T10:00:00.000Z');
    expect(after.updated_at).toBe('2030-01-05T00:00:00.000Z');
  });

  it.each(byName)('is cleared on reopen via %s', async (_name, { request }) => {
    const todo = await createIn(t, 'completed');
    expect(todo.completed_at).not.toBeNull();
    const response = await t.inject(request(todo.id, 'open'));
    expect(response.statusCode).toBe(200);
    const after = response.json<Todo>();
    expect(after.status).toBe('open');
    expect(after.completed_at).toBeNull();
    expect((await get(t, todo.id)).completed_at).toBeNull();
  });

  it('is set afresh when a reopened todo is completed again', async () => {
    const todo = await createIn(t, 'completed');
    await act(t, todo.id, 'reopen');
    tick('2030-02-01T00:00:00.000Z');
    const again = await act(t, todo.id, 'complete');
    expect(again.completed_at).toBe('2030-02-01T00:00:00.000Z');
    expect(again.version).toBe(todo.version + 2);
  });
});

describe('PATCH /api/todos/{id} with the `completed` alias', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it.each<TodoStatus>(['open', 'in_progress', 'blocked', 'deferred'])(
    'completes a %s todo with `completed: true`',
    async (from) => {
      const todo = await createIn(t, from);
      const response = await patch(t, todo.id, { completed: true });
      expect(response.statusCode).toBe(200);
      const after = response.json<Todo>();
      expect(after).toMatchObject({ status: 'completed', completed: true });
      expect(after.completed_at).toEqual(expect.any(String));
      expect(after.version).toBe(todo.version + 1);
    },
  );

  it('treats `completed: true` on a completed todo as a no-op', async () => {
    const todo = await createIn(t, 'completed');
    const response = await patch(t, todo.id, { completed: true });
    expect(response.statusCode).toBe(200);
    expect(response.json<Todo>()).toEqual(todo);
  });

  it('reopens a completed todo with `completed: false`', async () => {
    const todo = await createIn(t, 'completed');
    const response = await patch(t, todo.id, { completed: false });
    expect(response.statusCode).toBe(200);
    const after = response.json<Todo>();
    expect(after).toMatchObject({ status: 'open', completed: false, completed_at: null });
    expect(after.version).toBe(todo.version + 1);
  });

  it.each<TodoStatus>(['open', 'in_progress', 'blocked', 'deferred', 'cancelled'])(
    'changes nothing on a %s todo with `completed: false`',
    async (from) => {
      const todo = await createIn(t, from);
      const response = await patch(t, todo.id, { completed: false });
      expect(response.statusCode).toBe(200);
      expect(response.json<Todo>()).toEqual(todo);
      expect(await get(t, todo.id)).toEqual(todo);
    },
  );

  it('refuses `completed: true` on a cancelled todo with 409 invalid-transition', async () => {
    const todo = await createIn(t, 'cancelled');
    const response = await patch(t, todo.id, { completed: true });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({
      code: 'invalid-transition',
      current_status: 'cancelled',
      allowed_transitions: ['open'],
    });
    expect(await get(t, todo.id)).toEqual(todo);
  });

  it('accepts `status` and `completed` sent together when they agree', async () => {
    const todo = await createIn(t, 'open');
    const response = await patch(t, todo.id, { status: 'completed', completed: true });
    expect(response.statusCode).toBe(200);
    expect(response.json<Todo>().status).toBe('completed');
  });
});

describe('a `status` contradicting `completed`', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  const contradictions: [TodoStatus, boolean][] = [
    ['open', true],
    ['in_progress', true],
    ['completed', false],
  ];

  it.each(contradictions)(
    'PATCH {status: %s, completed: %s} → 422, todo unchanged',
    async (status, completed) => {
      const todo = await createIn(t, 'open');
      const response = await patch(t, todo.id, { status, completed });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({
        code: 'validation-error',
        errors: [expect.objectContaining({ pointer: '/completed', code: 'conflict' })],
      });
      expect(await get(t, todo.id)).toEqual(todo);
    },
  );

  it.each(contradictions)(
    'PUT {status: %s, completed: %s} → 422, todo unchanged',
    async (status, completed) => {
      const todo = await createIn(t, 'open');
      const response = await t.inject({
        method: 'PUT',
        url: `/api/todos/${todo.id}`,
        payload: { title: TITLE, status, completed },
      });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({
        code: 'validation-error',
        errors: [expect.objectContaining({ pointer: '/completed' })],
      });
      expect(await get(t, todo.id)).toEqual(todo);
    },
  );

  it.each(contradictions)(
    'POST {status: %s, completed: %s} → 422, nothing created',
    async (status, completed) => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        payload: { title: TITLE, status, completed },
      });
      expect(response.statusCode).toBe(422);
      expect(response.json()).toMatchObject({ code: 'validation-error' });
      const list = await t.inject({ method: 'GET', url: '/api/todos' });
      expect(list.json()).toEqual([]);
    },
  );
});
