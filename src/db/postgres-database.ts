import { CompiledQuery, Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database, Db, Tables } from './database.js';

/** Fail fast while the database is unreachable: a request must not queue behind a dead pool. */
const CONNECT_TIMEOUT_MS = 2000;
/** Server-side bound on one statement; the client-side one is a little longer, for the network. */
const STATEMENT_TIMEOUT_MS = 10_000;
const QUERY_TIMEOUT_MS = 12_000;
const POOL_MAX = 10;

export interface PostgresOptions {
  /** Errors of idle pooled connections (a restarted server): the pool drops them and goes on. */
  readonly onPoolError?: (error: Error) => void;
}

/**
 * Opens a pool on a `postgres://` URL; the only module that knows `pg`. Writes run in ordinary
 * transactions: PostgreSQL already shares WAL flushes between concurrent commits, which is what
 * the SQLite side's group commit does by hand.
 */
export function createPostgresDatabase(
  databaseUrl: string,
  options: PostgresOptions = {},
): Database {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: POOL_MAX,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    statement_timeout: STATEMENT_TIMEOUT_MS,
    query_timeout: QUERY_TIMEOUT_MS,
    application_name: 'todo-api',
  });
  // Without a listener, an idle client's error (e.g. 57P01 on a server restart) kills the process.
  pool.on('error', (error) => options.onPoolError?.(error));
  // The pool listens only while a client is idle; a client in use whose socket dies (PostgreSQL
  // crashed mid-query) emits too. Its query fails on its own (→ 503); the pool drops the client
  // when it is released.
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onPoolError?.(error));
  });

  const db: Db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    writeTransaction: (work) => db.transaction().execute(work),
    ping: async () => {
      await db.executeQuery(CompiledQuery.raw('select 1'));
    },
    close: async () => {
      await db.destroy();
    },
  };
}
