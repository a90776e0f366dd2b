import { afterEach, describe, expect, it } from 'vitest';
import { purgeExpired } from '../../src/maintenance/purges.js';
import type { Todo } from '../../src/todos/todo.schemas.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 6 item 1: DELETE marks a todo deleted; it answers 404 and leaves lists, comes back with
 * `POST …/restore`, shows with `include_deleted=true`, and is purged after the retention.
 */

const DAY_MS = 86_400_000;

const opened: TestApp[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((t) => t.close()));
});

/** An app whose clock the test moves. */
async function appAt(start: Date, env: Record<string, string> = {}) {
  const clock = { now: start };
  const t = await buildTestApp({ now: () => clock.now, env });
  opened.push(t);
  const create = async (title: string) => {
    const response = await t.inject({ method: 'POST', url: '/api/todos', payload: { title } });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<Todo>();
  };
  const list = async (query = '') =>
    (await t.inject({ method: 'GET', url: `/api/todos${query}` })).json<Todo[]>();
  return { t, clock, create, list };
}

describe('soft delete and restore', () => {
  it('hides a deleted todo and brings it back as it was, with a new version', async () => {
    const { t, create, list } = await appAt(new Date('2026-11-21T10:00:00Z'));
    const todo = await create('Water the plants');
    await create('Stays');

    const deleted = await t.inject({ method: 'DELETE', url: `/api/todos/${todo.id}` });
    expect(deleted.statusCode).toBe(204);
    expectProblem(
      await t.inject({ method: 'GET', url: `/api/todos/${todo.id}` }),
      404,
      'not-found',
    );
    expect((await list()).map((x) => x.title)).toEqual(['Stays']);
    // Changing a deleted todo is as impossible as changing an unknown one.
    expectProblem(
      await t.inject({ method: 'PATCH', url: `/api/todos/${todo.id}`, payload: { title: 'x' } }),
      404,
      'not-found',
    );
    expectProblem(
      await t.inject({ method: 'DELETE', url: `/api/todos/${todo.id}` }),
      404,
      'not-found',
    );

    const withDeleted = await list('?include_deleted=true');
    expect(withDeleted.map((x) => [x.title, x.deleted_at !== null])).toEqual([
      ['Water the plants', true],
      ['Stays', false],
    ]);

    const restored = await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/restore` });
    expect(restored.statusCode, restored.body).toBe(200);
    const body = restored.json<Todo>();
    expect(body).toMatchObject({ title: 'Water the plants', deleted_at: null, version: 3 });
    expect(restored.headers.etag).toBe('"3"');
    expect((await list()).map((x) => x.title)).toEqual(['Water the plants', 'Stays']);
  });

  it('refuses to restore a todo that is not deleted (409), or an unknown one (404)', async () => {
    const { t, create } = await appAt(new Date('2026-11-21T10:00:00Z'));
    const todo = await create('Alive');
    expectProblem(
      await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/restore` }),
      409,
      'not-deleted',
    );
    expectProblem(
      await t.inject({
        method: 'POST',
        url: '/api/todos/0190d3a8-0000-7000-8000-00000000dead/restore',
      }),
      404,
      'not-found',
    );
  });

  it('checks If-Match on restore against the deleted version', async () => {
    const { t, create } = await appAt(new Date('2026-11-21T10:00:00Z'));
    const todo = await create('Versioned');
    await t.inject({ method: 'DELETE', url: `/api/todos/${todo.id}` });
    expectProblem(
      await t.inject({
        method: 'POST',
        url: `/api/todos/${todo.id}/restore`,
        headers: { 'if-match': '"1"' },
      }),
      412,
      'precondition-failed',
    );
    const ok = await t.inject({
      method: 'POST',
      url: `/api/todos/${todo.id}/restore`,
      headers: { 'if-match': '"2"' },
    });
    expect(ok.statusCode).toBe(200);
  });

  it('deletes every matching todo restorably with DELETE /api/todos', async () => {
    const { t, create, list } = await appAt(new Date('2026-11-21T10:00:00Z'));
    const done = await create('Done');
    await t.inject({ method: 'POST', url: `/api/todos/${done.id}/complete` });
    await create('Open');
    const bulk = await t.inject({ method: 'DELETE', url: '/api/todos?completed=true' });
    expect(bulk.statusCode).toBe(204);
    expect((await list()).map((x) => x.title)).toEqual(['Open']);
    const restored = await t.inject({ method: 'POST', url: `/api/todos/${done.id}/restore` });
    expect(restored.json<Todo>()).toMatchObject({ status: 'completed', deleted_at: null });
  });

  it('frees quota on delete and counts a restored todo again', async () => {
    const { t, create } = await appAt(new Date('2026-11-21T10:00:00Z'), { TODO_QUOTA: '2' });
    const first = await create('one');
    await create('two');
    expectProblem(
      await t.inject({ method: 'POST', url: '/api/todos', payload: { title: 'three' } }),
      422,
      'quota-exceeded',
    );
    await t.inject({ method: 'DELETE', url: `/api/todos/${first.id}` });
    await create('three');
    expectProblem(
      await t.inject({ method: 'POST', url: `/api/todos/${first.id}/restore` }),
      422,
      'quota-exceeded',
    );
  });

  it('purges deleted todos after the retention, and only those', async () => {
    const start = new Date('2026-11-21T10:00:00Z');
    const { t, clock, create, list } = await appAt(start, { DELETED_RETENTION_DAYS: '30' });
    const old = await create('deleted long ago');
    const recent = await create('deleted lately');
    await create('never deleted');
    await t.inject({ method: 'DELETE', url: `/api/todos/${old.id}` });
    clock.now = new Date(start.getTime() + 20 * DAY_MS);
    await t.inject({ method: 'DELETE', url: `/api/todos/${recent.id}` });

    clock.now = new Date(start.getTime() + 31 * DAY_MS);
    const purged = await purgeExpired({
      database: t.database,
      now: () => clock.now,
      deletedRetentionDays: 30,
      eventRetentionHours: 24 * 365,
    });
    expect(purged.todos).toBe(1);
    expectProblem(
      await t.inject({ method: 'POST', url: `/api/todos/${old.id}/restore` }),
      404,
      'not-found',
    );
    expect((await list('?include_deleted=true')).map((x) => x.title)).toEqual([
      'deleted lately',
      'never deleted',
    ]);
    const again = await t.inject({ method: 'POST', url: `/api/todos/${recent.id}/restore` });
    expect(again.statusCode).toBe(200);
  });

  it('binds include_deleted into the cursor', async () => {
    const { t, create } = await appAt(new Date('2026-11-21T10:00:00Z'));
    for (let i = 0; i < 3; i++) await create(`t${i}`);
    const first = await t.inject({ method: 'GET', url: '/api/todos?limit=1&include_deleted=true' });
    const next = /cursor=([^&>]+)/.exec(String(first.headers.link))?.[1];
    expect(next).toBeDefined();
    expectProblem(
      await t.inject({ method: 'GET', url: `/api/todos?limit=1&cursor=${next ?? ''}` }),
      400,
      'invalid-cursor',
    );
  });
});
