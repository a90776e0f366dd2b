import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * Suites about SQLite itself, with nothing to check on PostgreSQL. Every other suite runs on
 * both databases; keep this list short.
 */
const SQLITE_ONLY = [
  // The group commit is SQLite's `writeTransaction`; PostgreSQL uses plain transactions.
  'src/db/group-commit.test.ts',
  // Kills the server over a SQLite file and checks the file itself (integrity_check, WAL).
  'test/durability.kill9.test.ts',
  // EXPLAIN QUERY PLAN; test/query-plans.postgres.test.ts holds the same promise there.
  'test/query-plans.test.ts',
  // A SQLite file on a full tmpfs.
  'test/faults/sqlite-disk-full.test.ts',
  // The benchmark's SQLite seeding against the triggers it sets aside.
  'test/bench-seeding.test.ts',
];

/**
 * Suites of the HTTP layer, the rate limiter and the JWT verifier: whatever they store is only a
 * fixture, and every check (status, headers, framing, timeouts, budgets) is decided before or
 * beside the database, so a PostgreSQL run would repeat the SQLite one. They run on SQLite only.
 * A suite that checks what the database stores or answers (isolation, idempotency, paging,
 * transitions, events, webhooks, quota, error mapping, durability) stays on both.
 */
const DATABASE_AGNOSTIC = [
  // Rate-limit fields, 429s, budgets per owner and address, Redis sharing and outage fallback.
  'test/rate-limits.test.ts',
  // Request ids, Host reflection, smuggling framings and 431s: refused by the HTTP parser.
  'test/security/smuggling.test.ts',
  // Slowloris: header, body and keep-alive timeouts of the Node server (408, connection close).
  'test/security/slow-clients.test.ts',
  // Oversized bodies: 413 before any handler runs, and the server's memory while refusing.
  'test/security/bodies.test.ts',
  // Head limits and framing over raw sockets (431, 414, 400).
  'test/http-server.test.ts',
  // X-Forwarded-* from trusted proxies: rate-limit address and the url built from them.
  'test/trust-proxy.test.ts',
  // The OpenAPI document lists every registered route.
  'test/openapi.test.ts',
  // The lockfile's engines against the Node versions we support; opens no database.
  'test/dependency-engines.test.ts',
  // The limiter against in-memory and Redis stores; opens no database.
  'src/limits/rate-limiter.test.ts',
  // JWT verification against a local JWKS server; opens no database.
  'src/auth/jwt-verifier.test.ts',
  // The web app's own logic, without a browser or a server.
  'web/src/**/*.test.ts',
];

/** Suites of PostgreSQL alone (`*.postgres.test.ts`), such as its query plans. */
const POSTGRES_ONLY = ['**/*.postgres.test.ts'];

/** Every suite; each project below picks from it. */
const ALL = ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.ts'];

/** The web app and /docs in Chromium: a project of their own (below), on SQLite. */
const BROWSER = ['test/browser/**'];

/**
 * The same files on each database, but for the lists above; test/helpers/test-database.ts reads
 * `TEST_DIALECT`.
 */
const projects: TestProjectInlineConfiguration[] = [
  {
    extends: true,
    test: {
      name: 'sqlite',
      include: ALL,
      exclude: [...configDefaults.exclude, ...POSTGRES_ONLY, ...BROWSER],
      env: { TEST_DIALECT: 'sqlite' },
      sequence: { groupOrder: 0 },
    },
  },
  {
    extends: true,
    test: {
      name: 'browser',
      include: BROWSER.map((folder) => `${folder}/*.test.ts`),
      env: { TEST_DIALECT: 'sqlite' },
      // After the other projects, on an idle machine: the live-update tests assert "within a
      // second", and a page's first render is slow while other suites load both cores.
      sequence: { groupOrder: 1 },
      expect: { poll: { timeout: 5000 } },
    },
  },
];
if (process.env.TEST_DATABASE_URL) {
  projects.push({
    extends: true,
    test: {
      name: 'postgres',
      include: ALL,
      exclude: [...configDefaults.exclude, ...SQLITE_ONLY, ...DATABASE_AGNOSTIC, ...BROWSER],
      env: { TEST_DIALECT: 'postgres' },
      sequence: { groupOrder: 0 },
    },
  });
}

export default defineConfig({
  test: {
    // No `include` here: a project's own would add to it rather than replace it.
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Bundles web/dist (`/` serves it in every project) and compiles dist/ (the server that
    // child-process suites start) from the current sources.
    globalSetup: ['test/helpers/build-web-app.ts', 'test/helpers/build-service.ts'],
    // Most suites wait on sockets, child processes and timers rather than on the CPU: two
    // workers halve the wall time on a 2-core machine (measured: 6 min → 3.5 min for SQLite).
    maxWorkers: 2,
    projects,
  },
});
