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
  type SqliteDialectConfig,
} from 'kysely';
import type { Database, Db, Tables } from './database.js';
import { createGroupCommit } from './group-commit.js';

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

/**
 * better-sqlite3 as Kysely sees it, with prepared statements reused by SQL text (least recently
 * used evicted). Kysely prepares every query afresh, which profiling showed to be the largest
 * single cost of a GET.
 */
function withStatementCache(sqlite: SqliteDatabase.Database): SqliteDialectConfig['database'] {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (statements.size >= STATEMENT_CACHE_SIZE) {
          const oldest = statements.keys().next();
          if (!oldest.done) statements.delete(oldest.value);
        }
      }
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

  const db: Db = new Kysely<Tables>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(sqlite) }),
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
