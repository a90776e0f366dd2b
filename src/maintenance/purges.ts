import type { Database, Db } from '../db/database.js';
import { todoEventsRepository } from '../events/todo-events.repository.js';
import { todosRepository } from '../todos/todos.repository.js';
import { webhooksRepository } from '../webhooks/webhooks.repository.js';

/** Rows per purge transaction: short transactions, so that writers never wait long. */
const PURGE_BATCH = 1000;

const HOUR_MS = 3_600_000;
/** How long the delivery log keeps settled deliveries. */
const DELIVERY_LOG_DAYS = 30;

export interface RetentionPurgeDeps {
  readonly database: Database;
  readonly now: () => Date;
  readonly deletedRetentionDays: number;
  readonly eventRetentionHours: number;
}

export interface PurgedCounts {
  readonly todos: number;
  readonly events: number;
  readonly deliveries: number;
}

/** Runs `purgeBatch` in write transactions of its own until a batch comes back short. */
async function inBatches(
  database: Database,
  purgeBatch: (trx: Db) => Promise<number>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const purged = await database.writeTransaction(purgeBatch);
    total += purged;
    if (purged < PURGE_BATCH) return total;
  }
}

/**
 * Removes what has outlived its retention: deleted todos (no longer restorable), events (no
 * longer replayable; a client behind them gets a `reset` or 410 and lists again) and settled
 * webhook deliveries (30 days of delivery log).
 */
export async function purgeExpired(deps: RetentionPurgeDeps): Promise<PurgedCounts> {
  const { database, now } = deps;
  const at = now().getTime();
  const deletedCutoff = new Date(at - deps.deletedRetentionDays * 24 * HOUR_MS).toISOString();
  const eventCutoff = new Date(at - deps.eventRetentionHours * HOUR_MS).toISOString();
  const deliveryCutoff = new Date(at - DELIVERY_LOG_DAYS * 24 * HOUR_MS).toISOString();
  return {
    todos: await inBatches(database, (trx) =>
      todosRepository.purgeDeleted(trx, deletedCutoff, PURGE_BATCH),
    ),
    events: await inBatches(database, (trx) =>
      todoEventsRepository.purgeOlderThan(trx, eventCutoff, PURGE_BATCH),
    ),
    deliveries: await inBatches(database, (trx) =>
      webhooksRepository.purgeSettled(trx, deliveryCutoff, PURGE_BATCH),
    ),
  };
}
