/**
 * The databases a benchmark run can measure the service on, behind one interface so that the
 * runner never asks which one it has: a SQLite file in the run's temporary directory, or a fresh
 * schema on a PostgreSQL server. Each knows how to seed itself, add and remove rows while the
 * service runs (the DELETE scenario's pool), and read back what the report needs.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type { TodoRow } from '../src/todos/todo.table.js';
import { todoRowToTodo } from '../src/todos/todos.service.js';
import {
  createPostgresSchema,
  deleteRowsPostgres,
  insertRowsPostgres,
  lastMigrationPostgres,
  sampleTodoJsonPostgres,
  seedPostgres,
} from './seed-postgres.js';
import { deleteRows, insertRows, seedDatabase, type SeedPath, type SeedResult } from './seed.js';

export type DatabaseKind = 'sqlite' | 'postgres';

export const DATABASE_TITLES: Readonly<Record<DatabaseKind, string>> = {
  sqlite: 'SQLite',
  postgres: 'PostgreSQL',
};

export interface BenchDatabase {
  readonly kind: DatabaseKind;
  /** The service's `DATABASE_URL`. */
  readonly url: string;
  /** Where it lives, for the log: a file or a schema. */
  readonly location: string;
  /** Migrates, checks parity and seeds `rows` todos created over the year before `end`. */
  seed(rows: number, end: number, onProgress?: (done: number) => void): Promise<SeedResult>;
  /** Adds generated todos while the service runs; returns their ids. */
  insertRows(options: {
    count: number;
    seed: number;
    firstPosition: number;
    end: number;
    path: SeedPath;
  }): Promise<string[]>;
  deleteRows(ids: readonly string[]): Promise<void>;
  /** The last migration applied. */
  lastMigration(): Promise<string>;
  /** The API JSON of todo `id`, through the service's own mapper (the ceiling's answer). */
  todoJson(id: string): Promise<string>;
  /** Removes the file or drops the schema. */
  drop(): Promise<void>;
}

/** A SQLite file `name` in `directory` (created by `seed`). */
export function sqliteBenchDatabase(directory: string, name: string): BenchDatabase {
  const path = join(directory, `${name}.db`);
  const readonly = <T>(read: (sqlite: SqliteDatabase.Database) => T): T => {
    const sqlite = new SqliteDatabase(path, { readonly: true });
    try {
      return read(sqlite);
    } finally {
      sqlite.close();
    }
  };
  return {
    kind: 'sqlite',
    url: `sqlite:${path}`,
    location: path,
    seed: (rows, end, onProgress) => seedDatabase(path, rows, onProgress, end),
    insertRows: (options) => insertRows(path, options),
    deleteRows: (ids) => {
      deleteRows(path, ids);
      return Promise.resolve();
    },
    lastMigration: () =>
      Promise.resolve(
        readonly((sqlite) => {
          try {
            const row = sqlite
              .prepare('select name from kysely_migration order by name desc limit 1')
              .get() as { name: string } | undefined;
            return row?.name ?? 'none';
          } catch {
            return 'unknown';
          }
        }),
      ),
    todoJson: (id) =>
      Promise.resolve(
        readonly((sqlite) => {
          const row = sqlite.prepare('select * from todos where id = ?').get(id) as
            TodoRow | undefined;
          if (!row) throw new Error(`seeded todo ${id} not found`);
          return JSON.stringify(todoRowToTodo(row, 'http://127.0.0.1'));
        }),
      ),
    drop: () => {
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      return Promise.resolve();
    },
  };
}

/** A new, empty schema `bench_<random>` on the PostgreSQL server `serverUrl`. */
export async function postgresBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const schema = await createPostgresSchema(serverUrl);
  const { url } = schema;
  return {
    kind: 'postgres',
    url,
    location: `schema ${schema.schema}`,
    seed: (rows, end, onProgress) => seedPostgres(url, rows, onProgress, end),
    insertRows: (options) => insertRowsPostgres(url, options),
    deleteRows: (ids) => deleteRowsPostgres(url, ids),
    lastMigration: () => lastMigrationPostgres(url),
    todoJson: (id) => sampleTodoJsonPostgres(url, id),
    drop: () => schema.drop(),
  };
}
