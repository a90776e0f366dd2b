import { sql, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import { preparedQuery } from '../db/prepared-query.js';
import { dialectOf } from '../db/dialect.js';
import type {
  WebhookAttemptRow,
  WebhookAttemptTable,
  WebhookDeliveryRow,
  WebhookDeliveryTable,
  WebhookEndpointRow,
  WebhookEndpointTable,
} from './webhook.tables.js';

/** Rows per INSERT, far below SQLite's parameter limit. */
const INSERT_CHUNK = 500;
/** Due deliveries a claim considers, oldest first. */
const CLAIM_WINDOW = 500;

type EndpointChanges = Partial<
  Pick<
    WebhookEndpointTable,
    | 'url'
    | 'description'
    | 'event_types'
    | 'enabled'
    | 'disabled_reason'
    | 'secret'
    | 'previous_secret'
    | 'previous_secret_until'
    | 'updated_at'
  >
>;

/** Position in a delivery log: the last row's `created_at` and `id` (newest first). */
export interface DeliveryLogPosition {
  readonly createdAt: string;
  readonly id: string;
}

/** All SQL over webhook endpoints, deliveries and attempts. */
export const webhooksRepository = {
  insertEndpoint(db: Db, row: WebhookEndpointTable): Promise<WebhookEndpointRow> {
    return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
  },

  listEndpoints(db: Db, ownerId: string): Promise<WebhookEndpointRow[]> {
    return db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
  },

  async countEndpoints(db: Db, ownerId: string): Promise<number> {
    const row = await db
      .selectFrom('webhook_endpoints')
      .select((eb) => eb.fn.countAll<number | bigint>().as('n'))
      .where('owner_id', '=', ownerId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  },

  /** The owner's endpoint; `forUpdate` locks it on PostgreSQL for the rest of the transaction. */
  findEndpoint(
    db: Db,
    ownerId: string,
    id: string,
    options: { readonly forUpdate?: boolean } = {},
  ): Promise<WebhookEndpointRow | undefined> {
    const query = db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('id', '=', id);
    const lock = options.forUpdate === true && dialectOf(db) === 'postgres';
    return (lock ? query.forUpdate() : query).executeTakeFirst();
  },

  /** The endpoint a delivery goes to, whoever owns it (the worker's view). */
  endpointById(db: Db, id: string): Promise<WebhookEndpointRow | undefined> {
    return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
  },

  updateEndpoint(
    db: Db,
    ownerId: string,
    id: string,
    changes: EndpointChanges,
  ): Promise<WebhookEndpointRow> {
    return db
      .updateTable('webhook_endpoints')
      .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
      .where('owner_id', '=', ownerId)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },

  async deleteEndpoint(db: Db, ownerId: string, id: string): Promise<boolean> {
    const result = await db
      .deleteFrom('webhook_endpoints')
      .where('owner_id', '=', ownerId)
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numDeletedRows > 0n;
  },

  /** The owner's enabled endpoints: where a new event goes. Every write asks, hence compiled once. */
  enabledEndpoints: preparedQuery(1, (db: Db, ownerId: string) =>
    db
      .selectFrom('webhook_endpoints')
      .select(['id', 'event_types'])
      .where('owner_id', '=', ownerId)
      .where('enabled', '=', 1),
  ),

  async insertDeliveries(db: Db, rows: readonly WebhookDeliveryTable[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await db
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
    }
  },

  findDelivery(db: Db, endpointId: string, id: string): Promise<WebhookDeliveryRow | undefined> {
    return db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /** An endpoint's deliveries, newest first, after `position`. */
  deliveryLog(
    db: Db,
    endpointId: string,
    position: DeliveryLogPosition | undefined,
    limit: number,
  ): Promise<WebhookDeliveryRow[]> {
    let query = db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('endpoint_id', '=', endpointId);
    if (position) {
      query = query.where(sql<SqlBool>`(created_at, id) < (${position.createdAt}, ${position.id})`);
    }
    return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  },

  attemptsOf(db: Db, deliveryIds: readonly string[]): Promise<WebhookAttemptRow[]> {
    if (deliveryIds.length === 0) return Promise.resolve([]);
    return db
      .selectFrom('webhook_attempts')
      .selectAll()
      .where('delivery_id', 'in', deliveryIds)
      .orderBy('delivery_id')
      .orderBy('attempt')
      .execute();
  },

  /** Whether any delivery is due: a read, so that an idle poll takes no write lock. */
  async anyDue(db: Db, now: string): Promise<boolean> {
    const row = await db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', now)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  },

  /**
   * Leases up to `limit` due deliveries (pending, due, not leased by a live worker), oldest
   * first, at most `perEndpoint` of any one endpoint, counting the attempt. Only the oldest
   * `CLAIM_WINDOW` due deliveries are looked at, so a long queue costs a claim nothing more.
   * PostgreSQL skips rows another instance is claiming; SQLite serializes the claim in its
   * write transaction.
   */
  async claimDue(
    db: Db,
    options: {
      readonly now: string;
      readonly leasedUntil: string;
      readonly limit: number;
      readonly perEndpoint: number;
      readonly excludeEndpoints: readonly string[];
    },
  ): Promise<WebhookDeliveryRow[]> {
    if (options.limit <= 0) return [];
    let window = db
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'next_attempt_at'])
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', options.now)
      .where((eb) => eb.or([eb('leased_until', 'is', null), eb('leased_until', '<=', options.now)]))
      .orderBy('next_attempt_at')
      .limit(CLAIM_WINDOW);
    if (options.excludeEndpoints.length > 0) {
      window = window.where('endpoint_id', 'not in', options.excludeEndpoints);
    }
    const ranked = db
      .selectFrom(window.as('due'))
      .select([
        'due.id',
        'due.next_attempt_at',
        sql<number>`row_number() over (partition by due.endpoint_id order by due.next_attempt_at)`.as(
          'rank',
        ),
      ]);
    const chosen = db
      .selectFrom(ranked.as('ranked'))
      .select('ranked.id')
      .where('ranked.rank', '<=', options.perEndpoint)
      .orderBy('ranked.next_attempt_at')
      .limit(options.limit);
    // Row locks cannot sit next to a window function: they go on an outer select.
    const claimable =
      dialectOf(db) === 'postgres'
        ? db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('id', 'in', chosen)
            .forUpdate()
            .skipLocked()
        : chosen;
    return db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ leased_until: options.leasedUntil, attempts: eb('attempts', '+', 1) }))
      .where('id', 'in', claimable)
      .returningAll()
      .execute();
  },

  /** Gives a claimed delivery back without counting the attempt. */
  async release(db: Db, id: string): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ leased_until: null, attempts: eb('attempts', '-', 1) }))
      .where('id', '=', id)
      .execute();
  },

  async settle(
    db: Db,
    id: string,
    changes: Pick<
      WebhookDeliveryTable,
      'status' | 'next_attempt_at' | 'last_status_code' | 'last_error' | 'delivered_at'
    >,
  ): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ ...changes, leased_until: null })
      .where('id', '=', id)
      .execute();
  },

  /** Logs an attempt, numbered after the delivery's earlier ones (redeliveries included). */
  async logAttempt(db: Db, attempt: Omit<WebhookAttemptTable, 'attempt'>): Promise<void> {
    const last = await db
      .selectFrom('webhook_attempts')
      .select((eb) => eb.fn.max('attempt').as('n'))
      .where('delivery_id', '=', attempt.delivery_id)
      .executeTakeFirst();
    await db
      .insertInto('webhook_attempts')
      .values({ ...attempt, attempt: (last?.n ?? 0) + 1 })
      .execute();
  },

  /** Cancels an endpoint's pending deliveries (it was disabled). */
  async cancelPending(db: Db, endpointId: string): Promise<void> {
    await db
      .updateTable('webhook_deliveries')
      .set({ status: 'cancelled', next_attempt_at: null, leased_until: null })
      .where('endpoint_id', '=', endpointId)
      .where('status', '=', 'pending')
      .execute();
  },

  /** Deletes up to `batch` settled deliveries (and their attempts) created before `cutoff`. */
  async purgeSettled(db: Db, cutoff: string, batch: number): Promise<number> {
    const result = await db
      .deleteFrom('webhook_deliveries')
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('status', '!=', 'pending')
          .where('created_at', '<', cutoff)
          .limit(batch),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },

  /** Queues a delivery again, from now, with a fresh schedule. */
  requeue(db: Db, id: string, now: string): Promise<WebhookDeliveryRow> {
    return db
      .updateTable('webhook_deliveries')
      .set({
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        queued_at: now,
        leased_until: null,
        delivered_at: null,
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
  },
};
