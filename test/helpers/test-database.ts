import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createDatabase } from '../../src/db/create-database.js';
import type { Db } from '../../src/db/database.js';
import type { Dialect } from '../../src/db/dialect.js';

/**
 * The database the suites run on, set per vitest project (vitest.config.ts): SQLite unless the
 * `postgres` project asked for PostgreSQL, on the server `TEST_DATABASE_URL` names.
 */
export const TEST_DIALECT: Dialect =
  process.env.TEST_DIALECT === 'postgres' ? 'postgres' : 'sqlite';

/** An empty database that belongs to one test (or test file) alone. */
export interface TestDatabase {
  readonly dialect: Dialect;
  /** The `DATABASE_URL` to open it with, in this process or a server's. */
  readonly url: string;
  /** SQLite: the folder holding the file and its WAL. PostgreSQL: none. */
  readonly directory: string | undefined;
  /** Deletes the folder, or drops the schema with everything in it. */
  drop(): Promise<void>;
}

function postgresServerUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (url === undefined || url === '') {
    throw new Error('the postgres test project needs TEST_DATABASE_URL=postgres://…');
  }
  return url;
}

/** Runs one statement on the test server over a connection of its own. */
async function onServer(statement: (db: Db) => Promise<unknown>): Promise<void> {
  const admin = createDatabase(postgresServerUrl());
  try {
    await statement(admin.db);
  } finally {
    await admin.close();
  }
}

/**
 * `url` with a server setting for every connection it opens (`-c name=value` in libpq's
 * `options` parameter), added to any it already has.
 */
export function withServerSetting(url: string, setting: string): string {
  const parsed = new URL(url);
  const params = new URLSearchParams(parsed.search);
  const options = [params.get('options'), `-c ${setting}`];
  params.set('options', options.filter((option) => option !== null).join(' '));
  // URLSearchParams writes a space as '+' (and a '+' as %2B); connection strings want %20.
  parsed.search = params.toString().replaceAll('+', '%20');
  return parsed.toString();
}

/**
 * A fresh database for the current dialect: a file in a new temporary folder (`prefix` names
 * the folder), or a new schema `t_<random>` on `TEST_DATABASE_URL`, so that test files running
 * side by side never see each other's rows.
 */
export async function createTestDatabase(prefix = 'todo-api-test-'): Promise<TestDatabase> {
  if (TEST_DIALECT === 'sqlite') {
    const directory = mkdtempSync(join(tmpdir(), prefix));
    return {
      dialect: 'sqlite',
      url: `sqlite:${join(directory, 'todos.db')}`,
      directory,
      drop: () => {
        rmSync(directory, { recursive: true, force: true });
        return Promise.resolve();
      },
    };
  }
  const server = postgresServerUrl();
  const schema = `t_${randomBytes(8).toString('hex')}`;
  await onServer((db) => sql`create schema ${sql.id(schema)}`.execute(db));
  return {
    dialect: 'postgres',
    // The service creates and finds its tables there without knowing about schemas.
    url: withServerSetting(server, `search_path=${schema}`),
    directory: undefined,
    drop: () => onServer((db) => sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db)),
  };
}

/**
 * The names of the tables the service's database holds, whatever created them, without the
 * internals of SQLite's full-text index (its segments churn on every rewrite).
 */
export async function tableNames(db: Db): Promise<string[]> {
  if (TEST_DIALECT === 'postgres') {
    const { rows } = await sql<{ name: string }>`
      select table_name as name from information_schema.tables
      where table_schema = current_schema() order by 1
    `.execute(db);
    return rows.map((row) => row.name);
  }
  const { rows } = await sql<{ name: string; sql: string | null }>`
    select name, sql from sqlite_master where type = 'table' and name not like 'sqlite_%'
    order by 1
  `.execute(db);
  const virtual = rows
    .filter((row) => /^create virtual table/i.test(row.sql ?? ''))
    .map((row) => row.name);
  return rows
    .map((row) => row.name)
    .filter((name) => !virtual.some((v) => name === v || name.startsWith(`${v}_`)));
}
