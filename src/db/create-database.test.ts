import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  TEST_DIALECT,
  createTestDatabase,
  type TestDatabase,
} from '../../test/helpers/test-database.js';
import { createDatabase } from './create-database.js';
import type { Database } from './database.js';
import { migrateToLatest } from './migrator.js';

describe('createDatabase', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeEach(async () => {
    testDatabase = await createTestDatabase('todo-api-db-');
    database = createDatabase(testDatabase.url);
    await migrateToLatest(database.db);
  });
  afterEach(async () => {
    await database.close();
    await testDatabase.drop();
  });

  it('opens the dialect its URL names', () => {
    expect(database.dialect).toBe(TEST_DIALECT);
  });

  it('rolls the whole transaction back when the work fails', async () => {
    const insert = (trx: Database['db'], id: string) =>
      trx.insertInto('settings').values({ key: id, value: 'x' }).execute();
    await expect(
      database.writeTransaction(async (trx) => {
        await insert(trx, 'first');
        await insert(trx, 'first');
      }),
    ).rejects.toThrow();
    const rows = await database.db
      .selectFrom('settings')
      .selectAll()
      .where('key', '=', 'first')
      .execute();
    expect(rows).toEqual([]);
  });
});

describe.runIf(TEST_DIALECT === 'postgres')('createDatabase (PostgreSQL)', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeEach(async () => {
    testDatabase = await createTestDatabase();
    database = createDatabase(testDatabase.url);
  });
  afterEach(async () => {
    await database.close();
    await testDatabase.drop();
  });

  it('bounds every statement on the server, and names the service in pg_stat_activity', async () => {
    const { rows } = await sql<{ timeout: string; name: string }>`
      select current_setting('statement_timeout') as timeout,
             current_setting('application_name') as name`.execute(database.db);
    expect(rows).toEqual([{ timeout: '10s', name: 'todo-api' }]);
  });
});

describe.runIf(TEST_DIALECT === 'sqlite')('createDatabase (SQLite)', () => {
  let directory: string;
  let path: string;
  let database: Database;

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'todo-api-db-'));
    path = join(directory, 'nested', 'todos.db');
    database = createDatabase(`sqlite:${path}`);
    await migrateToLatest(database.db);
  });
  afterEach(async () => {
    await database.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('creates the file and its folder, in WAL mode with synchronous=FULL, foreign keys on and temp files in memory', async () => {
    expect(statSync(path).isFile()).toBe(true);
    const pragma = async (name: string) =>
      (
        await sql<Record<string, unknown>>`select * from ${sql.raw(`pragma_${name}`)}`.execute(
          database.db,
        )
      ).rows[0];
    expect(await pragma('journal_mode')).toEqual({ journal_mode: 'wal' });
    // 2 = FULL: the WAL is fsynced on every commit, so acknowledged writes survive power loss.
    expect(await pragma('synchronous')).toEqual({ synchronous: 2 });
    expect(await pragma('foreign_keys')).toEqual({ foreign_keys: 1 });
    expect(await pragma('busy_timeout')).toEqual({ timeout: 5000 });
    // 2 = MEMORY: savepoint undo records never spill to /var/tmp (sqlite-database.ts).
    expect(await pragma('temp_store')).toEqual({ temp_store: 2 });
  });

  it('takes the write lock when a transaction begins (BEGIN IMMEDIATE), before any write', async () => {
    const other = new SqliteDatabase(path, { timeout: 0 });
    try {
      await database.writeTransaction(async (trx) => {
        // Only a read so far; a deferred transaction would not hold the lock yet.
        await trx.selectFrom('todos').select('id').execute();
        expect(() => other.exec('begin immediate')).toThrow(/locked|busy/i);
      });
      other.exec('begin immediate');
      other.exec('rollback');
    } finally {
      other.close();
    }
  });

  it('reads rows as objects named by their columns, whole and streamed', async () => {
    await database.db
      .insertInto('settings')
      .values([
        { key: 'a', value: '1' },
        { key: 'b', value: '2' },
      ])
      .execute();
    const query = database.db
      .selectFrom('settings')
      .select(['value as v', 'key', sql<string>`key || value`.as('both')])
      .orderBy('key');
    const expected = [
      { v: '1', key: 'a', both: 'a1' },
      { v: '2', key: 'b', both: 'b2' },
    ];
    expect(await query.execute()).toEqual(expected);
    const streamed = [];
    for await (const row of query.stream()) streamed.push(row);
    expect(streamed).toEqual(expected);
    // A write that returns rows is read the same way.
    expect(
      await database.db
        .updateTable('settings')
        .set({ value: '3' })
        .where('key', '=', 'b')
        .returning(['key', 'value'])
        .execute(),
    ).toEqual([{ key: 'b', value: '3' }]);
  });

  it('binds a LIMIT as an expression, so SQLite keeps the plan instead of compiling the statement again on every run', async () => {
    await database.db
      .insertInto('settings')
      .values(['a', 'b', 'c'].map((key) => ({ key, value: key })))
      .execute();
    const query = database.db.selectFrom('settings').select('key').orderBy('key').limit(2);
    const { sql: text, parameters } = query.compile();
    expect(text).toMatch(/ limit \+ \?$/);
    expect(parameters).toEqual([2]);
    expect(await query.execute()).toEqual([{ key: 'a' }, { key: 'b' }]);
  });

  it('names the columns of `select *` anew after the table changed, here or in another process', async () => {
    await database.db.insertInto('settings').values({ key: 'k', value: 'v' }).execute();
    const all = () =>
      sql<Record<string, unknown>>`select * from settings`.execute(database.db).then((r) => r.rows);
    expect(await all()).toEqual([{ key: 'k', value: 'v' }]);

    await sql`alter table settings rename column value to contents`.execute(database.db);
    expect(await all()).toEqual([{ key: 'k', contents: 'v' }]);

    const other = new SqliteDatabase(path);
    try {
      other.exec("alter table settings add column note text default 'n'");
    } finally {
      other.close();
    }
    expect(await all()).toEqual([{ key: 'k', contents: 'v', note: 'n' }]);
  });

  it('checkpoints the WAL into the main file on close', async () => {
    await database.db.insertInto('settings').values({ key: 'k', value: 'v' }).execute();
    expect(statSync(`${path}-wal`).size).toBeGreaterThan(0);
    await database.close();
    const walSize = (() => {
      try {
        return statSync(`${path}-wal`).size;
      } catch {
        return 0;
      }
    })();
    expect(walSize).toBe(0);
    database = createDatabase(`sqlite:${path}`);
    const row = await database.db
      .selectFrom('settings')
      .selectAll()
      .where('key', '=', 'k')
      .executeTakeFirst();
    expect(row).toEqual({ key: 'k', value: 'v' });
  });
});
