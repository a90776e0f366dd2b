import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import type { ApiKeyTable } from '../auth/api-key.table.js';
import type { IdempotencyKeyTable } from '../idempotency/idempotency-key.table.js';
import type { OwnerUsageTable } from '../todos/owner-usage.table.js';
import type { TodoLabelTable, TodoTable } from '../todos/todo.table.js';

/** Every table the service owns, as Kysely sees them. */
export interface Tables {
  todos: TodoTable;
  todo_labels: TodoLabelTable;
  idempotency_keys: IdempotencyKeyTable;
  settings: SettingTable;
  api_keys: ApiKeyTable;
  owner_usage: OwnerUsageTable;
}

/** Small key/value store for values generated once per database (e.g. the cursor secret). */
export interface SettingTable {
  key: string;
  value: string;
}

export type Db = Kysely<Tables>;

/** An open database with what the service needs to run and stop it. */
export interface Database {
  readonly db: Db;
  readonly dialect: Dialect;
  /**
   * Runs `work` in a write transaction taken up front (`BEGIN IMMEDIATE` on SQLite) and settles
   * once its outcome is durable. Writes that arrive together share one commit (group commit),
   * each in its own savepoint. `work` must use only the `trx` it is given: the connection is
   * held for the batch, and a nested `writeTransaction` would wait for a batch that waits for it.
   */
  readonly writeTransaction: <T>(work: (trx: Db) => Promise<T>) => Promise<T>;
  /** Cheap round trip for readiness checks. */
  readonly ping: () => Promise<void>;
  /** Checkpoints what can be checkpointed and closes every connection. */
  readonly close: () => Promise<void>;
}
