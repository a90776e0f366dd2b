import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TodoEventData } from '../../src/events/todo-events.js';
import type { Todo } from '../../src/todos/todo.schemas.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 6 item 2: every committed change writes its events in the same transaction — one per
 * logical change, with a per-owner sequence without gaps — and nothing else writes any.
 */
describe('the outbox', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    t = await buildTestApp({ env: { AUTH_MODE: 'required' } });
    alice = await t.bearer('alice');
    bob = await t.bearer('bob');
  });
  afterAll(async () => {
    await t.close();
  });

  async function send(
    bearer: string,
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
    headers: Record<string, string> = {},
  ) {
    return t.inject({ method, url, payload, headers: { authorization: bearer, ...headers } });
  }

  /** The owner's events after `afterSeq`, as stored. */
  async function eventsOf(owner: string, afterSeq = 0) {
    const rows = await t.database.db
      .selectFrom('todo_events')
      .selectAll()
      .where('owner_id', '=', owner)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .execute();
    return rows.map((row) => ({ ...row, data: JSON.parse(row.data) as TodoEventData }));
  }

  async function lastSeq(owner: string) {
    return (await eventsOf(owner)).at(-1)?.seq ?? 0;
  }

  /** The types of the events `write` added for alice. */
  async function typesAfter(write: () => Promise<unknown>): Promise<string[]> {
    const before = await lastSeq('alice');
    await write();
    return (await eventsOf('alice', before)).map((event) => event.type);
  }

  it('writes one event per logical change, numbered 1, 2, 3… per owner', async () => {
    let todo: Todo | undefined;
    expect(
      await typesAfter(async () => {
        todo = (await send(alice, 'POST', '/api/todos', { title: 'Plan trip' })).json<Todo>();
      }),
    ).toEqual(['todo.created']);
    const url = `/api/todos/${todo?.id ?? ''}`;

    expect(await typesAfter(() => send(alice, 'PATCH', url, { title: 'Plan the trip' }))).toEqual([
      'todo.updated',
    ]);
    expect(await typesAfter(() => send(alice, 'POST', `${url}/start`))).toEqual([
      'todo.status_changed',
    ]);
    expect(await typesAfter(() => send(alice, 'POST', `${url}/complete`))).toEqual([
      'todo.status_changed',
      'todo.completed',
    ]);
    expect(await typesAfter(() => send(alice, 'PATCH', url, { completed: false }))).toEqual([
      'todo.status_changed',
      'todo.reopened',
    ]);
    expect(await typesAfter(() => send(alice, 'DELETE', url))).toEqual(['todo.deleted']);
    expect(await typesAfter(() => send(alice, 'POST', `${url}/restore`))).toEqual([
      'todo.restored',
    ]);

    const all = await eventsOf('alice');
    expect(all.map((event) => event.seq)).toEqual(all.map((_, i) => i + 1));
    expect(new Set(all.map((event) => event.id)).size).toBe(all.length);
    expect(all.every((event) => /^evt_[0-9a-f-]{36}$/.test(event.id))).toBe(true);
  });

  it('carries the todo after the change, and what changed', async () => {
    const created = (await send(alice, 'POST', '/api/todos', { title: 'Read' })).json<Todo>();
    const before = await lastSeq('alice');
    await send(alice, 'PATCH', `/api/todos/${created.id}`, { priority: 'high', labels: ['a'] });
    const [updated] = await eventsOf('alice', before);
    expect(updated?.todo_id).toBe(created.id);
    expect(updated?.data.changed).toEqual(['priority', 'labels']);
    expect(updated?.data.todo).toMatchObject({ id: created.id, priority: 'high', version: 2 });
    expect(updated?.data.todo).not.toHaveProperty('url');
  });

  it('writes nothing for a change that changes nothing, or fails', async () => {
    const todo = (await send(alice, 'POST', '/api/todos', { title: 'Same' })).json<Todo>();
    const url = `/api/todos/${todo.id}`;
    expect(await typesAfter(() => send(alice, 'PATCH', url, { title: 'Same' }))).toEqual([]);
    expect(
      await typesAfter(() => send(alice, 'PATCH', url, { title: 'x' }, { 'if-match': '"9"' })),
    ).toEqual([]);
    expect(await typesAfter(() => send(alice, 'POST', `${url}/reopen`))).toEqual([]);
    expect(await typesAfter(() => send(alice, 'PATCH', url, { title: '' }))).toEqual([]);
  });

  it('writes one todo.deleted per todo of a bulk delete', async () => {
    for (const title of ['bulk 1', 'bulk 2', 'bulk 3']) {
      await send(bob, 'POST', '/api/todos', { title, labels: ['bulk'] });
    }
    const before = await lastSeq('bob');
    await send(bob, 'DELETE', '/api/todos?labels=bulk');
    const deleted = await eventsOf('bob', before);
    expect(deleted.map((event) => event.type)).toEqual(Array(3).fill('todo.deleted'));
    expect(deleted.map((event) => event.data.todo.title).sort()).toEqual([
      'bulk 1',
      'bulk 2',
      'bulk 3',
    ]);
  });

  it('numbers each owner on its own', async () => {
    const bobEvents = await eventsOf('bob');
    expect(bobEvents.map((event) => event.seq)).toEqual(bobEvents.map((_, i) => i + 1));
  });

  it('numbers concurrent writers without gaps or repeats', async () => {
    const before = await lastSeq('alice');
    const responses = await Promise.all(
      Array.from({ length: 24 }, (_, i) => send(alice, 'POST', '/api/todos', { title: `c${i}` })),
    );
    expect(responses.every((response) => response.statusCode === 201)).toBe(true);
    const added = await eventsOf('alice', before);
    expect(added.map((event) => event.seq)).toEqual(added.map((_, i) => before + i + 1));
    expect(added).toHaveLength(24);
  });
});

describe('the outbox and its change', () => {
  it('commit together or not at all: a failing event write undoes the change', async () => {
    const t = await buildTestApp();
    try {
      const todo = (
        await t.inject({ method: 'POST', url: '/api/todos', payload: { title: 'Kept' } })
      ).json<Todo>();
      // A real failure inside the database, for `todo.updated` rows only.
      if (t.database.dialect === 'postgres') {
        await sql`
          create function refuse_updated() returns trigger language plpgsql as $$
          begin
            if new.type = 'todo.updated' then raise exception 'injected failure'; end if;
            return new;
          end $$
        `.execute(t.database.db);
        await sql`
          create trigger refuse_updated before insert on todo_events
          for each row execute function refuse_updated()
        `.execute(t.database.db);
      } else {
        await sql`
          create trigger refuse_updated before insert on todo_events
          when new.type = 'todo.updated' begin select raise(abort, 'injected failure'); end
        `.execute(t.database.db);
      }
      const failed = await t.inject({
        method: 'PATCH',
        url: `/api/todos/${todo.id}`,
        payload: { title: 'Lost' },
      });
      expect(failed.statusCode).toBe(500);
      const now = (await t.inject({ method: 'GET', url: `/api/todos/${todo.id}` })).json<Todo>();
      expect(now).toMatchObject({ title: 'Kept', version: 1 });
      // Other changes still write their events.
      const completed = await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/complete` });
      expect(completed.statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});
