import { Migrator, sql, type Migration, type MigrationResult } from 'kysely';
import type { Db } from './database.js';
import { dialectOf } from './dialect.js';
import * as createTodos from './migrations/0001-create-todos.js';
import * as createIdempotencyKeys from './migrations/0002-create-idempotency-keys.js';
import * as createSettings from './migrations/0003-create-settings.js';
import * as addTodoListKeys from './migrations/0004-add-todo-list-keys.js';
import * as createTodoLabels from './migrations/0005-create-todo-labels.js';
import * as createTodoSearch from './migrations/0006-create-todo-search.js';
import * as addUrgencyDueIndexes from './migrations/0007-add-urgency-due-indexes.js';
import * as createApiKeys from './migrations/0008-create-api-keys.js';
import * as createOwnerUsage from './migrations/0009-create-owner-usage.js';
import * as addSoftDeleteAndEvents from './migrations/0010-add-soft-delete-and-events.js';
import * as createWebhooks from './migrations/0011-create-webhooks.js';
import * as addTodoSearchKey from './migrations/0012-add-todo-search-key.js';
import * as addTodoFieldsJson from './migrations/0013-add-todo-fields-json.js';

/** Every migration in order. Listed explicitly so that nothing depends on file-system layout. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001-create-todos': createTodos,
  '0002-create-idempotency-keys': createIdempotencyKeys,
  '0003-create-settings': createSettings,
  '0004-add-todo-list-keys': addTodoListKeys,
  '0005-create-todo-labels': createTodoLabels,
  '0006-create-todo-search': createTodoSearch,
  '0007-add-urgency-due-indexes': addUrgencyDueIndexes,
  '0008-create-api-keys': createApiKeys,
  '0009-create-owner-usage': createOwnerUsage,
  '0010-add-soft-delete-and-events': addSoftDeleteAndEvents,
  '0011-create-webhooks': createWebhooks,
  '0012-add-todo-search-key': addTodoSearchKey,
  '0013-add-todo-fields-json': addTodoFieldsJson,
};

/**
 * Where Kysely keeps its migration tables: on PostgreSQL, the schema the connection's
 * `search_path` resolves to. Unless told one, Kysely takes a `kysely_migration` table in any
 * schema it can see for ours, so a second service (or test run) in the same database would skip
 * creating its own and fail.
 */
export async function migrationTableSchema(db: Db): Promise<string | undefined> {
  if (dialectOf(db) !== 'postgres') return undefined;
  const { rows } = await sql<{
    schema: string | null;
  }>`select current_schema() as schema`.execute(db);
  return rows[0]?.schema ?? undefined;
}

/** Applies every pending migration; throws if one fails (it is rolled back). */
export async function migrateToLatest(db: Db): Promise<readonly MigrationResult[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
    migrationTableSchema: await migrationTableSchema(db),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error('Migration failed', { cause: error });
  return results ?? [];
}
