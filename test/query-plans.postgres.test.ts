import { CompiledQuery, sql, type Compilable } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/create-database.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { parseFilter, parseSort } from '../src/todos/todo-list-query.js';
import type { ListFiltersQuery } from '../src/todos/todo.schemas.js';
import { TODO_ROW_COLUMNS, type TodoRow } from '../src/todos/todo.table.js';
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
import {
  createTestDatabase,
  withServerSetting,
  type TestDatabase,
} from './helpers/test-database.js';

/**
 * test/query-plans.test.ts, on PostgreSQL: `EXPLAIN (FORMAT JSON)` of the exact statements the
 * repository builds, on a few thousand todos of one owner among others, after VACUUM ANALYZE.
 *
 * What passes:
 * - `todos` and `todo_labels` are read through indexes only, never a `Seq Scan`, and each read
 *   of `todos` is bounded by the owner (`owner_id = $1` in the index condition) or is a
 *   primary-key probe for one match. The search index is the exception: `todos_search` (GIN)
 *   holds every owner's words, so a search reads every owner's matches and keeps the owner's.
 * - A list whose order an index yields walks that index and never sorts. A sort is accepted
 *   only over rows a filter narrowed through an index — search matches from `todos_search`,
 *   label matches from `todo_labels`, a range of a filtered column's index — never over the
 *   owner's rows (and the page cursor) alone. On these few thousand rows the planner rightly
 *   prefers sorting a small set of matches to walking far along the sort index for them.
 * - An `Incremental Sort` whose presorted key is the order's first column sorts only runs of
 *   equal first keys, as test/query-plans.test.ts accepts for sorts by several keys.
 *
 * The sessions run with `enable_seqscan = off`: on tables this small a sequential scan costs
 * about as much as anything else, and the planner would take one where at any real size it
 * would not. With it off, a `Seq Scan` in a plan means no index could serve the query at all.
 */

/** The parts of a plan node the checks read (PostgreSQL's JSON EXPLAIN format). */
interface PlanNode {
  readonly 'Node Type': string;
  readonly 'Relation Name'?: string;
  readonly 'Index Name'?: string;
  readonly 'Index Cond'?: string;
  readonly 'Presorted Key'?: readonly string[];
  readonly Plans?: readonly PlanNode[];
}

/** Tables whose whole reading would grow with everybody's todos. */
const OWNED_TABLES = new Set(['todos', 'todo_labels']);
const SEARCH_INDEX = 'todos_search';
const PRIMARY_KEY = 'todos_pkey';
const SORTS = new Set(['Sort', 'Incremental Sort']);

function descendants(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(descendants)];
}

/** One line per node, indented: the failure message. */
function describePlan(node: PlanNode, depth = 0): string {
  const on = node['Relation Name'] ? ` on ${node['Relation Name']}` : '';
  const index = node['Index Name'] ? ` using ${node['Index Name']}` : '';
  const cond = node['Index Cond'] ? ` (${node['Index Cond']})` : '';
  const presorted = node['Presorted Key'] ? ` presorted ${node['Presorted Key'].join()}` : '';
  return [
    `${'  '.repeat(depth)}${node['Node Type']}${on}${index}${cond}${presorted}`,
    ...(node.Plans ?? []).map((child) => describePlan(child, depth + 1)),
  ].join('\n');
}

/** The index scans in `node`'s subtree (bitmap index scans name no relation). */
function indexScans(node: PlanNode): PlanNode[] {
  return descendants(node).filter((n) => n['Index Name'] !== undefined);
}

/**
 * The columns an index condition compares, leaving out the page cursor: its row comparison, and
 * any bound on a column with one of the cursor's values (`cursor`, as text).
 */
function conditionColumns(node: PlanNode, cursor: readonly string[] = []): string[] {
  const cond = (node['Index Cond'] ?? '').replace(/ROW\([^)]*\)\s*[<>]=?\s*ROW\([^)]*\)/g, '');
  const comparisons = cond.matchAll(/"?(\w+)"?\s*(?:=|<>|<=|>=|<|>|@@)\s*(?:'([^']*)'|\S+)/g);
  return [...comparisons]
    .filter(([, , literal]) => literal === undefined || !cursor.includes(literal))
    .map(([, column]) => column ?? '');
}

/**
 * A filter narrowed what this sort sorts: some index below it is the search index, or compares
 * a column other than the owner and the id (and not with the page cursor's values).
 */
function sortsMatchesOnly(sort: PlanNode, cursor: readonly string[]): boolean {
  return indexScans(sort).some(
    (scan) =>
      scan['Index Name'] === SEARCH_INDEX ||
      conditionColumns(scan, cursor).some((column) => column !== 'owner_id' && column !== 'id'),
  );
}

/** The first column of the statement's ORDER BY. */
function leadingColumn(query: Compilable): string {
  const leading = /order by "(\w+)"/.exec(query.compile().sql)?.[1];
  if (leading === undefined) throw new Error('the list has no order by');
  return leading;
}

/** Every column of `todos` but the search vector, which its trigger computes. */
const COPIED_COLUMNS = [
  ...TODO_ROW_COLUMNS.filter((column) => column !== 'id' && column !== 'owner_id'),
  'priority_rank',
  'status_rank',
  'title_key',
  'due_asc_key',
  'due_desc_key',
];

/** Copies of `OWNER`'s todos (and labels) for `others` more owners, in one statement each. */
async function addOtherOwners(database: Database, others: number): Promise<void> {
  const columns = sql.join(COPIED_COLUMNS.map((column) => sql.ref(column)));
  for (let i = 1; i <= others; i++) {
    const owner = `owner-${i}`;
    await sql`insert into todos (id, owner_id, ${columns})
      select id || ${`-${i}`}, ${owner}, ${columns} from todos where owner_id = ${OWNER}`.execute(
      database.db,
    );
    await sql`insert into todo_labels (owner_id, label_key, todo_id)
      select ${owner}, label_key, todo_id || ${`-${i}`} from todo_labels where owner_id = ${OWNER}`.execute(
      database.db,
    );
  }
}

describe.each([
  ['4 owners', 3],
  // Anonymous mode: one owner holds every row, so `owner_id = $1` selects the whole table.
  ['1 owner', 0],
])('query plans on PostgreSQL after VACUUM ANALYZE, %s', (_name, others) => {
  let testDatabase: TestDatabase;
  let database: Database;
  let sample: TodoRow;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = createDatabase(withServerSetting(testDatabase.url, 'enable_seqscan=off'));
    await migrateToLatest(database.db);
    await seed(database, 1);
    await addOtherOwners(database, others);
    // As autovacuum leaves a table: statistics, and a visibility map for index-only scans.
    await sql`vacuum analyze`.execute(database.db);
    // Half way through the owner's todos, so that a later page in either direction still has
    // half of them ahead.
    sample = await sampleRow(database, 2000);
  }, 60_000);
  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });

  async function planOf(query: Compilable): Promise<PlanNode> {
    const { sql: text, parameters } = query.compile();
    const { rows } = await database.db.executeQuery<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      CompiledQuery.raw(`explain (format json) ${text}`, [...parameters]),
    );
    const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
    if (!plan) throw new Error('EXPLAIN returned no plan');
    return plan;
  }

  function listQuery(filter: ListFiltersQuery, sort: string | undefined, page: 1 | 2) {
    return listQueryOf(database, sample, filter, sort, page);
  }

  /** `todos` is read, through indexes only, each read bounded by the owner or a key probe. */
  function expectIndexedOnly(plan: PlanNode): void {
    const text = describePlan(plan);
    const nodes = descendants(plan);
    expect(
      nodes.some((n) => n['Relation Name'] === 'todos'),
      text,
    ).toBe(true);
    for (const node of nodes) {
      if (node['Node Type'] === 'Seq Scan') {
        expect(OWNED_TABLES.has(node['Relation Name'] ?? ''), text).toBe(false);
      }
    }
    // With a single owner, the owner's rows are the whole table: any index read is bounded.
    if (others === 0) return;
    for (const scan of indexScans(plan)) {
      if (scan['Index Name'] === SEARCH_INDEX || scan['Relation Name'] === 'todo_labels') continue;
      const columns = conditionColumns(scan);
      const probe = scan['Index Name'] === PRIMARY_KEY && columns.includes('id');
      expect(columns.includes('owner_id') || probe, text).toBe(true);
    }
  }

  /** No sort, or one over a filter's matches only (see the top of this file). */
  function expectNoSortOfTheOwnersRows(
    plan: PlanNode,
    leading: string,
    cursor: readonly string[],
  ): void {
    const text = describePlan(plan);
    for (const sort of descendants(plan).filter((n) => SORTS.has(n['Node Type']))) {
      const runsOnly =
        sort['Node Type'] === 'Incremental Sort' &&
        (sort['Presorted Key'] ?? []).some((key) => key.replaceAll('"', '') === leading);
      expect(runsOnly || sortsMatchesOnly(sort, cursor), text).toBe(true);
    }
  }

  function expectNoSort(plan: PlanNode): void {
    const sorts = descendants(plan).filter((n) => SORTS.has(n['Node Type']));
    expect(sorts, describePlan(plan)).toEqual([]);
  }

  /** Every filter, page and sort below goes through the same two checks. */
  async function expectServedByIndexes(
    filter: ListFiltersQuery,
    sort: string | undefined,
    page: 1 | 2,
  ): Promise<PlanNode> {
    const query = listQuery(filter, sort, page);
    const plan = await planOf(query);
    expectIndexedOnly(plan);
    const cursor = page === 2 ? repository.keysetOf(sample, parseSort(sort)).map(String) : [];
    expectNoSortOfTheOwnersRows(plan, leadingColumn(query), cursor);
    return plan;
  }

  it('walks todos_owner_order for the default list, seeking the cursor on later pages', async () => {
    for (const page of [1, 2] as const) {
      const plan = await planOf(listQuery({}, undefined, page));
      expectIndexedOnly(plan);
      expectNoSort(plan);
      const walked = indexScans(plan).find((scan) => scan['Index Name'] === 'todos_owner_order');
      expect(walked, describePlan(plan)).toBeDefined();
      if (page === 2) expect(walked?.['Index Cond'], describePlan(plan)).toMatch(/ROW\(/);
    }
  });

  it.each(Object.keys(FILTERS))(
    'lists with %s in the default order without sorting the owner’s rows',
    async (name) => {
      for (const page of [1, 2] as const) {
        await expectServedByIndexes(FILTERS[name] ?? {}, undefined, page);
      }
    },
  );

  it.each(Object.keys(SORT_INDEX))('sorts by %s by walking its index', async (sort) => {
    for (const page of [1, 2] as const) {
      const plan = await planOf(listQuery({}, sort, page));
      expectIndexedOnly(plan);
      expectNoSort(plan);
      const leading = [SORT_INDEX[sort], ...(LEADS_WITH[sort] ?? [])];
      const walked = indexScans(plan).find((scan) => leading.includes(scan['Index Name']));
      expect(walked, describePlan(plan)).toBeDefined();
      if (page === 2) expect(walked?.['Index Cond'], describePlan(plan)).toMatch(/ROW\(/);
    }
  });

  it('never sorts the owner’s rows for any single filter combined with any single sort key', async () => {
    for (const filter of Object.values(FILTERS)) {
      for (const sort of Object.keys(SORT_INDEX)) {
        for (const page of [1, 2] as const) {
          await expectServedByIndexes(filter, sort, page);
        }
      }
    }
  });

  it('never sorts the owner’s rows with every filter at once', async () => {
    const all: ListFiltersQuery = Object.assign({}, ...Object.values(FILTERS)) as ListFiltersQuery;
    for (const sort of [undefined, ...Object.keys(SORT_INDEX)]) {
      await expectServedByIndexes(all, sort, 2);
    }
  });

  it.each(['priority,-due_at', '-due_at,priority', 'status,title', '-updated_at,order'])(
    'sorts by %s walking the first key’s index, sorting only runs of equal first keys',
    async (sort) => {
      const first = sort.split(',')[0] ?? '';
      const leading = [SORT_INDEX[first], ...(LEADS_WITH[first] ?? [])];
      for (const page of [1, 2] as const) {
        const plan = await expectServedByIndexes({}, sort, page);
        const indexes = indexScans(plan).map((scan) => scan['Index Name']);
        expect(
          indexes.some((index) => leading.includes(index)),
          describePlan(plan),
        ).toBe(true);
        const sorts = descendants(plan).filter((n) => n['Node Type'] === 'Sort');
        expect(sorts, describePlan(plan)).toEqual([]);
      }
    },
  );

  it.each([
    ['-priority,due_at', 'todos_owner_urgent_due'],
    ['priority,due_at', 'todos_owner_priority_due'],
  ])('sorts by %s entirely from its own index (%s)', async (sort, index) => {
    for (const page of [1, 2] as const) {
      const plan = await planOf(listQuery({}, sort, page));
      expectIndexedOnly(plan);
      expectNoSort(plan);
      expect(
        indexScans(plan).map((scan) => scan['Index Name']),
        describePlan(plan),
      ).toContain(index);
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
});
