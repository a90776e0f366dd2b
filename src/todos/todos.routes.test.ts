import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem } from '../../test/helpers/problem-assertions.js';
import type { Problem } from '../http/problem.js';
import { buildTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { TODO_STATUSES, type Todo } from './todo.schemas.js';

const BASE = 'http://todo.test';
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const RFC3339_UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A clock that moves one second forward on every read, so timestamps are distinct and known. */
function tickingClock(start = '2026-01-01T00:00:00.000Z'): () => Date {
  let time = Date.parse(start);
  return () => {
    const date = new Date(time);
    time += 1000;
    return date;
  };
}

/** The todo's path, relative to the server. */
function pathOf(todo: Todo): string {
  return `/api/todos/${todo.id}`;
}

/** `rel="next"` target of a Link header, made relative for `inject`. */
function nextPath(response: LightMyRequestResponse): string | undefined {
  const link = response.headers.link;
  if (link === undefined) return undefined;
  const match = /^<([^>]+)>; rel="next"$/.exec(String(link));
  expect(match, `unexpected Link header: ${String(link)}`).not.toBeNull();
  const url = new URL(match?.[1] ?? '');
  expect(url.origin).toBe(BASE);
  return `${url.pathname}${url.search}`;
}

describe('the todo resource', () => {
  let t: TestApp;

  async function post(payload: unknown): Promise<LightMyRequestResponse> {
    return t.inject({ method: 'POST', url: '/api/todos', payload: payload as object });
  }

  async function create(payload: Record<string, unknown> = { title: 'Buy milk' }): Promise<Todo> {
    const response = await post(payload);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<Todo>();
  }

  async function list(query = ''): Promise<Todo[]> {
    const response = await t.inject({ method: 'GET', url: `/api/todos${query}` });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Todo[]>();
  }

  beforeEach(async () => {
    t = await buildTestApp({ now: tickingClock() });
  });
  afterEach(async () => {
    await t.close();
  });

  describe('POST /api/todos', () => {
    it('returns 201 with Location, ETag and every default', async () => {
      const response = await post({ title: 'Buy milk' });
      expect(response.statusCode).toBe(201);
      const todo = response.json<Todo>();
      expect(todo.id).toMatch(UUID_V7);
      expect(todo.url).toBe(`${BASE}/api/todos/${todo.id}`);
      expect(response.headers.location).toBe(todo.url);
      expect(response.headers.etag).toBe('"1"');
      expect(todo).toEqual({
        id: todo.id,
        url: todo.url,
        title: 'Buy milk',
        description: null,
        status: 'open',
        completed: false,
        completed_at: null,
        priority: 'none',
        order: 1024,
        labels: [],
        due_date: null,
        due_at: null,
        metadata: {},
        version: 1,
        created_at: '2026-01-01T00:00:00.000Z',
        updated_at: '2026-01-01T00:00:00.000Z',
        deleted_at: null,
      });
      expect(todo.created_at).toMatch(RFC3339_UTC_MS);
      expect(todo.updated_at).toMatch(RFC3339_UTC_MS);
    });

    it('gives each new todo the previous maximum order + 1024', async () => {
      expect((await create({ title: 'a' })).order).toBe(1024);
      expect((await create({ title: 'b' })).order).toBe(2048);
      await create({ title: 'c', order: 5000 });
      await create({ title: 'd', order: -3 });
      expect((await create({ title: 'e' })).order).toBe(6024);
    });

    it('caps the default order at 2^53 so that the todo can be sent back', async () => {
      await create({ title: 'a', order: 2 ** 53 - 100 });
      const capped = await create({ title: 'b' });
      expect(capped.order).toBe(2 ** 53);
      const again = await create({ title: 'c' });
      expect(again.order).toBe(2 ** 53);
      expect((await list()).map((todo) => todo.title)).toEqual(['a', 'b', 'c']);
      const response = await t.inject({ method: 'PUT', url: pathOf(again), payload: again });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<Todo>()).toEqual(again);
    });

    it('counts from a negative maximum too', async () => {
      await create({ title: 'a', order: -1.5 });
      expect((await create({ title: 'b' })).order).toBe(1022.5);
    });

    it('sets completed_at when created completed', async () => {
      const todo = await create({ title: 'done', completed: true });
      expect(todo.status).toBe('completed');
      expect(todo.completed).toBe(true);
      expect(todo.completed_at).toBe(todo.created_at);
    });

    it('trims and NFC-normalises the title', async () => {
      const todo = await create({ title: '  cafe\u0301  ' });
      expect(todo.title).toBe('caf\u00e9');
    });

    it('keeps line breaks and tabs in the description', async () => {
      const description = 'line one\n\tline two\r\nend';
      expect((await create({ title: 'x', description })).description).toBe(description);
    });

    it('trims, normalises and de-duplicates labels case-insensitively, keeping the first', async () => {
      const todo = await create({
        title: 'x',
        labels: [' work ', 'Work', 'cafe\u0301', 'CAF\u00c9', 'home', 'WORK '],
      });
      expect(todo.labels).toEqual(['work', 'caf\u00e9', 'home']);
    });

    it('stores due_at with an offset as UTC with milliseconds', async () => {
      const todo = await create({ title: 'x', due_at: '2026-03-01T10:00:00+02:00' });
      expect(todo.due_at).toBe('2026-03-01T08:00:00.000Z');
      expect(todo.due_date).toBeNull();
    });

    it.each(['0000-01-01T00:00:00+01:00', '9999-12-31T23:00:00-02:00'])(
      'returns 422 when due_at %s falls outside the years 0000–9999 in UTC',
      async (dueAt) => {
        const response = await post({ title: 'x', due_at: dueAt });
        expectProblem(response, 422, 'validation-error', { pointer: '/due_at' });
        expect(await list()).toEqual([]);
      },
    );

    it('accepts due_at at the edges of the four-digit years', async () => {
      const early = await create({ title: 'x', due_at: '0000-01-01T01:00:00+01:00' });
      expect(early.due_at).toBe('0000-01-01T00:00:00.000Z');
      const late = await create({ title: 'y', due_at: '9999-12-31T23:59:59.999Z' });
      expect(late.due_at).toBe('9999-12-31T23:59:59.999Z');
      expect(await list()).toHaveLength(2);
    });

    it('accepts a real calendar due_date, including 29 February of a leap year', async () => {
      expect((await create({ title: 'x', due_date: '2028-02-29' })).due_date).toBe('2028-02-29');
    });

    it.each([523, -1.5, 0.1, 2 ** 53, -(2 ** 53), 1e-300])(
      'returns order %s exactly as sent',
      async (order) => {
        const todo = await create({ title: 'x', order });
        expect(todo.order).toBe(order);
        const again = await t.inject({ method: 'GET', url: pathOf(todo) });
        expect(again.json<Todo>().order).toBe(order);
      },
    );

    it('accepts 500-character titles, 20 labels, 64-character labels and 50 metadata keys', async () => {
      const metadata = Object.fromEntries(
        Array.from({ length: 50 }, (_, i) => [`k${i}`.padEnd(40, '_'), 'v'.repeat(500)]),
      );
      const labels = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(64, 'x'));
      const todo = await create({ title: 't'.repeat(500), labels, metadata });
      expect(todo.title).toHaveLength(500);
      expect(todo.labels).toEqual(labels);
      expect(todo.metadata).toEqual(metadata);
    });

    it('stores metadata as sent', async () => {
      const metadata = { 'a.b-c_D9': 'value', empty: '' };
      expect((await create({ title: 'x', metadata })).metadata).toEqual(metadata);
    });

    const invalid: [string, Record<string, unknown>, string][] = [
      ['the title is missing', {}, '/title'],
      ['the title is empty', { title: '' }, '/title'],
      ['the title is only whitespace', { title: ' \t\u00a0 ' }, '/title'],
      ['the title has 501 characters', { title: 'x'.repeat(501) }, '/title'],
      ['the title contains U+0000', { title: 'a\u0000b' }, '/title'],
      ['the title contains a line feed', { title: 'a\nb' }, '/title'],
      ['the title contains DEL (U+007F)', { title: 'a\u007fb' }, '/title'],
      ['the title contains NEL (U+0085)', { title: 'a\u0085b' }, '/title'],
      ['the title contains a lone surrogate', { title: 'a\ud800b' }, '/title'],
      ['the title is not a string', { title: 5 }, '/title'],
      [
        'the description has 10,001 characters',
        { title: 'x', description: 'd'.repeat(10_001) },
        '/description',
      ],
      ['the description contains U+0000', { title: 'x', description: 'a\u0000' }, '/description'],
      [
        'there are 21 labels',
        { title: 'x', labels: Array.from({ length: 21 }, (_, i) => `l${i}`) },
        '/labels',
      ],
      ['a label has 65 characters', { title: 'x', labels: ['ok', 'l'.repeat(65)] }, '/labels/1'],
      ['a label is empty', { title: 'x', labels: [''] }, '/labels/0'],
      ['a label is only whitespace', { title: 'x', labels: ['ok', '   '] }, '/labels/1'],
      ['a label contains a control character', { title: 'x', labels: ['a\tb'] }, '/labels/0'],
      ['labels is not an array', { title: 'x', labels: 'work' }, '/labels'],
      ['due_date is not a calendar date', { title: 'x', due_date: '2026-02-30' }, '/due_date'],
      [
        'due_date is 29 February of a common year',
        { title: 'x', due_date: '2027-02-29' },
        '/due_date',
      ],
      ['due_date has a time', { title: 'x', due_date: '2026-03-01T10:00:00Z' }, '/due_date'],
      ['due_at has no offset', { title: 'x', due_at: '2026-03-01T10:00:00' }, '/due_at'],
      ['due_at is only a date', { title: 'x', due_at: '2026-03-01' }, '/due_at'],
      [
        'both due_date and due_at are set',
        { title: 'x', due_date: '2026-03-01', due_at: '2026-03-01T10:00:00Z' },
        '/due_at',
      ],
      [
        'a metadata key has 41 characters',
        { title: 'x', metadata: { ['k'.repeat(41)]: 'v' } },
        '/metadata',
      ],
      ['a metadata key has a space', { title: 'x', metadata: { 'a b': 'v' } }, '/metadata'],
      ['a metadata key is empty', { title: 'x', metadata: { '': 'v' } }, '/metadata'],
      [
        'metadata has 51 keys',
        {
          title: 'x',
          metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])),
        },
        '/metadata',
      ],
      [
        'a metadata value has 501 characters',
        { title: 'x', metadata: { k: 'v'.repeat(501) } },
        '/metadata/k',
      ],
      ['a metadata value is a number', { title: 'x', metadata: { k: 5 } }, '/metadata/k'],
      ['a metadata value is null', { title: 'x', metadata: { k: null } }, '/metadata/k'],
      ['metadata is an array', { title: 'x', metadata: ['a'] }, '/metadata'],
      ['order is 2^53 + 2', { title: 'x', order: 2 ** 53 + 2 }, '/order'],
      ['order is -(2^53 + 2)', { title: 'x', order: -(2 ** 53 + 2) }, '/order'],
      ['order is a numeric string', { title: 'x', order: '5' }, '/order'],
      ['order is null', { title: 'x', order: null }, '/order'],
      ['completed is the string "true"', { title: 'x', completed: 'true' }, '/completed'],
      ['status is unknown', { title: 'x', status: 'done' }, '/status'],
      ['priority is unknown', { title: 'x', priority: 'critical' }, '/priority'],
      [
        'status and completed contradict each other',
        { title: 'x', status: 'open', completed: true },
        '/completed',
      ],
    ];

    it.each(invalid)('returns 422 when %s', async (_name, body, pointer) => {
      const response = await post(body);
      expectProblem(response, 422, 'validation-error', { pointer: pointer });
      expect(await list()).toEqual([]);
    });

    it('returns 422 when the body is not an object', async () => {
      for (const payload of ['[]', '"title"', '42', 'null']) {
        const response = await t.inject({
          method: 'POST',
          url: '/api/todos',
          headers: { 'content-type': 'application/json' },
          payload,
        });
        expectProblem(response, 422, 'validation-error');
      }
    });

    it('returns 400 malformed-json for a syntax error', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: { 'content-type': 'application/json' },
        payload: '{"title": "x",}',
      });
      expectProblem(response, 400, 'malformed-json');
    });

    it('returns 422 unknown-field naming an unknown field', async () => {
      const response = await post({ title: 'x', titel: 'typo' });
      const problem = expectProblem(response, 422, 'unknown-field', { pointer: '/titel' });
      expect(problem.errors).toEqual([
        { pointer: '/titel', code: 'unknown-field', detail: expect.any(String) as unknown },
      ]);
    });

    it.each([
      ['id', randomUUID()],
      ['url', `${BASE}/api/todos/${randomUUID()}`],
      ['version', 1],
      ['created_at', '2026-01-01T00:00:00.000Z'],
      ['updated_at', '2026-01-01T00:00:00.000Z'],
      ['completed_at', '2026-01-01T00:00:00.000Z'],
    ])('returns 422 read-only when the read-only field %s is sent', async (field, value) => {
      const response = await post({ title: 'x', [field]: value });
      const problem = expectProblem(response, 422, 'validation-error', { pointer: `/${field}` });
      expect(problem.errors?.find((error) => error.pointer === `/${field}`)?.code).toBe(
        'read-only',
      );
      expect(await list()).toEqual([]);
    });
  });

  describe('GET /api/todos/{id}', () => {
    it('returns the todo with its ETag', async () => {
      const created = await create({ title: 'x', labels: ['a'] });
      const response = await t.inject({ method: 'GET', url: pathOf(created) });
      expect(response.statusCode).toBe(200);
      expect(response.headers.etag).toBe('"1"');
      expect(response.json<Todo>()).toEqual(created);
    });

    it('returns 404 not-found for an unknown id', async () => {
      await create();
      const response = await t.inject({ method: 'GET', url: `/api/todos/${randomUUID()}` });
      expectProblem(response, 404, 'not-found');
    });

    it.each([
      ['abc', 'abc'],
      ['a percent-encoded path traversal', encodeURIComponent('../../etc/passwd')],
      ['a 200-character id', 'a'.repeat(200)],
      ['a UUID with a trailing character', `${randomUUID()}x`],
    ])('returns 404 not-found for %s', async (_name, id) => {
      const response = await t.inject({ method: 'GET', url: `/api/todos/${id}` });
      expectProblem(response, 404, 'not-found');
    });
  });

  describe('PUT /api/todos/{id}', () => {
    async function put(todo: Todo, body: unknown): Promise<LightMyRequestResponse> {
      return t.inject({ method: 'PUT', url: pathOf(todo), payload: body as object });
    }

    it('accepts a GET-modify-PUT round trip and bumps the version', async () => {
      const created = await create({ title: 'x', labels: ['a'], metadata: { k: 'v' } });
      const current = (await t.inject({ method: 'GET', url: pathOf(created) })).json<Todo>();
      const response = await put(created, { ...current, title: 'changed' });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers.etag).toBe('"2"');
      const updated = response.json<Todo>();
      expect(updated).toEqual({
        ...current,
        title: 'changed',
        version: 2,
        updated_at: expect.stringMatching(RFC3339_UTC_MS) as unknown,
      });
      expect(updated.updated_at > current.updated_at).toBe(true);
      const reread = await t.inject({ method: 'GET', url: pathOf(created) });
      expect(reread.json<Todo>()).toEqual(updated);
    });

    it('changes nothing when the GET body is sent back unchanged', async () => {
      const created = await create({
        title: 'x',
        description: 'd',
        labels: ['a', 'b'],
        priority: 'high',
        metadata: { k: 'v' },
        due_at: '2026-05-01T12:00:00.000Z',
      });
      const current = (await t.inject({ method: 'GET', url: pathOf(created) })).json<Todo>();
      const response = await put(created, current);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers.etag).toBe('"1"');
      expect(response.json<Todo>()).toEqual(created);
    });

    it('resets omitted optional fields to their defaults but keeps order', async () => {
      const created = await create({
        title: 'x',
        description: 'd',
        status: 'blocked',
        priority: 'urgent',
        order: 77.5,
        labels: ['a'],
        due_date: '2026-05-01',
        metadata: { k: 'v' },
      });
      const response = await put(created, { title: 'y' });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<Todo>()).toMatchObject({
        title: 'y',
        description: null,
        status: 'open',
        completed: false,
        priority: 'none',
        order: 77.5,
        labels: [],
        due_date: null,
        due_at: null,
        metadata: {},
        version: 2,
      });
    });

    it('sets order when sent', async () => {
      const created = await create();
      const response = await put(created, { title: 'x', order: -0.25 });
      expect(response.json<Todo>().order).toBe(-0.25);
    });

    it('normalises fields as POST does', async () => {
      const created = await create();
      const response = await put(created, {
        title: ' e\u0301 ',
        labels: ['A', 'a'],
        due_at: '2026-01-01T00:00:00-05:00',
      });
      expect(response.json<Todo>()).toMatchObject({
        title: '\u00e9',
        labels: ['A'],
        due_at: '2026-01-01T05:00:00.000Z',
      });
    });

    it.each([
      ['version', 99],
      ['id', randomUUID()],
      ['created_at', '2020-01-01T00:00:00.000Z'],
      ['updated_at', '2020-01-01T00:00:00.000Z'],
      ['url', `${BASE}/api/todos/${randomUUID()}`],
    ])('returns 422 read-only when %s is changed', async (field, value) => {
      const created = await create();
      const response = await put(created, { ...created, [field]: value });
      const problem = expectProblem(response, 422, 'validation-error', { pointer: `/${field}` });
      expect(problem.errors?.find((error) => error.pointer === `/${field}`)?.code).toBe(
        'read-only',
      );
      const reread = await t.inject({ method: 'GET', url: pathOf(created) });
      expect(reread.json<Todo>()).toEqual(created);
    });

    it('returns 422 when status and completed contradict each other', async () => {
      const created = await create();
      const response = await put(created, { ...created, status: 'in_progress', completed: true });
      expectProblem(response, 422, 'validation-error', { pointer: '/completed' });
    });

    it('completes with completed: true and reopens with completed: false', async () => {
      const created = await create();
      const done = (await put(created, { title: 'x', completed: true })).json<Todo>();
      expect(done).toMatchObject({ status: 'completed', completed: true, version: 2 });
      expect(done.completed_at).toMatch(RFC3339_UTC_MS);
      const reopened = (
        await put(created, { ...done, completed: false, status: 'open' })
      ).json<Todo>();
      expect(reopened).toMatchObject({ status: 'open', completed: false, completed_at: null });
    });

    it('returns 422 when the body misses the title', async () => {
      const created = await create();
      expectProblem(await put(created, { labels: [] }), 422, 'validation-error', {
        pointer: '/title',
      });
    });

    it('returns 422 unknown-field for an unknown field', async () => {
      const created = await create();
      expectProblem(await put(created, { ...created, colour: 'red' }), 422, 'unknown-field', {
        pointer: '/colour',
      });
    });

    it('returns 404 for an unknown id', async () => {
      const response = await t.inject({
        method: 'PUT',
        url: `/api/todos/${randomUUID()}`,
        payload: { title: 'x' },
      });
      expectProblem(response, 404, 'not-found');
    });
  });

  describe('PATCH /api/todos/{id}', () => {
    async function patch(
      todo: Todo,
      body: unknown,
      contentType = 'application/json',
    ): Promise<LightMyRequestResponse> {
      return t.inject({
        method: 'PATCH',
        url: pathOf(todo),
        headers: { 'content-type': contentType },
        payload: JSON.stringify(body),
      });
    }

    it('changes the title and nothing else', async () => {
      const created = await create({ title: 'x', labels: ['a'], priority: 'low' });
      const response = await patch(created, { title: 'new title' });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers.etag).toBe('"2"');
      expect(response.json<Todo>()).toEqual({
        ...created,
        title: 'new title',
        version: 2,
        updated_at: expect.stringMatching(RFC3339_UTC_MS) as unknown,
      });
    });

    it('resets priority, labels, description and due_date with null', async () => {
      const created = await create({
        title: 'x',
        priority: 'high',
        labels: ['a'],
        description: 'd',
        due_date: '2026-05-01',
      });
      const response = await patch(created, {
        priority: null,
        labels: null,
        description: null,
        due_date: null,
      });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<Todo>()).toMatchObject({
        title: 'x',
        priority: 'none',
        labels: [],
        description: null,
        due_date: null,
      });
    });

    it('resets due_at with null', async () => {
      const created = await create({ title: 'x', due_at: '2026-05-01T10:00:00Z' });
      const response = await patch(created, { due_at: null });
      expect(response.json<Todo>().due_at).toBeNull();
    });

    it('merges metadata key by key, and a null value removes a key', async () => {
      const created = await create({ title: 'x', metadata: { a: '1', b: '2' } });
      const merged = await patch(created, { metadata: { b: '3', c: '4' } });
      expect(merged.json<Todo>().metadata).toEqual({ a: '1', b: '3', c: '4' });
      const removed = await patch(created, { metadata: { a: null } });
      expect(removed.json<Todo>().metadata).toEqual({ b: '3', c: '4' });
      expect(removed.json<Todo>().version).toBe(3);
    });

    it('returns 422 when the merged metadata would exceed 50 keys', async () => {
      const metadata = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v']));
      const created = await create({ title: 'x', metadata });
      const response = await patch(created, { metadata: { one_more: 'v' } });
      expectProblem(response, 422, 'validation-error', { pointer: '/metadata' });
      const replaced = await patch(created, { metadata: { k0: null, one_more: 'v' } });
      expect(replaced.statusCode, replaced.body).toBe(200);
      expect(Object.keys(replaced.json<Todo>().metadata)).toHaveLength(50);
    });

    it('removes all metadata with metadata: null', async () => {
      const created = await create({ title: 'x', metadata: { a: '1' } });
      expect((await patch(created, { metadata: null })).json<Todo>().metadata).toEqual({});
    });

    it('accepts application/merge-patch+json', async () => {
      const created = await create();
      const response = await patch(created, { title: 'merged' }, 'application/merge-patch+json');
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<Todo>().title).toBe('merged');
    });

    it('changes nothing for an empty patch', async () => {
      const created = await create();
      const response = await patch(created, {});
      expect(response.statusCode).toBe(200);
      expect(response.headers.etag).toBe('"1"');
      expect(response.json<Todo>()).toEqual(created);
    });

    it('returns 422 unknown-field for an unknown field', async () => {
      const created = await create();
      expectProblem(await patch(created, { titel: 'x' }), 422, 'unknown-field', {
        pointer: '/titel',
      });
    });

    it('returns 422 when title is null', async () => {
      const created = await create();
      expectProblem(await patch(created, { title: null }), 422, 'validation-error', {
        pointer: '/title',
      });
    });

    it('names only the label at fault when a nullable labels array holds a too-long label', async () => {
      const created = await create();
      const response = await patch(created, { labels: ['ok', 'l'.repeat(65)] });
      expect(response.statusCode).toBe(422);
      // Not also "/labels: must be null", the other branch of `array | null`.
      const errors = response.json<Problem>().errors ?? [];
      expect(errors.map((error) => `${error.pointer} ${error.code}`)).toEqual([
        '/labels/1 maxLength',
      ]);
    });

    it('returns 422 when setting due_at while due_date is set', async () => {
      const created = await create({ title: 'x', due_date: '2026-05-01' });
      const response = await patch(created, { due_at: '2026-05-01T10:00:00Z' });
      expectProblem(response, 422, 'validation-error', { pointer: '/due_at' });
    });

    it('returns 422 read-only when version is changed', async () => {
      const created = await create();
      const response = await patch(created, { title: 'y', version: 5 });
      expectProblem(response, 422, 'validation-error', { pointer: '/version' });
      const reread = await t.inject({ method: 'GET', url: pathOf(created) });
      expect(reread.json<Todo>().title).toBe(created.title);
    });
  });

  describe('DELETE /api/todos/{id}', () => {
    it('returns 204, then the todo is gone', async () => {
      const todo = await create();
      const deleted = await t.inject({ method: 'DELETE', url: pathOf(todo) });
      expect(deleted.statusCode).toBe(204);
      expect(deleted.body).toBe('');
      expectProblem(await t.inject({ method: 'GET', url: pathOf(todo) }), 404, 'not-found');
      expectProblem(await t.inject({ method: 'DELETE', url: pathOf(todo) }), 404, 'not-found');
    });

    it('deletes only that todo', async () => {
      const [a, b] = [await create({ title: 'a' }), await create({ title: 'b' })];
      await t.inject({ method: 'DELETE', url: pathOf(a) });
      expect((await list()).map((todo) => todo.id)).toEqual([b.id]);
    });
  });

  describe('DELETE /api/todos', () => {
    async function seedMixed(): Promise<void> {
      await create({ title: 'open' });
      await create({ title: 'doing', status: 'in_progress' });
      await create({ title: 'done1', completed: true });
      await create({ title: 'done2', status: 'completed' });
    }

    it('deletes every todo without a filter', async () => {
      await seedMixed();
      const response = await t.inject({ method: 'DELETE', url: '/api/todos' });
      expect(response.statusCode).toBe(204);
      expect(response.body).toBe('');
      expect(await list()).toEqual([]);
    });

    it('deletes only completed todos with ?status=completed', async () => {
      await seedMixed();
      const response = await t.inject({ method: 'DELETE', url: '/api/todos?status=completed' });
      expect(response.statusCode).toBe(204);
      expect((await list()).map((todo) => todo.title)).toEqual(['open', 'doing']);
    });

    it('deletes only the other todos with ?completed=false', async () => {
      await seedMixed();
      const response = await t.inject({ method: 'DELETE', url: '/api/todos?completed=false' });
      expect(response.statusCode).toBe(204);
      expect((await list()).map((todo) => todo.title)).toEqual(['done1', 'done2']);
    });

    it('returns 400 for a bad filter and deletes nothing', async () => {
      await seedMixed();
      expectProblem(
        await t.inject({ method: 'DELETE', url: '/api/todos?status=bogus' }),
        400,
        'invalid-parameter',
        { pointer: 'status' },
      );
      expectProblem(
        await t.inject({ method: 'DELETE', url: '/api/todos?foo=1' }),
        400,
        'unknown-parameter',
        { pointer: 'foo' },
      );
      expect(await list()).toHaveLength(4);
    });
  });

  describe('GET /api/todos', () => {
    it('returns a bare empty array when there are no todos', async () => {
      const response = await t.inject({ method: 'GET', url: '/api/todos' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual([]);
      expect(response.headers.link).toBeUndefined();
    });

    it('orders by order, then created_at', async () => {
      // The clock ticks forward, so later todos get later created_at; explicit orders decide first.
      const late = await create({ title: 'late', order: 10 });
      const first = await create({ title: 'first', order: -5 });
      const later = await create({ title: 'later', order: 10 });
      const middle = await create({ title: 'middle', order: 3.5 });
      expect((await list()).map((todo) => todo.id)).toEqual([
        first.id,
        middle.id,
        late.id,
        later.id,
      ]);
    });

    it('breaks order ties by created_at, not by id', async () => {
      // ids are UUIDv7 from the real clock; created_at comes from the injected one.
      let now = Date.parse('2026-06-01T00:00:00.000Z');
      await t.close();
      t = await buildTestApp({ now: () => new Date(now) });
      const a = await create({ title: 'a', order: 1 });
      now -= 60_000;
      const b = await create({ title: 'b', order: 1 });
      expect(b.created_at < a.created_at).toBe(true);
      expect((await list()).map((todo) => todo.title)).toEqual(['b', 'a']);
    });

    it('pages with limit=50 through Link rel="next", each todo exactly once', async () => {
      const created: string[] = [];
      for (let i = 0; i < 120; i++) created.push((await create({ title: `todo ${i}` })).id);

      const seen: string[] = [];
      const sizes: number[] = [];
      let path: string | undefined = '/api/todos?limit=50';
      while (path !== undefined) {
        const response: LightMyRequestResponse = await t.inject({ method: 'GET', url: path });
        expect(response.statusCode, response.body).toBe(200);
        const page = response.json<Todo[]>();
        sizes.push(page.length);
        seen.push(...page.map((todo) => todo.id));
        if (response.headers.link !== undefined) {
          expect(String(response.headers.link)).toMatch(/^<http:\/\/todo\.test\/api\/todos\?/);
        }
        path = nextPath(response);
        expect(sizes.length).toBeLessThan(10);
      }
      expect(sizes).toEqual([50, 50, 20]);
      expect(seen).toEqual(created);
    });

    it('keeps the filter in the next link', async () => {
      for (let i = 0; i < 3; i++) {
        await create({ title: `open ${i}` });
        await create({ title: `done ${i}`, completed: true });
      }
      const first = await t.inject({ method: 'GET', url: '/api/todos?status=open&limit=2' });
      expect(first.json<Todo[]>().map((todo) => todo.title)).toEqual(['open 0', 'open 1']);
      const next = nextPath(first);
      expect(next).toContain('status=open');
      const second = await t.inject({ method: 'GET', url: next ?? '' });
      expect(second.json<Todo[]>().map((todo) => todo.title)).toEqual(['open 2']);
      expect(second.headers.link).toBeUndefined();
    });

    it('caps limit=500 at 200 items', async () => {
      for (let i = 0; i < 205; i++) await create({ title: `todo ${i}` });
      const response = await t.inject({ method: 'GET', url: '/api/todos?limit=500' });
      expect(response.statusCode).toBe(200);
      expect(response.json<Todo[]>()).toHaveLength(200);
      const rest = await t.inject({ method: 'GET', url: nextPath(response) ?? '' });
      expect(rest.json<Todo[]>()).toHaveLength(5);
      const byDefault = await t.inject({ method: 'GET', url: '/api/todos' });
      expect(byDefault.json<Todo[]>()).toHaveLength(50);
    });

    it.each(['0', '-1', '1.5', 'abc', 'Infinity', '-Infinity', '1e309', 'NaN', '0x10', '1e2', ''])(
      'returns 400 invalid-parameter for limit=%s',
      async (limit) => {
        const response = await t.inject({ method: 'GET', url: `/api/todos?limit=${limit}` });
        expectProblem(response, 400, 'invalid-parameter', { pointer: 'limit' });
      },
    );

    describe('cursors', () => {
      async function firstCursor(query: string): Promise<string> {
        for (let i = 0; i < 3; i++) await create({ title: `todo ${i}` });
        const response = await t.inject({ method: 'GET', url: `/api/todos?limit=1${query}` });
        const next = nextPath(response);
        const cursor = new URL(next ?? '', BASE).searchParams.get('cursor');
        expect(cursor).toBeTruthy();
        return cursor ?? '';
      }

      it('returns 400 invalid-cursor for a cursor with one character changed', async () => {
        const cursor = await firstCursor('');
        const valid = await t.inject({ method: 'GET', url: `/api/todos?limit=1&cursor=${cursor}` });
        expect(valid.statusCode).toBe(200);
        for (const index of [0, Math.floor(cursor.length / 2)]) {
          const original = cursor.charAt(index);
          const flipped = original === 'A' ? 'B' : 'A';
          const tampered = `${cursor.slice(0, index)}${flipped}${cursor.slice(index + 1)}`;
          const response = await t.inject({
            method: 'GET',
            url: `/api/todos?limit=1&cursor=${encodeURIComponent(tampered)}`,
          });
          expectProblem(response, 400, 'invalid-cursor', { pointer: 'cursor' });
        }
      });

      it.each(['garbage', 'a.b', 'a.b.c', '.', 'eyJwIjoxfQ'])(
        'returns 400 invalid-cursor for the garbage cursor %s',
        async (cursor) => {
          const response = await t.inject({ method: 'GET', url: `/api/todos?cursor=${cursor}` });
          expectProblem(response, 400, 'invalid-cursor');
        },
      );

      it('returns 400 invalid-cursor when a ?status=open cursor is reused without the filter', async () => {
        const cursor = await firstCursor('&status=open');
        const same = await t.inject({
          method: 'GET',
          url: `/api/todos?limit=1&status=open&cursor=${cursor}`,
        });
        expect(same.statusCode).toBe(200);
        const response = await t.inject({
          method: 'GET',
          url: `/api/todos?limit=1&cursor=${cursor}`,
        });
        expectProblem(response, 400, 'invalid-cursor');
      });

      it('returns 400 invalid-cursor when an unfiltered cursor is reused with a filter', async () => {
        const cursor = await firstCursor('');
        const response = await t.inject({
          method: 'GET',
          url: `/api/todos?completed=false&cursor=${cursor}`,
        });
        expectProblem(response, 400, 'invalid-cursor');
      });
    });

    describe('filters', () => {
      beforeEach(async () => {
        for (const status of TODO_STATUSES) {
          await create({ title: status, status });
        }
      });

      it('filters by a comma list of statuses', async () => {
        expect((await list('?status=open,blocked')).map((todo) => todo.status)).toEqual([
          'open',
          'blocked',
        ]);
        expect((await list('?status=cancelled')).map((todo) => todo.status)).toEqual(['cancelled']);
      });

      it('filters by completed=true and completed=false', async () => {
        expect((await list('?completed=true')).map((todo) => todo.status)).toEqual(['completed']);
        expect((await list('?completed=false')).map((todo) => todo.status)).toEqual([
          'open',
          'in_progress',
          'blocked',
          'deferred',
          'cancelled',
        ]);
      });

      it('returns 400 invalid-parameter for status=bogus', async () => {
        const response = await t.inject({ method: 'GET', url: '/api/todos?status=open,bogus' });
        expectProblem(response, 400, 'invalid-parameter', { pointer: 'status' });
      });

      it('returns 400 invalid-parameter for completed=yes', async () => {
        const response = await t.inject({ method: 'GET', url: '/api/todos?completed=yes' });
        expectProblem(response, 400, 'invalid-parameter', { pointer: 'completed' });
      });

      it.each(['sort_by=title', 'foo=1'])(
        'returns 400 unknown-parameter for ?%s',
        async (query) => {
          const response = await t.inject({ method: 'GET', url: `/api/todos?${query}` });
          expectProblem(response, 400, 'unknown-parameter', { pointer: query.split('=')[0] });
        },
      );
    });
  });
});
