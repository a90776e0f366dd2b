/**
 * The benchmark's bulk seeding (`bench/seed-triggers.ts`) sets the SQLite triggers aside during a
 * load and does their work afterwards, once for all rows. A migration that changes what a
 * trigger stores would make the benchmark measure another database than the service keeps, so
 * this suite loads the same rows both ways — the triggers firing row by row, and set aside — and
 * compares what is stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_START, SEED, insertRows } from '../bench/seed.js';
import { checkTriggerEffects } from '../bench/seed-triggers.js';
import { createDatabase } from '../src/db/create-database.js';
import { migrateToLatest } from '../src/db/migrator.js';

const ROWS = 400;
const END = Date.parse('2026-11-01T00:00:00Z');

async function migratedFile(path: string): Promise<void> {
  const database = createDatabase(`sqlite:${path}`);
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
}

/** `rebuildIndexes` is the fresh-file path, which also sets the triggers aside. */
async function load(path: string, bulk: boolean): Promise<void> {
  await migratedFile(path);
  await insertRows(path, {
    count: ROWS,
    seed: SEED,
    firstPosition: ORDER_START,
    end: END,
    path: 'direct',
    rebuildIndexes: bulk,
  });
}

const STORED = {
  todos: 'select * from todos order by id',
  searchKeys: 'select rowid, todo_id from todo_search_keys order by rowid',
  ownerUsage: 'select * from owner_usage order by owner_id',
  labels: 'select * from todo_labels order by owner_id, label_key, todo_id',
  schema: 'select type, name, tbl_name, sql from sqlite_master order by type, name',
};

function stored(sqlite: SqliteDatabase.Database): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(STORED).map(([name, query]) => [name, sqlite.prepare(query).all()]),
  );
}

/** The todo ids each word of the stored titles finds, as a word prefix, through FTS5. */
function searches(sqlite: SqliteDatabase.Database): Record<string, string[]> {
  const titles = sqlite.prepare('select title from todos').pluck().all() as string[];
  const words = [...new Set(titles.flatMap((title) => title.toLowerCase().match(/\w{3,}/g) ?? []))];
  const find = sqlite
    .prepare(
      `select k.todo_id from todos_fts f join todo_search_keys k on k.rowid = f.rowid
       where todos_fts match ? order by k.todo_id`,
    )
    .pluck();
  return Object.fromEntries(words.map((word) => [word, find.all(`"${word}"*`) as string[]]));
}

describe('bench seeding with the triggers set aside', () => {
  let directory = '';
  const opened: SqliteDatabase.Database[] = [];
  let rowByRow: SqliteDatabase.Database;
  let bulk: SqliteDatabase.Database;

  async function loaded(name: string, bulkLoad: boolean): Promise<SqliteDatabase.Database> {
    const path = join(directory, name);
    await load(path, bulkLoad);
    const sqlite = new SqliteDatabase(path);
    opened.push(sqlite);
    return sqlite;
  }

  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'bench-seeding-'));
    rowByRow = await loaded('row-by-row.db', false);
    bulk = await loaded('bulk.db', true);
  });

  afterAll(() => {
    for (const sqlite of opened) sqlite.close();
    if (directory !== '') rmSync(directory, { recursive: true, force: true });
  });

  it('stores the same rows, keys, counts, schema and triggers as the triggers firing per row', () => {
    const expected = stored(rowByRow);
    expect(expected.todos).toHaveLength(ROWS);
    expect(expected.searchKeys).toHaveLength(ROWS);
    expect(stored(bulk)).toEqual(expected);
  });

  it('finds the same todos for every word of their titles', () => {
    const expected = searches(rowByRow);
    expect(Object.keys(expected).length).toBeGreaterThan(20);
    expect(Object.values(expected).every((ids) => ids.length > 0)).toBe(true);
    expect(searches(bulk)).toEqual(expected);
    bulk.prepare("insert into todos_fts (todos_fts) values ('integrity-check')").run();
  });

  it('reports a todo whose full-text key is not its own, and a wrong count', () => {
    const tables = ['todo_search_keys', 'owner_usage'];
    expect(checkTriggerEffects(bulk, tables)).toEqual([]);
    bulk.exec('begin');
    try {
      bulk.exec('update owner_usage set todo_count = todo_count + 1');
      bulk.exec('update todos set search_key = search_key + 1 where rowid in (1, 2)');
      expect(checkTriggerEffects(bulk, tables)).toEqual([
        '2 todos without their own full-text key',
        '1 owners whose todo count is wrong',
      ]);
    } finally {
      bulk.exec('rollback');
    }
  });
});
