import type { LightMyRequestResponse } from 'fastify';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TODO_PRIORITIES,
  TODO_STATUSES,
  type Todo,
  type TodoPriority,
  type TodoStatus,
} from '../src/todos/todo.schemas.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

/**
 * Property tests of the write rules through the whole HTTP stack: any valid body is stored as
 * its normalised form, and no body whatsoever makes the service answer 5xx.
 */

interface Problem {
  type: string;
  status: number;
  code: string;
  errors?: { pointer: string; code: string; detail: string }[];
}

// eslint-disable-next-line no-control-regex -- control characters are what titles must not have
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
/** Keys the JSON body parser refuses anywhere (400 malformed-json), though they fit the key rule. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

const codePoints = (text: string): number => Array.from(text).length;

/** Printable text that NFC and trimming actually change: combining marks, singletons, spaces. */
const tricky = fc.constantFrom(
  'e\u0301',
  'A\u030a',
  '\u212b', // ANGSTROM SIGN → Å
  '\u1100\u1161', // Hangul jamo → 가
  ' ',
  '\u00a0',
  '\u3000',
  'É',
  'é',
  'ß',
  'ẞ',
);
const printableUnit = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }) },
  { weight: 1, arbitrary: tricky },
);

function printable(maxLength: number) {
  return fc
    .string({ unit: printableUnit, maxLength })
    .filter((text) => !CONTROL.test(text) && text.isWellFormed());
}

const normalizeTitle = (text: string): string => text.normalize('NFC').trim();

/** Titles whose normalised form has 1–500 characters (NFC can expand a string, at most 3×). */
const titleArb = printable(60).filter((title) => {
  const length = codePoints(normalizeTitle(title));
  return length >= 1 && length <= 500 && codePoints(title) <= 500;
});

/** Labels from a small alphabet (so that case-insensitive duplicates occur) or any text. */
const labelArb = fc
  .oneof(
    fc.string({
      unit: fc.constantFrom('a', 'A', 'b', 'B', ' ', 'e\u0301', 'é', 'É', 'ß', 'ẞ'),
      minLength: 1,
      maxLength: 4,
    }),
    printable(20),
  )
  .filter((label) => {
    const length = codePoints(normalizeTitle(label));
    return length >= 1 && length <= 64;
  });

const metadataKeyArb = fc
  .stringMatching(/^[A-Za-z0-9_.-]{1,40}$/)
  .filter((key) => !FORBIDDEN_KEYS.has(key));
const metadataValueArb = fc.oneof(printable(100), fc.constantFrom('', 'a\nb', 'tab\there'));
const metadataArb = fc
  .uniqueArray(fc.tuple(metadataKeyArb, metadataValueArb), {
    maxLength: 50,
    selector: ([key]) => key,
  })
  .map((entries) => Object.fromEntries(entries));

const descriptionArb = fc.oneof(
  fc.constant(null),
  fc.string({ unit: fc.oneof(printableUnit, fc.constantFrom('\n', '\t', '\r\n')), maxLength: 200 }),
);

const dayArb = fc.date({
  min: new Date('1900-01-01T00:00:00Z'),
  max: new Date('2999-12-31T23:59:59Z'),
  noInvalidDate: true,
});
const dueDateArb = dayArb.map((date) => date.toISOString().slice(0, 10));

/** A due_at with a random offset, and the UTC instant it names. */
const dueAtArb = fc
  .tuple(dayArb, fc.integer({ min: -14 * 60, max: 14 * 60 }), fc.boolean())
  .map(([instant, offsetMinutes, withMillis]) => {
    const utc = new Date(Math.floor(instant.getTime() / 1000) * 1000 + (withMillis ? 123 : 0));
    const local = new Date(utc.getTime() + offsetMinutes * 60_000).toISOString().slice(0, -1);
    const sign = offsetMinutes < 0 ? '-' : '+';
    const magnitude = Math.abs(offsetMinutes);
    const offset = `${sign}${String(Math.floor(magnitude / 60)).padStart(2, '0')}:${String(magnitude % 60).padStart(2, '0')}`;
    return { text: `${withMillis ? local : local.slice(0, -4)}${offset}`, utc: utc.toISOString() };
  });

type Due =
  | { kind: 'none' }
  | { kind: 'date'; date: string | null }
  | { kind: 'at'; text: string | null; utc: string | null };

const dueArb: fc.Arbitrary<Due> = fc.oneof(
  fc.constant<Due>({ kind: 'none' }),
  dueDateArb.map((date): Due => ({ kind: 'date', date })),
  fc.constant<Due>({ kind: 'date', date: null }),
  dueAtArb.map(({ text, utc }): Due => ({ kind: 'at', text, utc })),
  fc.constant<Due>({ kind: 'at', text: null, utc: null }),
);

const orderArb = fc.double({ min: -(2 ** 53), max: 2 ** 53, noNaN: true });

interface ValidInput {
  title: string;
  description: string | null | undefined;
  status: TodoStatus | undefined;
  sendCompleted: boolean;
  priority: TodoPriority | undefined;
  order: number | undefined;
  labels: string[] | undefined;
  metadata: Record<string, string> | undefined;
  due: Due;
}

const validInputArb: fc.Arbitrary<ValidInput> = fc.record({
  title: titleArb,
  description: fc.option(descriptionArb, { nil: undefined }),
  status: fc.option(fc.constantFrom(...TODO_STATUSES), { nil: undefined }),
  sendCompleted: fc.boolean(),
  priority: fc.option(fc.constantFrom(...TODO_PRIORITIES), { nil: undefined }),
  order: fc.option(orderArb, { nil: undefined }),
  labels: fc.option(fc.array(labelArb, { maxLength: 20 }), { nil: undefined }),
  metadata: fc.option(metadataArb, { nil: undefined }),
  due: dueArb,
});

function bodyOf(input: ValidInput): Record<string, unknown> {
  const body: Record<string, unknown> = { title: input.title };
  if (input.description !== undefined) body.description = input.description;
  if (input.status !== undefined) body.status = input.status;
  if (input.sendCompleted) body.completed = (input.status ?? 'open') === 'completed';
  if (input.priority !== undefined) body.priority = input.priority;
  if (input.order !== undefined) body.order = input.order;
  if (input.labels !== undefined) body.labels = input.labels;
  if (input.metadata !== undefined) body.metadata = input.metadata;
  if (input.due.kind === 'date') body.due_date = input.due.date;
  if (input.due.kind === 'at') body.due_at = input.due.text;
  return body;
}

/** The rules of API.md §1, stated independently of the implementation. */
function expectedLabels(labels: readonly string[]): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  for (const label of labels) {
    const value = normalizeTitle(label);
    if (seen.has(value.toLowerCase())) continue;
    seen.add(value.toLowerCase());
    result.push(value);
  }
  return result;
}

function expectedFields(input: ValidInput): Partial<Todo> {
  const status = input.status ?? 'open';
  return {
    title: normalizeTitle(input.title),
    description: input.description == null ? null : input.description.normalize('NFC'),
    status,
    completed: status === 'completed',
    priority: input.priority ?? 'none',
    labels: expectedLabels(input.labels ?? []),
    metadata: Object.fromEntries(
      Object.entries(input.metadata ?? {}).map(([key, value]) => [key, value.normalize('NFC')]),
    ),
    due_date: input.due.kind === 'date' ? input.due.date : null,
    due_at: input.due.kind === 'at' ? input.due.utc : null,
    version: 1,
  };
}

function expectProblemFor(response: LightMyRequestResponse): void {
  expect(response.statusCode, response.body).toBeGreaterThanOrEqual(400);
  expect(response.statusCode, response.body).toBeLessThan(500);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = response.json<Problem>();
  expect(problem.status).toBe(response.statusCode);
  expect(problem.type).toBe(`/problems/${problem.code}`);
}

/** No 5xx; a success is a todo, anything else a well-formed problem. */
function expectNoServerError(response: LightMyRequestResponse, success: number): void {
  expect(response.statusCode, response.body).toBeLessThan(500);
  if (response.statusCode !== success) expectProblemFor(response);
}

describe('valid todo bodies (property)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('creates a todo holding exactly the normalised values, and GET returns the same', async () => {
    await fc.assert(
      fc.asyncProperty(validInputArb, async (input) => {
        const response = await t.inject({
          method: 'POST',
          url: '/api/todos',
          payload: bodyOf(input),
        });
        expect(response.statusCode, response.body).toBe(201);
        const todo = response.json<Todo>();
        expect(todo).toMatchObject(expectedFields(input));
        if (input.order !== undefined) {
          // Exactly as sent: the same double (JSON has no -0, so -0 comes back as 0).
          expect(todo.order).toBe(JSON.parse(JSON.stringify(input.order)) as number);
        }
        expect(todo.completed_at === null).toBe(todo.status !== 'completed');

        const read = await t.inject({ method: 'GET', url: `/api/todos/${todo.id}` });
        expect(read.statusCode).toBe(200);
        expect(read.json<Todo>()).toEqual(todo);
      }),
      { numRuns: 150 },
    );
  });

  it('treats a PUT of the normalised values as a no-op', async () => {
    await fc.assert(
      fc.asyncProperty(validInputArb, async (input) => {
        const created = (
          await t.inject({ method: 'POST', url: '/api/todos', payload: bodyOf(input) })
        ).json<Todo>();
        const response = await t.inject({
          method: 'PUT',
          url: `/api/todos/${created.id}`,
          payload: created,
        });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json<Todo>()).toEqual(created);
      }),
      { numRuns: 50 },
    );
  });
});

describe('junk bodies (property)', () => {
  let t: TestApp;
  let target: Todo;
  beforeAll(async () => {
    t = await buildTestApp();
    const response = await t.inject({ method: 'POST', url: '/api/todos', payload: { title: 'x' } });
    target = response.json<Todo>();
  });
  afterAll(async () => {
    await t.close();
  });

  const writes = () =>
    fc.constantFrom(
      { method: 'POST' as const, url: '/api/todos', success: 201 },
      { method: 'PUT' as const, url: `/api/todos/${target.id}`, success: 200 },
      { method: 'PATCH' as const, url: `/api/todos/${target.id}`, success: 200 },
    );

  const isObjectWithTitle = (value: unknown): boolean =>
    typeof value === 'object' && value !== null && !Array.isArray(value) && 'title' in value;

  it('answers any JSON value with a 4xx problem (or a success for a valid body), never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(writes(), fc.jsonValue(), async (write, value) => {
        const response = await t.inject({
          method: write.method,
          url: write.url,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(value),
        });
        expectNoServerError(response, write.success);
        // Only an object could be valid; POST and PUT also need a title.
        const couldBeValid =
          write.method === 'PATCH'
            ? typeof value === 'object' && value !== null && !Array.isArray(value)
            : isObjectWithTitle(value);
        if (!couldBeValid) expectProblemFor(response);
      }),
      { numRuns: 150 },
    );
  });

  const fieldNames = [
    'title',
    'description',
    'status',
    'completed',
    'priority',
    'order',
    'labels',
    'due_date',
    'due_at',
    'metadata',
    'id',
    'version',
  ] as const;
  const wrongTypesArb = fc.record(
    Object.fromEntries(
      fieldNames.map((name) => [
        name,
        fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.string({ unit: 'binary', maxLength: 30 }),
          fc.double(),
          fc.constantFrom(
            '',
            'null',
            'true',
            '2026-02-30',
            '2026-13-01T00:00:00Z',
            '0000-01-01T00:00:00+01:00',
            '9999-12-31T23:59:59-01:00',
            '\ud800',
            '\u0000',
          ),
        ),
      ]),
    ) as Record<(typeof fieldNames)[number], fc.Arbitrary<unknown>>,
    { requiredKeys: [] },
  );

  it('answers known fields of any type with a 4xx problem or a success, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(writes(), wrongTypesArb, async (write, body) => {
        const response = await t.inject({
          method: write.method,
          url: write.url,
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        });
        expectNoServerError(response, write.success);
      }),
      { numRuns: 200 },
    );
  });

  it('answers arbitrary body text with a 4xx problem, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        writes(),
        fc.constantFrom('application/json', 'application/merge-patch+json', 'text/plain'),
        fc.string({ unit: 'binary', maxLength: 200 }),
        async (write, contentType, text) => {
          const response = await t.inject({
            method: write.method,
            url: write.url,
            headers: { 'content-type': contentType },
            payload: text,
          });
          expectNoServerError(response, write.success);
          if (!text.includes('{')) expectProblemFor(response);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('answers arbitrary bytes with a 4xx problem, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(writes(), fc.uint8Array({ maxLength: 200 }), async (write, bytes) => {
        const response = await t.inject({
          method: write.method,
          url: write.url,
          headers: { 'content-type': 'application/json' },
          payload: Buffer.from(bytes),
        });
        expectNoServerError(response, write.success);
        if (!bytes.includes(0x7b /* { */)) expectProblemFor(response);
      }),
      { numRuns: 100 },
    );
  });

  it('answers huge strings in any field with 413 or 422, never 5xx', async () => {
    const fieldArb = fc.constantFrom('title', 'description', 'label', 'metadata value', 'key');
    await fc.assert(
      fc.asyncProperty(
        writes(),
        fieldArb,
        fc.integer({ min: 501, max: 100_000 }),
        fc.constantFrom('x', 'é', '😀', ' '),
        async (write, field, length, unit) => {
          const huge = unit.repeat(length);
          const body: Record<string, unknown> =
            field === 'title'
              ? { title: huge }
              : field === 'description'
                ? { title: 'x', description: `${huge}${'d'.repeat(10_001)}` }
                : field === 'label'
                  ? { title: 'x', labels: [`${huge}l`] }
                  : field === 'metadata value'
                    ? { title: 'x', metadata: { k: huge } }
                    : { title: 'x', metadata: { [huge]: 'v' } };
          const response = await t.inject({ method: write.method, url: write.url, payload: body });
          expectProblemFor(response);
          expect([413, 422]).toContain(response.statusCode);
        },
      ),
      { numRuns: 40 },
    );
  });
});
