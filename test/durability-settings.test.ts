/**
 * Config guard for what the README promises — an acknowledged write survives a crash and a power
 * loss (RELIABILITY.md §4.1, §4.2, §4.3 step 8). The crash tests cannot show power-loss
 * durability, so these settings are asserted on connections the service itself opens:
 * SQLite in WAL mode with synchronous=FULL; PostgreSQL with fsync, synchronous_commit and
 * full_page_writes on.
 *
 * PostgreSQL runs on `TEST_DATABASE_URL` when it is set (its settings are the ones that matter
 * there), else on a throwaway cluster, else the PostgreSQL half is skipped with the reason.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/create-database.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createPostgresDatabase } from '../src/db/postgres-database.js';
import {
  clusterUnavailableReason,
  createThrowawayCluster,
  type ThrowawayCluster,
} from './faults/throwaway-cluster.js';
import { makeDiskTempDir } from './helpers/disk-temp-dir.js';

/** One row of a PRAGMA or SHOW, read through the service's own Kysely handle. */
async function single(database: Database, statement: string): Promise<Record<string, unknown>> {
  const { rows } = await sql<Record<string, unknown>>`${sql.raw(statement)}`.execute(database.db);
  expect(rows).toHaveLength(1);
  return rows[0] ?? {};
}

describe('SQLite durability settings', () => {
  let directory: string | undefined;
  let database: Database | undefined;

  afterAll(async () => {
    await database?.close();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  it('opens the database in WAL mode with synchronous=FULL, and the file stays in WAL mode', async () => {
    directory = makeDiskTempDir('todo-api-settings-').path;
    const path = join(directory, 'todos.db');
    database = createDatabase(`sqlite:${path}`);
    await migrateToLatest(database.db);

    expect(await single(database, 'PRAGMA journal_mode')).toEqual({ journal_mode: 'wal' });
    // 2 = FULL: the WAL is fsynced at every commit. NORMAL (1) may lose recent commits on power
    // loss; OFF (0) may corrupt.
    expect(await single(database, 'PRAGMA synchronous')).toEqual({ synchronous: 2 });

    // WAL is a property of the file: any later connection (a backup, the CLI) finds it too.
    await database.close();
    database = undefined;
    const other = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
    try {
      expect(other.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      other.close();
    }
  });
});

const postgresUrl = process.env.TEST_DATABASE_URL;
const postgresSkip =
  postgresUrl !== undefined && postgresUrl !== '' ? undefined : clusterUnavailableReason();

describe.skipIf(postgresSkip !== undefined)(
  `PostgreSQL durability settings${postgresSkip ? ` (skipped: ${postgresSkip})` : ''}`,
  () => {
    let cluster: ThrowawayCluster | undefined;
    let database: Database | undefined;

    beforeAll(async () => {
      let url = postgresUrl;
      if (url === undefined || url === '') {
        cluster = await createThrowawayCluster('todo-api-pg-settings-');
        url = cluster.url();
      }
      database = createPostgresDatabase(url);
    });

    afterAll(async () => {
      await database?.close();
      await cluster?.destroy();
    });

    it('commits durably: fsync, synchronous_commit and full_page_writes are on', async () => {
      if (database === undefined) throw new Error('no database');
      // fsync=off risks unrecoverable corruption on power loss; synchronous_commit=off (or
      // local/remote_write lower down) acknowledges commits before their WAL is on disk.
      expect(await single(database, 'SHOW fsync')).toEqual({ fsync: 'on' });
      expect(await single(database, 'SHOW synchronous_commit')).toEqual({
        synchronous_commit: 'on',
      });
      // Torn pages after a crash are repaired from full-page images in the WAL.
      expect(await single(database, 'SHOW full_page_writes')).toEqual({ full_page_writes: 'on' });
    });

    it('bounds every statement with the pool’s 10 s statement_timeout', async () => {
      if (database === undefined) throw new Error('no database');
      expect(await single(database, 'SHOW statement_timeout')).toEqual({
        statement_timeout: '10s',
      });
    });
  },
);
