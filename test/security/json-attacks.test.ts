import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { SERVICE_ENV, withDefaults } from './defaults.js';

/**
 * RELIABILITY.md §5 rows 14–16, through `inject` (the HTTP layer adds nothing here): deeply
 * nested JSON, invalid UTF-8 and prototype-reaching keys are refused with 400 `malformed-json`
 * before any handler runs, on every route that reads a body. `inject` runs the app in this
 * process, so this process's prototypes are the server's.
 */

const JSON_HEADERS = withDefaults({ 'content-type': 'application/json' });
const UNKNOWN_ID = '01a1fe80-9e7e-701f-975b-c311c00148bc';

/** A JSON text nesting `levels` objects: `{"a":{"a":…{}}}`. */
function nestedObjects(levels: number): string {
  return '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
}

/** A JSON text nesting `levels` arrays: `[[…[]]]`. */
function nestedArrays(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

type BodyMethod = 'POST' | 'PUT' | 'PATCH';

/** Every route that reads a JSON body, from the app's own route table, with `:id` filled in. */
function bodyRoutes(t: TestApp, id: string): { method: BodyMethod; url: string }[] {
  const routes = t.app.routeIndex
    .routes()
    .filter((route): route is { method: BodyMethod; url: string } =>
      ['POST', 'PUT', 'PATCH'].includes(route.method),
    )
    .map(({ method, url }) => ({ method, url: url.replace(':id', id) }));
  expect(routes.length).toBeGreaterThanOrEqual(3);
  return routes;
}

/** Own property names of the prototypes an attack would reach. */
function prototypeKeys(): Record<string, string[]> {
  return {
    object: Object.getOwnPropertyNames(Object.prototype).sort(),
    array: Object.getOwnPropertyNames(Array.prototype).sort(),
    function: Object.getOwnPropertyNames(Function.prototype).sort(),
  };
}

const PROTOTYPES_BEFORE = prototypeKeys();

function expectPrototypesUntouched(): void {
  expect(prototypeKeys()).toEqual(PROTOTYPES_BEFORE);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(({} as Record<string, unknown>).x).toBeUndefined();
  expect(([] as unknown as Record<string, unknown>).polluted).toBeUndefined();
}

describe('JSON bodies under attack (rows 14–16, inject)', () => {
  let t: TestApp;
  let todoId: string;
  let todoBefore: unknown;

  beforeAll(async () => {
    t = await buildTestApp({ env: SERVICE_ENV });
    const created = await t.inject({
      method: 'POST',
      url: '/api/todos',
      headers: JSON_HEADERS,
      payload: JSON.stringify({ title: 'target', labels: ['__proto__', 'constructor'] }),
    });
    expect(created.statusCode).toBe(201);
    todoId = created.json<{ id: string }>().id;
    todoBefore = created.json();
  });

  afterAll(async () => {
    await t.close();
  });

  async function expectNothingChanged(): Promise<void> {
    const list = await t.inject({ method: 'GET', url: '/api/todos', headers: withDefaults() });
    expect(list.json()).toEqual([todoBefore]);
  }

  describe('deep nesting (row 14)', () => {
    it.each([
      ['objects', `{"title":"a","metadata":${nestedObjects(9)}}`, '/metadata'],
      ['arrays', `{"title":"a","labels":${nestedArrays(9)}}`, '/labels'],
    ])('parses %s nested 10 levels (then 422 for the field)', async (_kind, payload, pointer) => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload,
      });
      const problem = expectProblem(response, 422, 'validation-error', { instance: '/api/todos' });
      expect(problem.errors?.[0]?.pointer.startsWith(pointer)).toBe(true);
    });

    it('lets JSON nested 32 levels through the parser (then 422 for the field)', async () => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload: `{"title":"a","metadata":${nestedObjects(31)}}`,
      });
      const problem = expectProblem(response, 422, 'validation-error', { instance: '/api/todos' });
      expect(problem.errors?.[0]?.pointer).toMatch(/^\/metadata/);
    });

    it.each([
      ['objects', `{"title":"a","metadata":${nestedObjects(32)}}`],
      ['arrays', `{"title":"a","labels":${nestedArrays(32)}}`],
      ['a bare array', nestedArrays(33)],
    ])('returns 400 malformed-json for %s nested 33 levels', async (_kind, payload) => {
      const response = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload,
      });
      const problem = expectProblem(response, 400, 'malformed-json', { instance: '/api/todos' });
      expect(problem.detail).toMatch(/32 levels/);
    });

    it('answers 100,000 levels (200 KB) with 413 under the default 64 KiB body limit, never 500', async () => {
      for (const { method, url } of bodyRoutes(t, todoId)) {
        const response = await t.inject({
          method,
          url,
          headers: JSON_HEADERS,
          payload: nestedArrays(100_000),
        });
        expectProblem(response, 413, 'payload-too-large', { instance: url });
      }
      await expectNothingChanged();
    });
  });

  describe('deep nesting with a body limit large enough to parse it (row 14)', () => {
    let big: TestApp;
    let bigTodoId: string;

    beforeAll(async () => {
      big = await buildTestApp({ env: { ...SERVICE_ENV, BODY_LIMIT: String(1024 * 1024) } });
      const created = await big.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload: '{"title":"target"}',
      });
      bigTodoId = created.json<{ id: string }>().id;
    });

    afterAll(async () => {
      await big.close();
    });

    it.each([
      ['objects', nestedObjects(100_000)],
      ['arrays', nestedArrays(100_000)],
      ['arrays inside a todo', `{"title":"a","labels":${nestedArrays(100_000)}}`],
      ['unclosed arrays', '['.repeat(100_000)],
    ])(
      'returns 400 malformed-json for 100,000 levels of %s on every body route, never 500',
      async (_kind, payload) => {
        for (const { method, url } of bodyRoutes(big, bigTodoId)) {
          const response = await big.inject({ method, url, headers: JSON_HEADERS, payload });
          const problem = expectProblem(response, 400, 'malformed-json', { instance: url });
          expect(problem.detail).toMatch(/32 levels/);
        }
        const todo = await big.inject({
          method: 'GET',
          url: `/api/todos/${bigTodoId}`,
          headers: withDefaults(),
        });
        expect(todo.json()).toMatchObject({ title: 'target', version: 1 });
      },
    );
  });

  describe('invalid UTF-8 (row 15)', () => {
    const SEQUENCES: readonly (readonly [string, readonly number[]])[] = [
      ['C3 28 (bad continuation)', [0xc3, 0x28]],
      ['FF (never valid)', [0xff]],
      ['C0 AF (overlong "/")', [0xc0, 0xaf]],
      ['ED A0 80 (UTF-16 surrogate)', [0xed, 0xa0, 0x80]],
      ['E2 82 (truncated "€")', [0xe2, 0x82]],
      ['C3 28 FF (several)', [0xc3, 0x28, 0xff]],
    ];
    const PLACES: readonly (readonly [string, (bytes: Buffer) => Buffer])[] = [
      ['a string value', (b) => Buffer.concat([Buffer.from('{"title":"a'), b, Buffer.from('"}')])],
      ['a key', (b) => Buffer.concat([Buffer.from('{"title":"a","'), b, Buffer.from('":1}')])],
      [
        'a label',
        (b) => Buffer.concat([Buffer.from('{"title":"a","labels":["'), b, Buffer.from('"]}')]),
      ],
      ['the end of the body', (b) => Buffer.concat([Buffer.from('{"title":"a"}'), b])],
    ];

    it.each(
      SEQUENCES.flatMap(([name, bytes]) =>
        PLACES.map(([place, build]) => [name, place, build(Buffer.from(bytes))] as const),
      ),
    )(
      'returns 400 malformed-json for %s in %s, and stores nothing',
      async (_name, _place, payload) => {
        const response = await t.inject({
          method: 'POST',
          url: '/api/todos',
          headers: JSON_HEADERS,
          payload,
        });
        const problem = expectProblem(response, 400, 'malformed-json', { instance: '/api/todos' });
        expect(problem.detail).toMatch(/UTF-8/);
        await expectNothingChanged();
      },
    );

    it.each(SEQUENCES)(
      'returns 400 for %s on every body route and changes nothing',
      async (_name, bytes) => {
        const payload = Buffer.concat([
          Buffer.from('{"title":"b'),
          Buffer.from(bytes),
          Buffer.from('"}'),
        ]);
        for (const { method, url } of bodyRoutes(t, todoId)) {
          const response = await t.inject({ method, url, headers: JSON_HEADERS, payload });
          expectProblem(response, 400, 'malformed-json', { instance: url });
        }
        await expectNothingChanged();
      },
    );

    it('round-trips é and 😀 byte for byte in every text field', async () => {
      const text = 'Café 😀 naïve';
      const created = await t.inject({
        method: 'POST',
        url: '/api/todos',
        headers: JSON_HEADERS,
        payload: Buffer.from(
          JSON.stringify({ title: text, description: text, labels: [text], metadata: { k: text } }),
          'utf8',
        ),
      });
      expect(created.statusCode).toBe(201);
      const id = created.json<{ id: string }>().id;
      try {
        const read = await t.inject({
          method: 'GET',
          url: `/api/todos/${id}`,
          headers: withDefaults(),
        });
        expect(read.json()).toMatchObject({
          title: text,
          description: text,
          labels: [text],
          metadata: { k: text },
        });
        const bytes = read.rawPayload;
        expect(bytes.includes(Buffer.from([0xc3, 0xa9]))).toBe(true); // é
        expect(bytes.includes(Buffer.from([0xf0, 0x9f, 0x98, 0x80]))).toBe(true); // 😀
        expect(bytes.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(false); // U+FFFD
      } finally {
        const deleted = await t.inject({
          method: 'DELETE',
          url: `/api/todos/${id}`,
          headers: withDefaults(),
        });
        expect(deleted.statusCode).toBe(204);
      }
    });
  });

  describe('prototype pollution (row 16)', () => {
    it.each([
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '{"title":"a","metadata":{"__proto__":"x"}}',
      '[{"__proto__":{"x":1}}]',
      '{"title":"a","__proto__":{"polluted":1}}',
      '{"title":"a","labels":[{"__proto__":{"polluted":1}}]}',
      '[[{"constructor":{"prototype":{"polluted":1}}}]]',
      '{"title":"a","metadata":{"a":[{"b":{"__proto__":{"polluted":1}}}]}}',
      '{"\\u005f_proto__":{"polluted":1}}',
      '{"title":"a","constructor":{"polluted":1}}',
      '{"title":"a","prototype":{"polluted":1}}',
      '{"title":"a","metadata":{"constructor":"x"}}',
    ])(
      'returns 400 for the prototype-reaching body %s on every body route and pollutes nothing',
      async (payload) => {
        for (const { method, url } of [
          { method: 'POST' as const, url: `/api/todos/${UNKNOWN_ID}/start` },
          ...bodyRoutes(t, todoId),
        ]) {
          const response = await t.inject({ method, url, headers: JSON_HEADERS, payload });
          const problem = expectProblem(response, 400, 'malformed-json', { instance: url });
          expect(problem.detail).toMatch(/"(__proto__|constructor|prototype)"/);
        }
        expectPrototypesUntouched();
        await expectNothingChanged();
      },
    );

    it.each([
      '__proto__[polluted]=1',
      '__proto__%5Bpolluted%5D=1',
      '__proto__.polluted=1',
      '__proto__=1',
      'constructor[prototype][polluted]=1',
      'constructor.prototype.polluted=1',
      'constructor=1',
      'prototype=1',
      'status[__proto__][polluted]=1',
    ])(
      'keeps the query key of %s literal: 400 unknown-parameter on the list routes, ignored elsewhere',
      async (query) => {
        const name = decodeURIComponent(query.split('=')[0] ?? '');
        for (const method of ['GET', 'DELETE'] as const) {
          const response = await t.inject({
            method,
            url: `/api/todos?${query}`,
            headers: withDefaults(),
          });
          expectProblem(response, 400, 'unknown-parameter', { pointer: name });
        }
        const detail = await t.inject({
          method: 'GET',
          url: `/api/todos/${todoId}?${query}`,
          headers: withDefaults(),
        });
        expect(detail.statusCode).toBe(200);
        expect(detail.json()).toEqual(todoBefore);
        expectPrototypesUntouched();
        await expectNothingChanged();
      },
    );

    it.each(['__proto__', 'constructor'])(
      'treats %s as a plain label value: labels= finds exactly the todo that has it',
      async (label) => {
        const response = await t.inject({
          method: 'GET',
          url: `/api/todos?labels=${label}`,
          headers: withDefaults(),
        });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual([todoBefore]);
        expectPrototypesUntouched();
      },
    );

    it('leaves every prototype without new keys after all the attacks above', () => {
      expectPrototypesUntouched();
      expect(Object.prototype).not.toHaveProperty('polluted');
      expect(Object.prototype).not.toHaveProperty('x');
    });
  });
});
