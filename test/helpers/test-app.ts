import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { createApiKey } from '../../src/auth/api-keys.js';
import { SCOPES, type Scope } from '../../src/auth/scopes.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDatabase } from '../../src/db/create-database.js';
import type { Database } from '../../src/db/database.js';
import { migrateToLatest } from '../../src/db/migrator.js';
import { assertNoLeak } from './leak-check.js';
import { assertMatchesOpenApi, openApiDocumentOf } from './openapi-contract.js';
import { createTestDatabase, type TestDatabase } from './test-database.js';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly database: Database;
  readonly config: Config;
  /** This app's own database (SQLite file or PostgreSQL schema); dropped by `close`. */
  readonly testDatabase: TestDatabase;
  /**
   * `app.inject`, plus the contract check: every response must match the OpenAPI document's
   * schema for its operation and status (pass `contract: false` for deliberate off-spec probes).
   */
  inject(options: InjectOptions, check?: { contract?: boolean }): Promise<LightMyRequestResponse>;
  /** A new API key for `owner` (all scopes unless given), as a ready `authorization` value. */
  bearer(owner: string, scopes?: readonly Scope[]): Promise<string>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides, as the server would read them. */
  readonly env?: Readonly<Record<string, string>>;
  readonly now?: () => Date;
}

/** A fresh app over a fresh database of the test dialect: real database, no mocks. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const testDatabase = await createTestDatabase();
  const config = loadConfig({
    DATABASE_URL: testDatabase.url,
    PUBLIC_BASE_URL: 'http://todo.test',
    // Suites send thousands of requests; the rate-limit tests turn it back on.
    RATE_LIMIT_MAX: '0',
    ...options.env,
  });
  const database = createDatabase(config.databaseUrl);
  await migrateToLatest(database.db);
  const app = await buildApp({ config, database, logger: false, now: options.now });
  await app.ready();

  return {
    app,
    database,
    config,
    testDatabase,
    async inject(injectOptions, check = {}) {
      const response = await app.inject(injectOptions);
      assertNoLeak(response);
      if (check.contract !== false) {
        const { method, url } = injectOptions;
        assertMatchesOpenApi(
          openApiDocumentOf(app),
          { method, url: typeof url === 'string' ? url : undefined },
          response,
        );
      }
      return response;
    },
    async bearer(owner, scopes = SCOPES) {
      const { token } = await createApiKey(database, { ownerId: owner, scopes });
      return `Bearer ${token}`;
    },
    async close() {
      await app.close();
      await database.close();
      await testDatabase.drop();
    },
  };
}
