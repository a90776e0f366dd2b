import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/http/problem.js';
import {
  ListFiltersQuerySchema,
  ListQuerySchema,
  SORT_FIELDS,
  TODO_PRIORITIES,
  TODO_STATUSES,
  type Todo,
} from '../../src/todos/todo.schemas.js';
import { openApiDocumentOf } from '../helpers/openapi-contract.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { tableNames } from '../helpers/test-database.js';
import { SERVICE_ENV, withDefaults } from './defaults.js';

/**
 * RELIABILITY.md §5 row 17: SQL (and FTS5) injection through every filter, sort and search
 * parameter of `GET` and `DELETE /api/todos`. Each answer is a 400 naming the parameter or
 * exactly the todos that really match, per an oracle written from the README independently of
 * the repository; no table changes except what a DELETE really matched.
 */

const JSON_HEADERS = withDefaults({ 'content-type': 'application/json' });

/** Parameters each operation accepts, straight from the route schemas. */
const LIST_PARAMETERS = Object.keys(ListQuerySchema.properties).sort();
const DELETE_PARAMETERS = Object.keys(ListFiltersQuerySchema.properties).sort();

const CORPUS: readonly string[] = [
  "' OR 1=1--",
  "' OR '1'='1",
  '" OR ""="',
  '"; DROP TABLE todos;--',
  "'; DELETE FROM todos; --",
  "' UNION SELECT id, owner_id, title FROM todos--",
  'UNION SELECT',
  ') OR (1=1',
  "1; ATTACH DATABASE '/tmp/x.db' AS x;--",
  '%',
  '_',
  '%_%',
  '\\',
  '\\%',
  '\0',
  'a\0b',
  '*',
  'abc*',
  'NEAR(union select)',
  '-milk',
  'title:milk',
  '^milk',
  '/* comment */ milk',
  "' OR 1=1--,union select",
  '%,_',
  'abc,errands',
  'ABC , 500',
];

/** Todos seeded before the attacks: their text and labels are what the corpus looks for. */
const SEEDS: readonly Record<string, unknown>[] = [
  { title: "' OR 1=1--", labels: ["' OR 1=1--"] },
  { title: '"; DROP TABLE todos;--', labels: ['"; DROP TABLE todos;--'], priority: 'urgent' },
  { title: 'UNION SELECT report', labels: ['union select'], status: 'in_progress' },
  { title: 'Union station', description: 'select a train', priority: 'high' },
  { title: '100% done', description: 'percent % sign', labels: ['%', '50%'] },
  { title: 'snake_case name', labels: ['_', 'a_c'], status: 'blocked' },
  { title: 'back\\slash path', labels: ['\\'], status: 'completed' },
  { title: 'abc plain', labels: ['abc', '500'], priority: 'low' },
  { title: 'abcdef words', description: 'near milk' },
  { title: 'Milk and eggs', labels: ['errands'], status: 'cancelled' },
  { title: 'title milk', description: 'comment' },
  { title: 'a', labels: ['a b'] },
];

/** What an oracle says about one parameter value. */
type Expected =
  | { readonly kind: 'invalid' }
  /** Exactly these todos (ids). */
  | { readonly kind: 'exactly'; readonly ids: ReadonlySet<string> }
  /** A page: `count` of these todos. */
  | { readonly kind: 'page'; readonly ids: ReadonlySet<string>; readonly count: number }
  /** Not worked out here (a well-formed date); 400 or any subset of the todos is acceptable. */
  | { readonly kind: 'unknown' };

type Oracle = (value: string, todos: readonly Todo[]) => Expected;

const INVALID: Expected = { kind: 'invalid' };
const idsOf = (todos: readonly Todo[]): ReadonlySet<string> =>
  new Set(todos.map((todo) => todo.id));
const exactly = (todos: readonly Todo[]): Expected => ({ kind: 'exactly', ids: idsOf(todos) });

/** README "Filters": comma list, items trimmed, none empty, at most 20 distinct. */
function commaList(raw: string): string[] | undefined {
  const items = raw.split(',').map((item) => item.trim());
  if (raw.length === 0 || items.some((item) => item === '')) return undefined;
  return new Set(items).size > 20 ? undefined : [...new Set(items)];
}

function enumOracle(allowed: readonly string[], field: 'status' | 'priority'): Oracle {
  return (value, todos) => {
    const items = commaList(value);
    if (!items || items.some((item) => !allowed.includes(item))) return INVALID;
    return exactly(todos.filter((todo) => items.includes(todo[field])));
  };
}

function booleanOracle(keep: (todo: Todo, value: boolean) => boolean): Oracle {
  return (value, todos) =>
    value === 'true' || value === 'false'
      ? exactly(todos.filter((todo) => keep(todo, value === 'true')))
      : INVALID;
}

/** Labels compare trimmed, NFC, ignoring case (README "The resource"). */
const labelKey = (label: string) => label.normalize('NFC').trim().toLowerCase();

function labelOracle(every: boolean): Oracle {
  return (value, todos) => {
    const items = value.length > 2000 ? undefined : commaList(value);
    if (!items || items.some((item) => Array.from(item).length > 64)) return INVALID;
    const keys = items.map(labelKey);
    return exactly(
      todos.filter((todo) => {
        const own = todo.labels.map(labelKey);
        return every
          ? keys.every((key) => own.includes(key))
          : keys.some((key) => own.includes(key));
      }),
    );
  };
}

/** Instants are only ever valid when they start like a date; the corpus never does. */
const instantOracle: Oracle = (value) =>
  /^\d{4}-\d{2}-\d{2}/.test(value) ? { kind: 'unknown' } : INVALID;

/** Words as the search sees them: runs of letters and digits, lower-cased (ASCII here). */
const words = (text: string) =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);

/**
 * README "Search": every whitespace-separated word of `q` must match the beginning of a word of
 * the title or the description; punctuation inside a query word makes adjacent words, the last
 * one a prefix. A query without a letter or digit matches nothing.
 */
const searchOracle: Oracle = (value, todos) => {
  const q = value.normalize('NFC').trim();
  if (value.length === 0 || Array.from(value).length > 200 || q === '') return INVALID;
  const phrases = q
    .split(/\s+/u)
    .map(words)
    .filter((phrase) => phrase.length > 0);
  if (phrases.length === 0) return exactly([]);
  const phraseIn = (phrase: readonly string[], text: string | null) => {
    const tokens = words(text ?? '');
    return tokens.some((_, start) =>
      phrase.every((word, i) => {
        const token = tokens[start + i];
        if (token === undefined) return false;
        return i === phrase.length - 1 ? token.startsWith(word) : token === word;
      }),
    );
  };
  return exactly(
    todos.filter((todo) =>
      phrases.every((phrase) => phraseIn(phrase, todo.title) || phraseIn(phrase, todo.description)),
    ),
  );
};

const sortOracle: Oracle = (value, todos) => {
  const fields = value.split(',').map((item) => item.trim().replace(/^-/, ''));
  const known = fields.every((field) => (SORT_FIELDS as readonly string[]).includes(field));
  return known && new Set(fields).size === fields.length ? exactly(todos) : INVALID;
};

const limitOracle: Oracle = (value, todos) => {
  if (!/^(0|[1-9][0-9]{0,14})$/.test(value) || Number(value) < 1) return INVALID;
  // README "Paging": 1–200; above 200 is capped to 200.
  return { kind: 'page', ids: idsOf(todos), count: Math.min(Number(value), 200, todos.length) };
};

/** Every parameter's oracle; a parameter added to the schemas without one fails the suite. */
const ORACLES: Readonly<Record<string, Oracle>> = {
  status: enumOracle(TODO_STATUSES, 'status'),
  priority: enumOracle(TODO_PRIORITIES, 'priority'),
  completed: booleanOracle((todo, value) => todo.completed === value),
  // No seeded todo is due, so none is overdue.
  overdue: booleanOracle((_todo, value) => !value),
  labels: labelOracle(true),
  labels_any: labelOracle(false),
  due_before: instantOracle,
  due_after: instantOracle,
  created_after: instantOracle,
  created_before: instantOracle,
  updated_since: instantOracle,
  q: searchOracle,
  sort: sortOracle,
  limit: limitOracle,
  cursor: () => INVALID,
  // Nothing seeded stays deleted (attackDelete restores what it deleted).
  include_deleted: booleanOracle(() => true),
};

/** Injection-shaped strings: the corpus, its pieces recombined, and plain random text. */
const injectionString = fc.oneof(
  fc.constantFrom(...CORPUS),
  fc.string({
    unit: fc.oneof(
      fc.constantFrom("'", '"', ';', '--', '/*', '*/', '%', '_', '\\', '\0', '*', '(', ')', ','),
      fc.constantFrom(' OR ', ' AND ', ' UNION SELECT ', ' DROP TABLE todos', ' 1=1', ' NEAR '),
      fc.string({ minLength: 1, maxLength: 1 }),
    ),
    maxLength: 12,
  }),
  fc.string({ maxLength: 40 }),
);

interface Seeded {
  readonly seed: Record<string, unknown>;
  todo: Todo;
}

describe('SQL injection in every list and bulk-delete parameter (row 17, inject)', () => {
  let t: TestApp;
  let seeded: Seeded[];
  let countsBefore: Record<string, number>;

  /**
   * Row counts of every table but SQLite's full-text internals (see `tableNames`) and the
   * outbox, which grows with every write by design.
   */
  async function tableCounts(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {};
    for (const name of await tableNames(t.database.db)) {
      if (name === 'todo_events') continue;
      // PostgreSQL's count is an int8, which pg hands over as text.
      const result = await sql<{
        n: number | string;
      }>`select count(*) as n from ${sql.table(name)}`.execute(t.database.db);
      counts[name] = Number(result.rows[0]?.n ?? -1);
    }
    return counts;
  }

  async function create(seed: Record<string, unknown>): Promise<Todo> {
    const response = await t.inject({
      method: 'POST',
      url: '/api/todos',
      headers: JSON_HEADERS,
      payload: JSON.stringify(seed),
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<Todo>();
  }

  async function restore(todo: Todo): Promise<Todo> {
    const response = await t.inject({
      method: 'POST',
      url: `/api/todos/${todo.id}/restore`,
      headers: withDefaults(),
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Todo>();
  }

  async function storedIds(): Promise<Set<string>> {
    const response = await t.inject({
      method: 'GET',
      url: '/api/todos?limit=200',
      headers: withDefaults(),
    });
    expect(response.statusCode).toBe(200);
    return new Set(response.json<Todo[]>().map((todo) => todo.id));
  }

  function expectRefused(status: number, body: string, parameter: string): void {
    expect(status, body).toBe(400);
    const problem = JSON.parse(body) as Problem;
    expect(['invalid-parameter', 'invalid-cursor']).toContain(problem.code);
    expect(problem.errors?.map((error) => error.pointer)).toContain(parameter);
  }

  /** One GET with the attack in `parameter`, checked against the oracle. */
  async function attackList(parameter: string, value: string): Promise<void> {
    const todos = seeded.map((entry) => entry.todo);
    const expected = ORACLES[parameter]?.(value, todos);
    const query = new URLSearchParams(parameter === 'limit' ? {} : { limit: '200' });
    query.set(parameter, value);
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos?${query.toString()}`,
      headers: withDefaults(),
    });
    const context = `GET ?${parameter}=${JSON.stringify(value)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
    expect(response.statusCode, context).toBeLessThan(500);
    if (expected?.kind === 'invalid') {
      expectRefused(response.statusCode, response.body, parameter);
    } else {
      if (expected?.kind === 'unknown' && response.statusCode === 400) return;
      expect(response.statusCode, context).toBe(200);
      const ids = response.json<Todo[]>().map((todo) => todo.id);
      if (expected?.kind === 'exactly') expect(new Set(ids), context).toEqual(expected.ids);
      if (expected?.kind === 'page') {
        expect(ids, context).toHaveLength(expected.count);
        for (const id of ids) expect(expected.ids.has(id), context).toBe(true);
      }
      const known = new Set(todos.map((todo) => todo.id));
      for (const id of ids) expect(known.has(id), context).toBe(true);
    }
    expect(await tableCounts(), context).toEqual(countsBefore);
  }

  /** One DELETE with the attack in `parameter`: deletes exactly what matches, then re-seeds it. */
  async function attackDelete(parameter: string, value: string): Promise<void> {
    const expected = ORACLES[parameter]?.(
      value,
      seeded.map((entry) => entry.todo),
    );
    const before = await storedIds();
    const response = await t.inject({
      method: 'DELETE',
      url: `/api/todos?${new URLSearchParams({ [parameter]: value }).toString()}`,
      headers: withDefaults(),
    });
    const context = `DELETE ?${parameter}=${JSON.stringify(value)} → ${response.statusCode} ${response.body.slice(0, 300)}`;
    expect(response.statusCode, context).toBeLessThan(500);
    const after = await storedIds();
    const deleted = new Set([...before].filter((id) => !after.has(id)));
    try {
      if (expected?.kind === 'invalid') {
        expectRefused(response.statusCode, response.body, parameter);
        expect(deleted.size, context).toBe(0);
      } else if (expected?.kind === 'exactly') {
        expect(response.statusCode, context).toBe(204);
        expect(deleted, context).toEqual(expected.ids);
      } else if (response.statusCode !== 400) {
        expect(response.statusCode, context).toBe(204);
      }
    } finally {
      // Put back what was deleted, so that one failure does not cascade into the next cases.
      for (const entry of seeded) {
        if (deleted.has(entry.todo.id)) entry.todo = await restore(entry.todo);
      }
    }
    expect(await tableCounts(), context).toEqual(countsBefore);
  }

  beforeAll(async () => {
    t = await buildTestApp({ env: SERVICE_ENV });
    seeded = [];
    for (const seed of SEEDS) seeded.push({ seed, todo: await create(seed) });
    countsBefore = await tableCounts();
    expect(countsBefore.todos).toBe(SEEDS.length);
  });

  afterAll(async () => {
    await t.close();
  });

  it('has an oracle for every query parameter the two routes document', () => {
    const documented = (method: 'get' | 'delete') => {
      const operation = openApiDocumentOf(t.app).paths['/api/todos']?.[method] as
        { parameters?: { name: string; in: string }[] } | undefined;
      return (operation?.parameters ?? [])
        .filter((parameter) => parameter.in === 'query')
        .map((parameter) => parameter.name)
        .sort();
    };
    expect(documented('get')).toEqual(LIST_PARAMETERS);
    expect(documented('delete')).toEqual(DELETE_PARAMETERS);
    expect(Object.keys(ORACLES).sort()).toEqual(LIST_PARAMETERS);
  });

  it.each(LIST_PARAMETERS)(
    `GET /api/todos?%s= answers the ${CORPUS.length} corpus strings and 30 generated ones with 400 or exactly the matching todos`,
    async (parameter) => {
      for (const value of CORPUS) await attackList(parameter, value);
      await fc.assert(
        fc.asyncProperty(injectionString, (value) => attackList(parameter, value)),
        { numRuns: 30, interruptAfterTimeLimit: 3000 },
      );
    },
  );

  it.each(DELETE_PARAMETERS)(
    `DELETE /api/todos?%s= answers the ${CORPUS.length} corpus strings and 15 generated ones with 400 or deletes exactly the matching todos`,
    async (parameter) => {
      for (const value of CORPUS) await attackDelete(parameter, value);
      await fc.assert(
        fc.asyncProperty(injectionString, (value) => attackDelete(parameter, value)),
        { numRuns: 15, interruptAfterTimeLimit: 3000 },
      );
    },
  );

  it.each(['%', '_', '%%', '_%', '\\', '\\_'])(
    'a search for %j matches only todos containing it literally (no LIKE wildcards)',
    async (value) => {
      const response = await t.inject({
        method: 'GET',
        url: `/api/todos?limit=200&q=${encodeURIComponent(value)}`,
        headers: withDefaults(),
      });
      expect(response.statusCode).toBe(200);
      for (const todo of response.json<Todo[]>()) {
        expect(`${todo.title} ${todo.description ?? ''}`).toContain(value);
      }
    },
  );

  it.each([
    ['%', ['100% done']],
    ['_', ['snake_case name']],
    ['a_c', ['snake_case name']],
    ['50%', ['100% done']],
    ['\\', ['back\\slash path']],
    ['%,_', []],
  ])('labels=%s matches only todos labelled with it literally', async (value, titles) => {
    const response = await t.inject({
      method: 'GET',
      url: `/api/todos?limit=200&labels=${encodeURIComponent(value)}`,
      headers: withDefaults(),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json<Todo[]>().map((todo) => todo.title)).toEqual(titles);
  });

  it('leaves every table as it was after all the attacks', async () => {
    expect(await tableCounts()).toEqual(countsBefore);
    const titles = (
      await Promise.all(
        [...(await storedIds())].map(async (id) => {
          const response = await t.inject({
            method: 'GET',
            url: `/api/todos/${id}`,
            headers: withDefaults(),
          });
          return response.json<Todo>().title;
        }),
      )
    ).sort();
    expect(titles).toEqual(SEEDS.map((seed) => seed.title as string).sort());
  });
});
