import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase as KyselySqliteDatabase,
  type SqliteDialectConfig,
  type SqliteStatement,
} from 'kysely';
import type { Database, Db, Tables } from './database.js';
import { createGroupCommit } from './group-commit.js';
import { SqliteLimitsPlugin } from './sqlite-limits.js';

/** How long a connection waits for another process's write lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Every transaction is a write transaction taken up front: a deferred transaction that reads
 * and then writes can fail with SQLITE_BUSY_SNAPSHOT when another process wrote in between.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #config: SqliteDialectConfig;

  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#config = config;
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#config);
  }
}

/** Prepared statements kept for reuse; the API issues a few dozen distinct SQL texts. */
const STATEMENT_CACHE_SIZE = 256;

const SCHEMA_CHANGE = /^\s*(create|alter|drop)\b/i;

/**
 * A statement as Kysely's driver uses it, whose rows are read as arrays and then named in
 * JavaScript: better-sqlite3 builds a row object key by key in C++, which measured about 1.7×
 * slower for a list page (51 rows × 16 columns: 133 µs against 78 µs).
 */
function kyselyStatement(statement: SqliteDatabase.Statement): SqliteStatement {
  if (!statement.reader) {
    return {
      reader: false,
      all: (parameters) => statement.all(...parameters),
      run: (parameters) => statement.run(...parameters),
      iterate: (parameters) => statement.iterate(...parameters),
    };
  }
  const columnNames = () => statement.columns().map((column) => column.name);
  let names = columnNames();
  const rows = statement.raw(true);
  const named = (values: unknown[]): Record<string, unknown> => {
    // SQLite re-prepares a statement whose tables changed; `select *` may then yield more columns.
    if (values.length !== names.length) names = columnNames();
    const row: Record<string, unknown> = {};
    for (let i = 0; i < names.length; i++) row[names[i] as string] = values[i];
    return row;
  };
  return {
    reader: true,
    all: (parameters) => (rows.all(...parameters) as unknown[][]).map(named),
    run: (parameters) => rows.run(...parameters),
    *iterate(parameters) {
      for (const values of rows.iterate(...parameters)) yield named(values as unknown[]);
    },
  };
}

/**
 * better-sqlite3 as Kysely sees it, with prepared statements reused by SQL text (least recently
 * used evicted). Kysely prepares every query afresh, which profiling showed to be the largest
 * single cost of a GET.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): KyselySqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      const cached = statements.get(sql);
      const statement = cached ?? kyselyStatement(sqlite.prepare(sql));
      if (cached) {
        statements.delete(sql); // set again below, as the most recently used
      } else if (statements.size >= STATEMENT_CACHE_SIZE) {
        const oldest = statements.keys().next();
        if (!oldest.done) statements.delete(oldest.value);
      }
      // A schema change may rename what a cached `select *` yields: start afresh after one.
      // Only a statement that returns no rows can be one, so reads (the hot path) skip the test.
      if (!statement.reader && SCHEMA_CHANGE.test(sql)) statements.clear();
      statements.set(sql, statement);
      return statement;
    },
  };
}

/** The file path of a `sqlite:<path>` URL, resolved against the working directory. */
export function sqlitePath(databaseUrl: string): string {
  const path = databaseUrl.slice('sqlite:'.length);
  return path === ':memory:' ? path : resolve(path);
}

/** Opens the SQLite file of a `sqlite:<path>` URL; the only module that knows better-sqlite3. */
export function createSqliteDatabase(databaseUrl: string): Database {
  const path = sqlitePath(databaseUrl);
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const sqlite = new SqliteDatabase(path, { timeout: BUSY_TIMEOUT_MS });
  // WAL lets readers proceed during a write; synchronous=FULL fsyncs the WAL on every commit,
  // so an acknowledged write survives power loss, not just a process crash.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // Each write of a group commit runs in a savepoint, whose undo records SQLite keeps in memory
  // only up to 64 KiB and then moves to a file in /var/tmp for the rest of the transaction:
  // from then on every page a write touches costs a write() (strace: 5.5× the pwrite calls).
  sqlite.pragma('temp_store = MEMORY');

  const db: Db = new Kysely<Tables>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }),
    plugins: [new SqliteLimitsPlugin()],
  });

  return {
    db,
    dialect: 'sqlite',
    writeTransaction: createGroupCommit(db),
    ping: async () => {
      await db.executeQuery(CompiledQuery.raw('select 1'));
    },
    close: async () => {
      // Folds the WAL back into the main file so a stopped service leaves one file behind. On a
      // full disk this fails, which loses nothing: the WAL stays and the next open replays it.
      try {
        if (sqlite.open) sqlite.pragma('wal_checkpoint(TRUNCATE)');
      } catch {
        // Closing must still release the file; see above.
      }
      await db.destroy();
    },
  };
}
