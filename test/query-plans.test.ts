import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery, type Compilable } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/create-database.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { parseFilter } from '../src/todos/todo-list-query.js';
import { SORT_FIELDS, type ListFiltersQuery } from '../src/todos/todo.schemas.js';
import type { TodoRow } from '../src/todos/todo.table.js';
import { todosRepository as repository } from '../src/todos/todos.repository.js';
import {
  FILTERS,
  LEADS_WITH,
  NOW,
  OWNER,
  SORT_INDEX,
  listQuery as listQueryOf,
  sampleRow,
  seed,
} from './helpers/list-query-plans.js';

/**
 * Every list query the API can issue must be served by an index: EXPLAIN QUERY PLAN of the exact
 * statements the repository builds must show an index SEARCH on the owner's rows — never a scan
 * of `todos` — and, for lists, never a temporary B-tree to sort them. Checked on a seeded
 * database, once without statistics and once after ANALYZE.
 */

describe.each([
  ['without statistics', 4, false],
  ['after ANALYZE, 4 owners', 4, true],
  // Anonymous mode: one owner holds every row, so `owner_id = ?` selects the whole table.
  ['after ANALYZE, 1 owner', 1, true],
])('query plans %s', (_name, owners, analyze) => {
  let database: Database;
  let directory: string;
  let sample: TodoRow;

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'todo-api-plans-'));
    database = createDatabase(`sqlite:${join(directory, 'todos.db')}`);
    await migrateToLatest(database.db);
    await seed(database, owners);
    if (analyze) await database.db.executeQuery(CompiledQuery.raw('analyze'));
    sample = await sampleRow(database);
  });
  afterAll(async () => {
    await database.close();
    rmSync(directory, { recursive: true, force: true });
  });

  async function planOf(query: Compilable): Promise<string[]> {
    const { sql, parameters } = query.compile();
    const result = await database.db.executeQuery<{ detail: string }>(
      CompiledQuery.raw(`explain query plan ${sql}`, [...parameters]),
    );
    return result.rows.map((row) => row.detail);
  }

  /** Every access to `todos` is an index search on the owner; nothing scans a whole table. */
  function expectIndexedOnly(plan: readonly string[]): void {
    const todos = plan.filter((line) => /^(SCAN|SEARCH) todos\b/.test(line));
    expect(todos, plan.join('\n')).not.toHaveLength(0);
    for (const line of todos) {
      expect(line, plan.join('\n')).toMatch(
        /^SEARCH todos USING (COVERING )?INDEX \w+ \(owner_id=\?/,
      );
    }
    for (const line of plan) {
      expect(line, plan.join('\n')).not.toMatch(/^SCAN (todos|todo_labels|todo_search_keys)\b/);
    }
  }

  function expectNoSort(plan: readonly string[]): void {
    expect(plan.join('\n')).not.toMatch(/TEMP B-TREE FOR (RIGHT PART OF )?ORDER BY/);
  }

  function listQuery(filter: ListFiltersQuery, sort: string | undefined, page: 1 | 2) {
    return listQueryOf(database, sample, filter, sort, page);
  }

  it('walks todos_owner_order for the default list, first and later pages', async () => {
    for (const page of [1, 2] as const) {
      const plan = await planOf(listQuery({}, undefined, page));
      expectIndexedOnly(plan);
      expectNoSort(plan);
      expect(plan.join('\n')).toContain('todos_owner_order');
    }
  });

  it.each(Object.keys(FILTERS))(
    'lists with %s in the default order from an index, without sorting',
    async (name) => {
      for (const page of [1, 2] as const) {
        const plan = await planOf(listQuery(FILTERS[name] ?? {}, undefined, page));
        expectIndexedOnly(plan);
        expectNoSort(plan);
      }
    },
  );

  it.each(Object.keys(SORT_INDEX))('sorts by %s by walking its index', async (sort) => {
    for (const page of [1, 2] as const) {
      const plan = await planOf(listQuery({}, sort, page));
      expectIndexedOnly(plan);
      expectNoSort(plan);
      expect(plan.join('\n')).toContain(`INDEX ${SORT_INDEX[sort] ?? '?'} `);
    }
  });

  it('never sorts for any single filter combined with any single sort key', async () => {
    for (const filter of Object.values(FILTERS)) {
      for (const sort of Object.keys(SORT_INDEX)) {
        for (const page of [1, 2] as const) {
          const plan = await planOf(listQuery(filter, sort, page));
          expectIndexedOnly(plan);
          expectNoSort(plan);
        }
      }
    }
  });

  it('never sorts for any two filters combined with any single sort key', async () => {
    const filters = Object.values(FILTERS);
    for (const [i, first] of filters.entries()) {
      for (const second of filters.slice(i + 1)) {
        for (const sort of [undefined, ...Object.keys(SORT_INDEX)]) {
          const plan = await planOf(listQuery({ ...first, ...second }, sort, 2));
          expectIndexedOnly(plan);
          expectNoSort(plan);
        }
      }
    }
  });

  it('never sorts with every filter at once', async () => {
    const all: ListFiltersQuery = Object.assign({}, ...Object.values(FILTERS)) as ListFiltersQuery;
    for (const sort of [undefined, ...Object.keys(SORT_INDEX)]) {
      const plan = await planOf(listQuery(all, sort, 2));
      expectIndexedOnly(plan);
      expectNoSort(plan);
    }
  });

  it('uses the range of the due index when the due filter and the sort agree', async () => {
    const plan = await planOf(listQuery({ due_before: '2026-02-01' }, 'due_at', 1));
    expect(plan.join('\n')).toMatch(
      /todos_owner_due_asc \(owner_id=\? AND due_asc_key>\? AND due_asc_key<\?\)/,
    );
    const backwards = await planOf(listQuery({ due_after: '2026-02-01' }, '-due_at', 1));
    expect(backwards.join('\n')).toMatch(
      /todos_owner_due_desc \(owner_id=\? AND due_desc_key>\? AND due_desc_key<\?\)/,
    );
  });

  it.each([
    'priority,-due_at',
    '-due_at,priority',
    'status,title',
    '-status,-title',
    '-updated_at,order',
    'title,created_at',
    'due_at,-priority,title',
    'order,-created_at',
  ])(
    'sorts by %s walking the first key’s index, sorting only runs of equal first keys',
    async (sort) => {
      const first = sort.split(',')[0] ?? '';
      for (const filter of [{}, { labels: 'work' }, { q: 'milk', status: 'open' }]) {
        for (const page of [1, 2] as const) {
          const plan = await planOf(listQuery(filter, sort, page));
          expectIndexedOnly(plan);
          const text = plan.join('\n');
          // Any index that leads with the first key will do (priority has composite ones).
          const leading = [SORT_INDEX[first], ...(LEADS_WITH[first] ?? [])];
          expect(leading.some((index) => text.includes(`INDEX ${index ?? '?'} `))).toBe(true);
          expect(text).not.toMatch(/USE TEMP B-TREE FOR ORDER BY/);
        }
      }
    },
  );

  it.each([
    ['-priority,due_at', 'todos_owner_urgent_due'],
    ['priority,due_at', 'todos_owner_priority_due'],
  ])('sorts by %s entirely from its own index (%s), without any sort step', async (sort, index) => {
    for (const filter of [{}, { status: 'open,in_progress' }, { labels: 'work' }]) {
      for (const page of [1, 2] as const) {
        const plan = await planOf(listQuery(filter, sort, page));
        expectIndexedOnly(plan);
        const text = plan.join('\n');
        expect(text).toContain(`INDEX ${index} `);
        expect(text).not.toMatch(/TEMP B-TREE/);
      }
    }
  });

  it.each(Object.keys(FILTERS))('counts %s from an index', async (name) => {
    expectIndexedOnly(
      await planOf(
        repository.countQuery(database.db, OWNER, parseFilter(FILTERS[name] ?? {}, NOW)),
      ),
    );
  });

  it.each(Object.keys(FILTERS))('deletes %s through an index', async (name) => {
    const query = repository.deleteMatchingQuery(
      database.db,
      OWNER,
      parseFilter(FILTERS[name] ?? {}, NOW),
      NOW.toISOString(),
    );
    expectIndexedOnly(await planOf(query));
  });

  it.each(SORT_FIELDS)('has an index for the sort key %s', (field) => {
    expect(SORT_INDEX[field]).toBeDefined();
  });
});
