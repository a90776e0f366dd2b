import type { InjectOptions } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ANONYMOUS_OWNER_ID } from '../src/auth/owner.js';
import {
  idempotencyRepository,
  type IdempotencyScope,
} from '../src/idempotency/idempotency.repository.js';
import type { Todo } from '../src/todos/todo.schemas.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

const HOUR_MS = 3_600_000;

let t: TestApp;
let clock: Date;
beforeEach(async () => {
  clock = new Date('2030-03-01T12:00:00.000Z');
  t = await buildTestApp({ now: () => clock });
});
afterEach(async () => {
  await t.close();
});

function advance(ms: number): void {
  clock = new Date(clock.getTime() + ms);
}

function createRequest(key: string, payload: Record<string, unknown>): InjectOptions {
  return {
    method: 'POST',
    url: '/api/todos',
    headers: { 'idempotency-key': key },
    payload,
  };
}

async function create(title = 'Idempotency probe'): Promise<Todo> {
  const response = await t.inject({ method: 'POST', url: '/api/todos', payload: { title } });
  expect(response.statusCode).toBe(201);
  return response.json<Todo>();
}

async function listTodos(): Promise<Todo[]> {
  const response = await t.inject({ method: 'GET', url: '/api/todos' });
  expect(response.statusCode).toBe(200);
  return response.json<Todo[]>();
}

async function getTodo(id: string): Promise<Todo> {
  const response = await t.inject({ method: 'GET', url: `/api/todos/${id}` });
  expect(response.statusCode).toBe(200);
  return response.json<Todo>();
}

function keyRows(key: string) {
  return t.database.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).execute();
}

function createScope(key: string): IdempotencyScope {
  return { ownerId: ANONYMOUS_OWNER_ID, method: 'POST', path: '/api/todos', key };
}

/** The fingerprint the service stores for `payload`, learned from a real request. */
async function fingerprintOf(payload: Record<string, unknown>): Promise<string> {
  const probeKey = `fingerprint-probe-${String(Math.random()).slice(2)}`;
  const response = await t.inject(createRequest(probeKey, payload));
  expect(response.statusCode).toBe(201);
  const [row] = await keyRows(probeKey);
  expect(row).toBeDefined();
  return row?.fingerprint ?? '';
}

/** Stores a claim as a first attempt still running (or abandoned) would leave it. */
async function claim(scope: IdempotencyScope, fingerprint: string, lockedUntil: Date) {
  await t.database.writeTransaction((trx) =>
    idempotencyRepository.claimNew(trx, scope, {
      fingerprint,
      lockedUntil: lockedUntil.toISOString(),
      createdAt: clock.toISOString(),
      expiresAt: new Date(clock.getTime() + 24 * HOUR_MS).toISOString(),
    }),
  );
}

describe('POST /api/todos with Idempotency-Key', () => {
  it('replays the stored 201 with the same body, Location and ETag, and creates one todo', async () => {
    const payload = { title: 'Buy milk', priority: 'high' };
    const first = await t.inject(createRequest('create-1', payload));
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();

    advance(1000);
    const replay = await t.inject(createRequest('create-1', payload));
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(replay.headers.location).toBe(first.headers.location);
    expect(replay.headers.location).toBe(first.json<Todo>().url);
    expect(replay.headers.etag).toBe(first.headers.etag);
    expect(replay.headers.etag).toBe('"1"');

    const todos = await listTodos();
    expect(todos).toHaveLength(1);
    expect(todos[0]?.id).toBe(first.json<Todo>().id);
  });

  it('stores one completed record per key', async () => {
    const first = await t.inject(createRequest('create-2', { title: 'Once' }));
    expect(first.statusCode).toBe(201);
    await t.inject(createRequest('create-2', { title: 'Once' }));
    const rows = await keyRows('create-2');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      owner_id: ANONYMOUS_OWNER_ID,
      method: 'POST',
      path: '/api/todos',
      status_code: 201,
      locked_until: null,
    });
  });

  it('matches bodies by content, not by member order or spacing', async () => {
    const first = await t.inject({
      ...createRequest('create-3', {}),
      payload: '{"title":"Ordered","priority":"low"}',
      headers: { 'idempotency-key': 'create-3', 'content-type': 'application/json' },
    });
    expect(first.statusCode).toBe(201);
    const replay = await t.inject({
      ...createRequest('create-3', {}),
      payload: '{ "priority": "low", "title": "Ordered" }',
      headers: { 'idempotency-key': 'create-3', 'content-type': 'application/json' },
    });
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await listTodos()).toHaveLength(1);
  });

  it('returns 422 idempotency-key-reused for the same key with a different body', async () => {
    expect((await t.inject(createRequest('create-4', { title: 'A' }))).statusCode).toBe(201);
    const reused = await t.inject(createRequest('create-4', { title: 'B' }));
    expect(reused.statusCode).toBe(422);
    expect(reused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(reused.json()).toMatchObject({
      type: '/problems/idempotency-key-reused',
      code: 'idempotency-key-reused',
      status: 422,
    });
    const todos = await listTodos();
    expect(todos.map((todo) => todo.title)).toEqual(['A']);
  });

  it('runs every request that carries no key', async () => {
    await t.inject({ method: 'POST', url: '/api/todos', payload: { title: 'Same' } });
    await t.inject({ method: 'POST', url: '/api/todos', payload: { title: 'Same' } });
    expect(await listTodos()).toHaveLength(2);
    const rows = await t.database.db.selectFrom('idempotency_keys').selectAll().execute();
    expect(rows).toEqual([]);
  });

  it('treats different keys as different requests', async () => {
    await t.inject(createRequest('key-a', { title: 'Same' }));
    const other = await t.inject(createRequest('key-b', { title: 'Same' }));
    expect(other.statusCode).toBe(201);
    expect(other.headers['idempotent-replayed']).toBeUndefined();
    expect(await listTodos()).toHaveLength(2);
  });
});

describe('PATCH /api/todos/{id} with Idempotency-Key', () => {
  it('replays the stored response without applying the patch again', async () => {
    const todo = await create();
    const request: InjectOptions = {
      method: 'PATCH',
      url: `/api/todos/${todo.id}`,
      headers: { 'idempotency-key': 'patch-1' },
      payload: { title: 'Patched' },
    };
    const first = await t.inject(request);
    expect(first.statusCode).toBe(200);
    expect(first.json<Todo>().version).toBe(2);

    // Someone else changes the todo; a replay must not undo or repeat anything.
    const other = await t.inject({
      method: 'PATCH',
      url: `/api/todos/${todo.id}`,
      payload: { title: 'Changed by someone else' },
    });
    expect(other.json<Todo>().version).toBe(3);

    const replay = await t.inject(request);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(replay.headers.etag).toBe('"2"');

    const current = await getTodo(todo.id);
    expect(current.title).toBe('Changed by someone else');
    expect(current.version).toBe(3);
  });

  it('returns 422 idempotency-key-reused for the same key with a different patch', async () => {
    const todo = await create();
    const patch = (payload: Record<string, unknown>) =>
      t.inject({
        method: 'PATCH',
        url: `/api/todos/${todo.id}`,
        headers: { 'idempotency-key': 'patch-2' },
        payload,
      });
    expect((await patch({ priority: 'low' })).statusCode).toBe(200);
    const reused = await patch({ priority: 'urgent' });
    expect(reused.statusCode).toBe(422);
    expect(reused.json()).toMatchObject({ code: 'idempotency-key-reused' });
    expect((await getTodo(todo.id)).priority).toBe('low');
  });

  it('keeps keys of different todos apart (the path is part of the scope)', async () => {
    const a = await create('A');
    const b = await create('B');
    for (const todo of [a, b]) {
      const response = await t.inject({
        method: 'PATCH',
        url: `/api/todos/${todo.id}`,
        headers: { 'idempotency-key': 'shared' },
        payload: { priority: 'high' },
      });
      expect(response.statusCode).toBe(200);
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      expect(response.json<Todo>().id).toBe(todo.id);
    }
    expect((await getTodo(a.id)).priority).toBe('high');
    expect((await getTodo(b.id)).priority).toBe('high');
  });
});

describe('POST /api/todos/{id}/{action} with Idempotency-Key', () => {
  it('replays the stored response without running the action again', async () => {
    const todo = await create();
    const start: InjectOptions = {
      method: 'POST',
      url: `/api/todos/${todo.id}/start`,
      headers: { 'idempotency-key': 'action-1' },
    };
    const first = await t.inject(start);
    expect(first.statusCode).toBe(200);
    expect(first.json<Todo>()).toMatchObject({ status: 'in_progress', version: 2 });

    const blocked = await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/block` });
    expect(blocked.json<Todo>()).toMatchObject({ status: 'blocked', version: 3 });

    const replay = await t.inject(start);
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(first.json());
    expect(replay.headers.etag).toBe('"2"');
    expect(await getTodo(todo.id)).toMatchObject({ status: 'blocked', version: 3 });
  });

  it('replays a retry sent with `{}` after a first attempt with no body (both are no input)', async () => {
    const todo = await create();
    const url = `/api/todos/${todo.id}/complete`;
    const headers = { 'idempotency-key': 'action-empty' };
    const first = await t.inject({ method: 'POST', url, headers });
    expect(first.statusCode).toBe(200);
    const retry = await t.inject({ method: 'POST', url, headers, payload: {} });
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.json()).toEqual(first.json());
  });

  it('does not store a refused transition, so the same key runs again once it is allowed', async () => {
    const todo = await create();
    await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/cancel` });
    const start: InjectOptions = {
      method: 'POST',
      url: `/api/todos/${todo.id}/start`,
      headers: { 'idempotency-key': 'action-2' },
    };
    expect((await t.inject(start)).statusCode).toBe(409);
    expect(await keyRows('action-2')).toEqual([]);
    await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/reopen` });
    const retry = await t.inject(start);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.json<Todo>().status).toBe('in_progress');
  });
});

describe('Idempotency-Key scope', () => {
  it('keeps the same key on different paths independent', async () => {
    const created = await t.inject(createRequest('everywhere', { title: 'Scoped' }));
    expect(created.statusCode).toBe(201);
    const todo = created.json<Todo>();

    const patched = await t.inject({
      method: 'PATCH',
      url: `/api/todos/${todo.id}`,
      headers: { 'idempotency-key': 'everywhere' },
      payload: { title: 'Other body' },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.headers['idempotent-replayed']).toBeUndefined();

    const started = await t.inject({
      method: 'POST',
      url: `/api/todos/${todo.id}/start`,
      headers: { 'idempotency-key': 'everywhere' },
    });
    expect(started.statusCode).toBe(200);
    expect(started.headers['idempotent-replayed']).toBeUndefined();
    expect(await getTodo(todo.id)).toMatchObject({ title: 'Other body', status: 'in_progress' });
    expect(await keyRows('everywhere')).toHaveLength(3);
  });

  it('keeps the same key under a different method independent', async () => {
    // A stored response for PATCH /api/todos with this key and another body...
    await claim({ ...createScope('by-method'), method: 'PATCH' }, 'another-fingerprint', clock);
    await t.database.writeTransaction((trx) =>
      idempotencyRepository.complete(
        trx,
        { ...createScope('by-method'), method: 'PATCH' },
        { statusCode: 200, headers: '{}', body: '{}' },
      ),
    );
    // ...neither replays nor conflicts with POST /api/todos.
    const response = await t.inject(createRequest('by-method', { title: 'By method' }));
    expect(response.statusCode).toBe(201);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    expect(await listTodos()).toHaveLength(1);
  });
});

describe('Idempotency-Key syntax', () => {
  it('treats the structured-field string "abc" as the bare token abc', async () => {
    const first = await t.inject(createRequest('abc', { title: 'Quoted' }));
    expect(first.statusCode).toBe(201);
    const quoted = await t.inject(createRequest('"abc"', { title: 'Quoted' }));
    expect(quoted.statusCode).toBe(201);
    expect(quoted.headers['idempotent-replayed']).toBe('true');
    expect(quoted.json()).toEqual(first.json());
    expect(await listTodos()).toHaveLength(1);
    expect((await keyRows('abc')).length).toBe(1);
  });

  it('treats the bare token abc as the structured-field string "abc"', async () => {
    expect((await t.inject(createRequest('"abc"', { title: 'Bare' }))).statusCode).toBe(201);
    const bare = await t.inject(createRequest('abc', { title: 'Bare' }));
    expect(bare.headers['idempotent-replayed']).toBe('true');
    expect(await listTodos()).toHaveLength(1);
  });

  it.each([
    ['a 255-character key', 'k'.repeat(255)],
    ['a quoted 255-character key', `"${'k'.repeat(255)}"`],
    ['a UUID', '0b7c1c2e-8a8f-4f55-9a52-6c1f7d3e9a10'],
    ['visible punctuation', "!#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"],
  ])('accepts %s', async (_label, key) => {
    const response = await t.inject(createRequest(key, { title: 'Valid key' }));
    expect(response.statusCode).toBe(201);
    expect(await listTodos()).toHaveLength(1);
  });

  it.each([
    ['an empty key', ''],
    ['an empty quoted key', '""'],
    ['a 256-character key', 'k'.repeat(256)],
    ['a quoted 256-character key', `"${'k'.repeat(256)}"`],
    ['a space', 'has space'],
    ['a tab', 'has\ttab'],
    ['a non-ASCII character', 'clé'],
    ['a quote inside a quoted key', '"a"b"'],
  ])('rejects %s with 400 invalid-idempotency-key', async (_label, key) => {
    const response = await t.inject(createRequest(key, { title: 'Invalid key' }));
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      type: '/problems/invalid-idempotency-key',
      code: 'invalid-idempotency-key',
      status: 400,
    });
    expect(await listTodos()).toEqual([]);
  });

  it('rejects an invalid key on PATCH and on actions as well', async () => {
    const todo = await create();
    const patch = await t.inject({
      method: 'PATCH',
      url: `/api/todos/${todo.id}`,
      headers: { 'idempotency-key': 'has space' },
      payload: { title: 'Nope' },
    });
    expect(patch.statusCode).toBe(400);
    expect(patch.json()).toMatchObject({ code: 'invalid-idempotency-key' });
    const action = await t.inject({
      method: 'POST',
      url: `/api/todos/${todo.id}/start`,
      headers: { 'idempotency-key': 'k'.repeat(256) },
    });
    expect(action.statusCode).toBe(400);
    expect(action.json()).toMatchObject({ code: 'invalid-idempotency-key' });
    expect(await getTodo(todo.id)).toEqual(todo);
  });
});

describe('a key whose first request is still running', () => {
  it('answers 409 idempotency-in-flight with Retry-After and runs nothing', async () => {
    const payload = { title: 'In flight' };
    const fingerprint = await fingerprintOf(payload);
    await claim(createScope('in-flight'), fingerprint, new Date(clock.getTime() + 30_000));

    const response = await t.inject(createRequest('in-flight', payload));
    expect(response.statusCode).toBe(409);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.json()).toMatchObject({
      type: '/problems/idempotency-in-flight',
      code: 'idempotency-in-flight',
      status: 409,
    });
    // Only the fingerprint probe's todo exists; the claim is left to its owner.
    expect(await listTodos()).toHaveLength(1);
    expect(await keyRows('in-flight')).toEqual([
      expect.objectContaining({ status_code: null, fingerprint }),
    ]);
  });

  it('answers 422 idempotency-key-reused when the running request has another body', async () => {
    await claim(createScope('in-flight-2'), 'another-fingerprint', new Date(clock.getTime() + 1));
    const response = await t.inject(createRequest('in-flight-2', { title: 'Other' }));
    expect(response.statusCode).toBe(422);
    expect(response.json()).toMatchObject({ code: 'idempotency-key-reused' });
  });

  it('takes over a claim whose lease has run out', async () => {
    const payload = { title: 'Abandoned' };
    const fingerprint = await fingerprintOf(payload);
    await claim(createScope('abandoned'), fingerprint, new Date(clock.getTime() - 1));

    const response = await t.inject(createRequest('abandoned', payload));
    expect(response.statusCode).toBe(201);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    expect(response.json<Todo>().title).toBe('Abandoned');
    expect(await keyRows('abandoned')).toEqual([
      expect.objectContaining({ status_code: 201, locked_until: null }),
    ]);

    const replay = await t.inject(createRequest('abandoned', payload));
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(response.json());
    expect(await listTodos()).toHaveLength(2);
  });

  it('lets the in-flight claim run out after its lease', async () => {
    const payload = { title: 'Lease' };
    const fingerprint = await fingerprintOf(payload);
    await claim(createScope('lease'), fingerprint, new Date(clock.getTime() + 30_000));
    expect((await t.inject(createRequest('lease', payload))).statusCode).toBe(409);
    advance(30_000);
    const response = await t.inject(createRequest('lease', payload));
    expect(response.statusCode).toBe(201);
  });
});

describe('Idempotency-Key retention', () => {
  it('replays a key just under 24 hours old', async () => {
    const payload = { title: 'Retained' };
    expect((await t.inject(createRequest('ttl-1', payload))).statusCode).toBe(201);
    advance(24 * HOUR_MS - 1);
    const replay = await t.inject(createRequest('ttl-1', payload));
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(await listTodos()).toHaveLength(1);
  });

  it('forgets a key after 24 hours and runs the request again', async () => {
    const payload = { title: 'Expired' };
    const first = await t.inject(createRequest('ttl-2', payload));
    expect(first.statusCode).toBe(201);
    advance(24 * HOUR_MS);
    const again = await t.inject(createRequest('ttl-2', payload));
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.json<Todo>().id).not.toBe(first.json<Todo>().id);
    expect(await listTodos()).toHaveLength(2);
  });

  it('accepts an expired key with a different body', async () => {
    expect((await t.inject(createRequest('ttl-3', { title: 'Old' }))).statusCode).toBe(201);
    advance(25 * HOUR_MS);
    const response = await t.inject(createRequest('ttl-3', { title: 'New' }));
    expect(response.statusCode).toBe(201);
    expect(response.json<Todo>().title).toBe('New');
  });

  it('follows IDEMPOTENCY_TTL_HOURS', async () => {
    await t.close();
    t = await buildTestApp({ env: { IDEMPOTENCY_TTL_HOURS: '1' }, now: () => clock });
    const payload = { title: 'Short-lived' };
    expect((await t.inject(createRequest('ttl-4', payload))).statusCode).toBe(201);
    advance(HOUR_MS - 1);
    expect((await t.inject(createRequest('ttl-4', payload))).headers['idempotent-replayed']).toBe(
      'true',
    );
    advance(1);
    const again = await t.inject(createRequest('ttl-4', payload));
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await listTodos()).toHaveLength(2);
  });
});

describe('a keyed request that fails', () => {
  it('does not store the key, so a corrected body with the same key succeeds', async () => {
    const failed = await t.inject(
      createRequest('fix-me', { title: 'Contradiction', status: 'open', completed: true }),
    );
    expect(failed.statusCode).toBe(422);
    expect(failed.json()).toMatchObject({ code: 'validation-error' });
    expect(await keyRows('fix-me')).toEqual([]);

    const corrected = await t.inject(createRequest('fix-me', { title: 'Contradiction' }));
    expect(corrected.statusCode).toBe(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    expect(await listTodos()).toHaveLength(1);
  });

  it('does not store a body rejected by the schema either', async () => {
    const failed = await t.inject(createRequest('schema', { title: '' }));
    expect(failed.statusCode).toBe(422);
    expect(await keyRows('schema')).toEqual([]);
    const corrected = await t.inject(createRequest('schema', { title: 'Fixed' }));
    expect(corrected.statusCode).toBe(201);
  });

  it('does not store a 412, so the same key and body succeed once the precondition holds', async () => {
    const todo = await create();
    const request = (ifMatch: string): InjectOptions => ({
      method: 'PATCH',
      url: `/api/todos/${todo.id}`,
      headers: { 'idempotency-key': 'precondition', 'if-match': ifMatch },
      payload: { title: 'Conditional' },
    });
    expect((await t.inject(request('"9"'))).statusCode).toBe(412);
    expect(await keyRows('precondition')).toEqual([]);
    const retry = await t.inject(request('"1"'));
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(retry.json<Todo>()).toMatchObject({ title: 'Conditional', version: 2 });
  });
});
