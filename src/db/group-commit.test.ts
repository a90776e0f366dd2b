import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDialectConfig,
} from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Db, Tables } from './database.js';
import { MAX_BATCH, createGroupCommit } from './group-commit.js';
import { migrateToLatest } from './migrator.js';

/** Counts the transactions the group committer opens, on a real SQLite file. */
class CountingDriver extends SqliteDriver {
  static transactions = 0;
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    CountingDriver.transactions++;
    await super.beginTransaction(connection);
  }
}
class CountingDialect extends SqliteDialect {
  constructor(private readonly config: SqliteDialectConfig) {
    super(config);
  }
  override createDriver(): Driver {
    return new CountingDriver(this.config);
  }
}

describe('createGroupCommit', () => {
  let directory: string;
  let path: string;
  let db: Db;
  let reader: SqliteDatabase.Database;
  let writeTransaction: ReturnType<typeof createGroupCommit>;

  const insert = (trx: Db, key: string) =>
    trx.insertInto('settings').values({ key, value: 'v' }).execute();
  /** What a second connection sees: only committed rows. */
  const committed = (key: string) =>
    reader.prepare('select count(*) as n from settings where key = ?').get(key) as { n: number };

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'todo-api-group-'));
    path = join(directory, 'db.sqlite');
    const sqlite = new SqliteDatabase(path);
    sqlite.pragma('journal_mode = WAL');
    db = new Kysely<Tables>({ dialect: new CountingDialect({ database: sqlite }) });
    await migrateToLatest(db);
    reader = new SqliteDatabase(path, { readonly: true });
    writeTransaction = createGroupCommit(db);
    CountingDriver.transactions = 0;
  });
  afterEach(async () => {
    reader.close();
    await db.destroy();
    rmSync(directory, { recursive: true, force: true });
  });

  it('commits writes issued together in one transaction', async () => {
    const keys = Array.from({ length: 40 }, (_, index) => `k${index}`);
    await Promise.all(keys.map((key) => writeTransaction((trx) => insert(trx, key))));
    expect(CountingDriver.transactions).toBe(1);
    for (const key of keys) expect(committed(key).n).toBe(1);
  });

  it('acknowledges a write only once another connection can see it', async () => {
    const seenAtAcknowledgement = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        writeTransaction((trx) => insert(trx, `seen${index}`)).then(
          () => committed(`seen${index}`).n,
        ),
      ),
    );
    expect(seenAtAcknowledgement).toEqual(Array<number>(20).fill(1));
  });

  it('fails only the write that throws; the others in its batch commit', async () => {
    const outcomes = await Promise.allSettled([
      writeTransaction((trx) => insert(trx, 'a')),
      writeTransaction(async (trx) => {
        await insert(trx, 'doomed');
        throw new Error('rule broken');
      }),
      writeTransaction((trx) => insert(trx, 'a')), // primary-key violation
      writeTransaction((trx) => insert(trx, 'b')),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'fulfilled',
    ]);
    expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(new Error('rule broken'));
    expect(CountingDriver.transactions).toBe(1);
    expect([committed('a').n, committed('b').n, committed('doomed').n]).toEqual([1, 1, 0]);
  });

  it('resolves each write with the value its work returned', async () => {
    const values = await Promise.all([
      writeTransaction(async () => 'first'),
      writeTransaction(async () => 2),
    ]);
    expect(values).toEqual(['first', 2]);
  });

  it(`splits a burst into batches of at most ${MAX_BATCH}`, async () => {
    const count = MAX_BATCH * 2 + 1;
    await Promise.all(
      Array.from({ length: count }, (_, index) =>
        writeTransaction((trx) => insert(trx, `b${index}`)),
      ),
    );
    expect(CountingDriver.transactions).toBe(3);
    expect(reader.prepare('select count(*) as n from settings').get()).toEqual({ n: count });
  });

  it('starts a new batch for writes issued after the previous one was scheduled', async () => {
    await writeTransaction((trx) => insert(trx, 'one'));
    await writeTransaction((trx) => insert(trx, 'two'));
    expect(CountingDriver.transactions).toBe(2);
  });
});
