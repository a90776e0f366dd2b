import type { Database } from '../../src/db/database.js';
import { parseFilter, parseSort } from '../../src/todos/todo-list-query.js';
import {
  TODO_PRIORITIES,
  TODO_STATUSES,
  type ListFiltersQuery,
} from '../../src/todos/todo.schemas.js';
import type { TodoRow } from '../../src/todos/todo.table.js';
import { todosRepository as repository } from '../../src/todos/todos.repository.js';

/**
 * What the query-plan suites (test/query-plans*.test.ts) explain: the same seeded todos, every
 * filter and every sort key the list API offers, on SQLite and on PostgreSQL.
 */

export const OWNER = 'owner-a';
export const NOW = new Date('2026-03-01T12:00:00.000Z');
export const LIMIT = 51;

/** Each filter alone, as the query string spells it. */
export const FILTERS: Readonly<Record<string, ListFiltersQuery>> = {
  'no filter': {},
  'status=open': { status: 'open' },
  'status=open,blocked': { status: 'open,blocked' },
  'completed=true': { completed: 'true' },
  'completed=false': { completed: 'false' },
  'priority=high': { priority: 'high' },
  'priority=high,urgent': { priority: 'high,urgent' },
  'labels=work': { labels: 'work' },
  'labels=work,home': { labels: 'work,home' },
  'labels_any=work,rare': { labels_any: 'work,rare' },
  'due_before=2026-02-01': { due_before: '2026-02-01' },
  'due_after=2026-02-01': { due_after: '2026-02-01' },
  'overdue=true': { overdue: 'true' },
  'overdue=false': { overdue: 'false' },
  'created_after=…': { created_after: '2025-06-01T00:00:00Z' },
  'created_before=…': { created_before: '2025-01-02T00:00:00Z' },
  'updated_since=…': { updated_since: '2025-12-01T00:00:00Z' },
  'q=milk': { q: 'milk' },
  'q=two words': { q: 'buy mil' },
};

/** The index that serves each single sort key (both directions: one walks it backwards). */
export const SORT_INDEX: Readonly<Record<string, string>> = {
  order: 'todos_owner_position',
  '-order': 'todos_owner_position',
  created_at: 'todos_owner_created',
  '-created_at': 'todos_owner_created',
  updated_at: 'todos_owner_updated',
  '-updated_at': 'todos_owner_updated',
  due_at: 'todos_owner_due_asc',
  '-due_at': 'todos_owner_due_desc',
  priority: 'todos_owner_priority',
  '-priority': 'todos_owner_priority',
  title: 'todos_owner_title',
  '-title': 'todos_owner_title',
  status: 'todos_owner_status_rank',
  '-status': 'todos_owner_status_rank',
};

/** Composite indexes that also lead with a sort key (0007; the default order's, from 0001). */
export const LEADS_WITH: Readonly<Record<string, readonly string[]>> = {
  priority: ['todos_owner_priority_due', 'todos_owner_urgent_due'],
  '-priority': ['todos_owner_priority_due', 'todos_owner_urgent_due'],
  order: ['todos_owner_order'],
  '-order': ['todos_owner_order'],
};

const WORDS = ['buy', 'milk', 'call', 'mom', 'write', 'report', 'café', 'fix', 'bike', 'plan'];
const LABELS = ['work', 'home', 'errands', 'Later', 'rare'];

/** A small deterministic generator, so that the seeded data is the same on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

export async function seed(database: Database, owners: number): Promise<void> {
  const next = random(42);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  await database.writeTransaction(async (trx) => {
    for (let i = 0; i < 4000; i++) {
      const created = new Date(Date.UTC(2025, 0, 1) + i * 3_600_000).toISOString();
      const due = next();
      const labels = LABELS.filter((label) => next() < (label === 'rare' ? 0.01 : 0.3));
      await repository.insert(trx, {
        id: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
        owner_id: i % owners === 0 ? OWNER : `owner-${i % owners}`,
        title: `${pick(WORDS)} ${pick(WORDS)} ${i}`,
        description: next() < 0.5 ? null : `${pick(WORDS)} ${pick(WORDS)}`,
        status: pick(TODO_STATUSES),
        priority: pick(TODO_PRIORITIES),
        position: Math.floor(next() * 100_000),
        labels: JSON.stringify(labels),
        due_date:
          due < 0.3 ? `2026-0${1 + Math.floor(next() * 6)}-1${Math.floor(next() * 9)}` : null,
        due_at:
          due > 0.6
            ? new Date(Date.UTC(2026, 0, 1) + Math.floor(next() * 1e10)).toISOString()
            : null,
        metadata: '{}',
        version: 1,
        completed_at: null,
        created_at: created,
        updated_at: created,
      });
    }
  });
}

/** The `offset`-th row of `OWNER` by id (time of creation): later pages start after it. */
export function sampleRow(database: Database, offset = 500): Promise<TodoRow> {
  return database.db
    .selectFrom('todos')
    .selectAll()
    .where('owner_id', '=', OWNER)
    .orderBy('id')
    .offset(offset)
    .limit(1)
    .executeTakeFirstOrThrow();
}

/** The list statement for a filter and sort (`undefined`: the default), first or later page. */
export function listQuery(
  database: Database,
  sample: TodoRow,
  filter: ListFiltersQuery,
  sort: string | undefined,
  page: 1 | 2,
) {
  const sortKeys = parseSort(sort);
  return repository.listQuery(database.db, OWNER, {
    filter: parseFilter(filter, NOW),
    sort: sortKeys,
    after: page === 2 ? repository.keysetOf(sample, sortKeys) : undefined,
    limit: LIMIT,
  });
}
