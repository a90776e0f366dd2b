import type { Kysely } from 'kysely';
import type { Dialect } from './dialect.js';
import type { ApiKeyTable } from '../auth/api-key.table.js';
import type { TodoEventTable } from '../events/todo-event.table.js';
import type { IdempotencyKeyTable } from '../idempotency/idempotency-key.table.js';
import type { OwnerUsageTable } from '../todos/owner-usage.table.js';
import type { TodoLabelTable, TodoTable } from '../todos/todo.table.js';
import type {
  WebhookAttemptTable,
  WebhookDeliveryTable,
  WebhookEndpointTable,
} from '../webhooks/webhook.tables.js';

/** Every table the service owns, as Kysely sees them. */
export interface Tables {
  todos: TodoTable;
  todo_labels: TodoLabelTable;
  idempotency_keys: IdempotencyKeyTable;
  settings: SettingTable;
  api_keys: ApiKeyTable;
  owner_usage: OwnerUsageTable;
  todo_events: TodoEventTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
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
  /**
   * Messages between the service processes sharing this database (PostgreSQL LISTEN/NOTIFY).
   * Absent on SQLite, whose one process makes every write itself.
   */
  readonly notifications?: Notifications;
  /** Cheap round trip for readiness checks. */
  readonly ping: () => Promise<void>;
  /** Checkpoints what can be checkpointed and closes every connection. */
  readonly close: () => Promise<void>;
}

/** Best-effort wake-ups between processes; whatever they announce is also read from tables. */
export interface Notifications {
  /** Sends `payload` to every listener of `channel`, in every process (this one too). */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Calls `onMessage` for every payload sent on `channel` from now on, over a connection of its
   * own, reconnecting when it drops; `onReconnect` after each reconnection, as messages may
   * have been missed meanwhile. Resolves to the function that stops listening.
   */
  listen(
    channel: string,
    onMessage: (payload: string) => void,
    onReconnect: () => void,
  ): Promise<() => Promise<void>>;
}
