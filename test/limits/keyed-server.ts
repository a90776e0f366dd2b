import { createApiKey } from '../../src/auth/api-keys.js';
import { SCOPES } from '../../src/auth/scopes.js';
import { createDatabase } from '../../src/db/create-database.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { spawnServer, type ServerProcess } from '../helpers/spawn-server.js';
import { createTestDatabase } from '../helpers/test-database.js';

/** Longest a stop may take before the child is killed: a suite must never hang on it. */
const STOP_GRACE_MS = 5000;

/**
 * A database, migrated, holding one API key per owner, that servers can be started on. The
 * test keeps its own connection to count rows behind the servers' backs.
 */
export interface KeyedStore {
  readonly databaseUrl: string;
  readonly database: Database;
  /** The ready `authorization` value of `owner`'s key. */
  bearer(owner: string): string;
  close(): Promise<void>;
}

export async function createKeyedStore(owners: readonly string[]): Promise<KeyedStore> {
  const testDatabase = await createTestDatabase('todo-api-limits-');
  const databaseUrl = testDatabase.url;
  const database = createDatabase(databaseUrl);
  const bearers = new Map<string, string>();
  try {
    await migrateToLatest(database.db);
    for (const owner of owners) {
      const { token } = await createApiKey(database, { ownerId: owner, scopes: SCOPES });
      bearers.set(owner, `Bearer ${token}`);
    }
  } catch (error) {
    await database.close();
    await testDatabase.drop();
    throw error;
  }
  return {
    databaseUrl,
    database,
    bearer(owner) {
      const value = bearers.get(owner);
      if (value === undefined) throw new Error(`no key was made for ${owner}`);
      return value;
    },
    async close() {
      await database.close();
      await testDatabase.drop();
    },
  };
}

export interface LimitsServer {
  readonly baseUrl: string;
  readonly port: number;
  output(): string;
  /** SIGTERM, SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/**
 * The real service in a child process over `store`'s database. Redis is off unless `env` names one,
 * whatever the environment of the test run says.
 */
export async function startServerOn(
  store: KeyedStore,
  env: Readonly<Record<string, string>>,
): Promise<LimitsServer> {
  const server: ServerProcess = await spawnServer({
    DATABASE_URL: store.databaseUrl,
    SHUTDOWN_TIMEOUT_MS: '2000',
    REDIS_URL: '',
    ...env,
  });
  return {
    baseUrl: server.baseUrl,
    port: Number(new URL(server.baseUrl).port),
    output: () => server.output(),
    async stop() {
      const killer = setTimeout(() => server.child.kill('SIGKILL'), STOP_GRACE_MS);
      try {
        await server.stop('SIGTERM');
      } finally {
        clearTimeout(killer);
      }
    },
  };
}
