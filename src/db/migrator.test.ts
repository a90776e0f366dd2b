import { Migrator, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { parseFilter, parseSort } from '../todos/todo-list-query.js';
import { listedTodosJson } from '../todos/todo-json.js';
import { todosRepository } from '../todos/todos.repository.js';
import { todoRowToTodo } from '../todos/todos.service.js';
import { createDatabase } from './create-database.js';
import type { Database } from './database.js';
import * as createTodos from './migrations/0001-create-todos.js';
import * as createIdempotencyKeys from './migrations/0002-create-idempotency-keys.js';
import * as createSettings from './migrations/0003-create-settings.js';
import { MIGRATIONS, migrateToLatest, migrationTableSchema } from './migrator.js';

/** Todos stored by 0.1.0, before the list keys, label rows and search index existed. */
const OLD_TODOS = Array.from({ length: 1200 }, (_, i) => ({
  id: `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`,
  owner_id: 'anonymous',
  title: i === 7 ? 'Éclair au café' : `todo ${i}`,
  description: i === 8 ? 'Ask about the CRÈME' : null,
  status: i % 2 === 0 ? 'open' : 'completed',
  priority: i % 3 === 0 ? 'urgent' : 'none',
  position: i,
  labels: JSON.stringify(i % 100 === 0 ? ['Work', 'home'] : []),
  due_date: i === 9 ? '2026-03-01' : null,
  due_at: null,
  metadata: '{}',
  version: 1,
  completed_at: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
}));

/**
 * Titles of the first page of the anonymous owner's list for `query` (at a fixed `now`), as the
 * `todos` table holds them: some tests change todos with plain SQL, which leaves the stored list
 * JSON (`fields_json`, written only by the repository) behind on purpose.
 */
async function titlesOf(
  database: Database,
  query: Parameters<typeof parseFilter>[0],
  sort?: string,
  limit = 5,
): Promise<string[]> {
  const rows = await todosRepository.list(database.db, 'anonymous', {
    filter: parseFilter(query, new Date('2026-06-01T00:00:00Z')),
    sort: parseSort(sort),
    after: undefined,
    limit,
  });
  if (rows.length === 0) return [];
  const stored = await database.db
    .selectFrom('todos')
    .select(['id', 'title'])
    .where(
      'id',
      'in',
      rows.map((row) => row.id),
    )
    .execute();
  const titles = new Map(stored.map((row) => [row.id, row.title]));
  return rows.map((row) => titles.get(row.id) ?? '(missing)');
}

/** Every todo as a list sends it equals what `todoRowToTodo` makes of its columns. */
async function expectListedAsMapped(database: Database): Promise<void> {
  const base = 'http://localhost';
  const rows = await todosRepository.list(database.db, 'anonymous', {
    filter: { includeDeleted: true },
    sort: parseSort(undefined),
    after: undefined,
    limit: 10_000,
  });
  const stored = await database.db.selectFrom('todos').selectAll().execute();
  const mapped = new Map(stored.map((row) => [row.id, todoRowToTodo(row, base)]));
  expect(rows.length).toBe(stored.length);
  expect(JSON.parse(listedTodosJson(rows, base))).toEqual(rows.map((row) => mapped.get(row.id)));
}

describe('migrations from 0.1.0', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeEach(async () => {
    testDatabase = await createTestDatabase('todo-api-migrations-');
    database = createDatabase(testDatabase.url);
    const v010 = new Migrator({
      db: database.db,
      migrationTableSchema: await migrationTableSchema(database.db),
      provider: {
        getMigrations: () =>
          Promise.resolve({
            '0001-create-todos': createTodos,
            '0002-create-idempotency-keys': createIdempotencyKeys,
            '0003-create-settings': createSettings,
          }),
      },
    });
    expect((await v010.migrateToLatest()).error).toBeUndefined();
    for (let i = 0; i < OLD_TODOS.length; i += 100) {
      await sql`insert into todos ${sql`(${sql.join(Object.keys(OLD_TODOS[0] ?? {}).map((c) => sql.ref(c)))})`}
        values ${sql.join(OLD_TODOS.slice(i, i + 100).map((row) => sql`(${sql.join(Object.values(row))})`))}`.execute(
        database.db,
      );
    }
    await migrateToLatest(database.db);
  });
  afterEach(async () => {
    await database.close();
    await testDatabase.drop();
  });

  const titles = (query: Parameters<typeof parseFilter>[0], sort?: string) =>
    titlesOf(database, query, sort);

  it('backfills the sort keys of every todo', async () => {
    expect(await titles({}, '-priority,-order')).toEqual([
      'todo 1197',
      'todo 1194',
      'todo 1191',
      'todo 1188',
      'todo 1185',
    ]);
    // Folded: É sorts as e, before t (unfolded, U+00C9 would come after every "todo").
    expect(await titles({}, 'title')).toEqual([
      'Éclair au café',
      'todo 0',
      'todo 1',
      'todo 10',
      'todo 100',
    ]);
    expect(await titles({ overdue: 'true' })).toEqual([]);
    expect(await titles({ due_before: '2026-03-02' })).toEqual(['todo 9']);
    expect(await titles({ status: 'completed' }, 'status')).toEqual([
      'todo 1',
      'todo 3',
      'todo 5',
      'Éclair au café',
      'todo 9',
    ]);
  });

  it("backfills each todo's list JSON", async () => {
    await expectListedAsMapped(database);
  });

  it('backfills the label rows and the search index', async () => {
    expect(await titles({ labels: 'work,HOME' })).toEqual([
      'todo 0',
      'todo 100',
      'todo 200',
      'todo 300',
      'todo 400',
    ]);
    expect(await titles({ q: 'cafe' })).toEqual(['Éclair au café']);
    expect(await titles({ q: 'creme' })).toEqual(['todo 8']);
    const count = await todosRepository.count(
      database.db,
      'anonymous',
      parseFilter({ labels_any: 'home' }, new Date()),
    );
    expect(count).toBe(12);
  });

  it('keeps the search index in step with changes made after the upgrade', async () => {
    const count = (q: string) =>
      todosRepository.count(database.db, 'anonymous', parseFilter({ q }, new Date()));
    await sql`update todos set title = 'Brioche au beurre' where title = 'Éclair au café'`.execute(
      database.db,
    );
    expect(await titles({ q: 'cafe' })).toEqual([]);
    expect(await titles({ q: 'brioche' })).toEqual(['Brioche au beurre']);
    expect(await count('brioche')).toBe(1);
    await sql`delete from todos where description = 'Ask about the CRÈME'`.execute(database.db);
    expect(await titles({ q: 'creme' })).toEqual([]);
    expect(await count('todo')).toBe(OLD_TODOS.length - 2);
  });
});

describe('migrations 0012 (search key) and 0013 (list JSON) down and up again', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeEach(async () => {
    testDatabase = await createTestDatabase('todo-api-migrations-');
    database = createDatabase(testDatabase.url);
    await migrateToLatest(database.db);
  });
  afterEach(async () => {
    await database.close();
    await testDatabase.drop();
  });

  const row = (suffix: string, title: string) => ({
    id: `00000000-0000-7000-8000-0000000000${suffix}`,
    owner_id: 'anonymous',
    title,
    description: suffix === '0b' ? 'Crème "fraîche"\n' : null,
    status: 'open' as const,
    priority: 'none' as const,
    position: 1,
    labels: '["a"]',
    due_date: null,
    due_at: null,
    metadata: '{"k":"v"}',
    version: 1,
    completed_at: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
  });

  /** A todo written through the repository, as the current schema stores it. */
  async function insert(suffix: string, title: string): Promise<void> {
    await database.writeTransaction((trx) => todosRepository.insert(trx, row(suffix, title)));
  }

  const found = async (q: string) => (await titlesOf(database, { q }, undefined, 10)).sort();

  it('keeps every todo searchable and listed as it is, whichever version stored it', async () => {
    await insert('0a', 'Brioche before');
    const migrator = new Migrator({
      db: database.db,
      migrationTableSchema: await migrationTableSchema(database.db),
      provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
    });
    const down = await migrator.migrateTo('0011-create-webhooks');
    expect(down.error).toBeUndefined();
    expect(down.results?.map((result) => result.migrationName)).toEqual([
      '0013-add-todo-fields-json',
      '0012-add-todo-search-key',
    ]);
    // Indexed by the triggers of 0006, then given its key by the backfill of 0012 and its list
    // JSON by that of 0013.
    await sql`insert into todos ${sql`(${sql.join(Object.keys(row('0b', '')).map((c) => sql.ref(c)))})`}
      values (${sql.join(Object.values(row('0b', 'Brioche between')))})`.execute(database.db);
    await migrateToLatest(database.db);
    await insert('0c', 'Brioche after');
    expect(await found('brioche')).toEqual(['Brioche after', 'Brioche before', 'Brioche between']);
    await expectListedAsMapped(database);
    await sql`update todos set title = 'Croissant' where title = 'Brioche between'`.execute(
      database.db,
    );
    await sql`delete from todos where title = 'Brioche before'`.execute(database.db);
    expect(await found('brioche')).toEqual(['Brioche after']);
    expect(await found('croissant')).toEqual(['Croissant']);
  });
});
