import { CompiledQuery, Kysely, sql } from 'kysely';
import pg from 'pg';
import { CurrentSchemaPostgresDialect } from './current-schema-introspector.js';
import type { Database, Db, Notifications, Tables } from './database.js';

/** Fail fast while the database is unreachable: a request must not queue behind a dead pool. */
const CONNECT_TIMEOUT_MS = 2000;
/** Server-side bound on one statement; the client-side one is a little longer, for the network. */
const STATEMENT_TIMEOUT_MS = 10_000;
const QUERY_TIMEOUT_MS = 12_000;
const POOL_MAX = 10;
/** Wait before a dropped LISTEN connection is opened again. */
const LISTEN_RETRY_MS = 1000;

export interface PostgresOptions {
  /**
   * Errors of idle connections (a restarted server): the pool drops them and goes on, a LISTEN
   * connection reconnects.
   */
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

  const db: Db = new Kysely<Tables>({ dialect: new CurrentSchemaPostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    writeTransaction: (work) => db.transaction().execute(work),
    notifications: createNotifications(db, databaseUrl, options),
    ping: async () => {
      await db.executeQuery(CompiledQuery.raw('select 1'));
    },
    close: async () => {
      await db.destroy();
    },
  };
}

/** LISTEN/NOTIFY: notifications go through the pool; each listener holds a connection. */
function createNotifications(db: Db, databaseUrl: string, options: PostgresOptions): Notifications {
  return {
    async notify(channel, payload) {
      await sql`select pg_notify(${channel}, ${payload})`.execute(db);
    },

    async listen(channel, onMessage, onReconnect) {
      let live: pg.Client | undefined;
      let retry: NodeJS.Timeout | undefined;
      let stopped = false;

      const reconnectAfter = (failed: pg.Client, error?: Error) => {
        if (error) options.onPoolError?.(error);
        // Ignore the late `end` of a client already replaced, or of our own stop.
        if (stopped || retry !== undefined || (live !== undefined && live !== failed)) return;
        live = undefined;
        failed.end().catch(() => undefined);
        retry = setTimeout(() => {
          retry = undefined;
          void connect(true);
        }, LISTEN_RETRY_MS);
      };

      const connect = async (reconnecting: boolean): Promise<void> => {
        const client = new pg.Client({
          connectionString: databaseUrl,
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
          application_name: 'todo-api-listener',
          keepAlive: true,
        });
        client.on('notification', (message) => {
          if (message.channel === channel && message.payload !== undefined) {
            onMessage(message.payload);
          }
        });
        client.on('error', (error) => {
          reconnectAfter(client, error);
        });
        client.on('end', () => {
          reconnectAfter(client);
        });
        try {
          await client.connect();
          await client.query(`listen ${client.escapeIdentifier(channel)}`);
        } catch (error) {
          reconnectAfter(client, error instanceof Error ? error : new Error(String(error)));
          return;
        }
        if (stopped) {
          await client.end();
          return;
        }
        live = client;
        if (reconnecting) onReconnect();
      };

      await connect(false);
      return async () => {
        stopped = true;
        clearTimeout(retry);
        await live?.end().catch(() => undefined);
      };
    },
  };
}
