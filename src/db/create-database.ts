import type { Database } from './database.js';
import { createPostgresDatabase, type PostgresOptions } from './postgres-database.js';
import { createSqliteDatabase } from './sqlite-database.js';

export function isPostgresUrl(databaseUrl: string): boolean {
  return /^postgres(ql)?:\/\//.test(databaseUrl);
}

/** Opens the database `DATABASE_URL` names: `sqlite:<path>` or `postgres://…`. */
export function createDatabase(databaseUrl: string, options: PostgresOptions = {}): Database {
  return isPostgresUrl(databaseUrl)
    ? createPostgresDatabase(databaseUrl, options)
    : createSqliteDatabase(databaseUrl);
}
