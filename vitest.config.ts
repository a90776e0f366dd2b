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
];

/** Suites of PostgreSQL alone (`*.postgres.test.ts`), such as its query plans. */
const POSTGRES_ONLY = ['**/*.postgres.test.ts'];

/** The same files on each database; test/helpers/test-database.ts reads `TEST_DIALECT`. */
const projects: TestProjectInlineConfiguration[] = [
  {
    extends: true,
    test: {
      name: 'sqlite',
      exclude: [...configDefaults.exclude, ...POSTGRES_ONLY],
      env: { TEST_DIALECT: 'sqlite' },
    },
  },
];
if (process.env.TEST_DATABASE_URL) {
  projects.push({
    extends: true,
    test: {
      name: 'postgres',
      exclude: [...configDefaults.exclude, ...SQLITE_ONLY],
      env: { TEST_DIALECT: 'postgres' },
    },
  });
}

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    pool: 'forks',
    // Most suites wait on sockets, child processes and timers rather than on the CPU: two
    // workers halve the wall time on a 2-core machine (measured: 6 min → 3.5 min for SQLite).
    maxWorkers: 2,
    projects,
  },
});
