import type { Kysely } from 'kysely';

/**
 * Webhooks: endpoints (with their signing secrets), and one delivery per (event, endpoint),
 * written in the transaction of the change like the event itself, so that a committed event
 * is never without its deliveries. Each attempt is logged.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('owner_id', 'text', (col) => col.notNull())
    .addColumn('url', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    /** JSON array of event types; empty: every type. */
    .addColumn('event_types', 'text', (col) => col.notNull())
    .addColumn('enabled', 'integer', (col) => col.notNull())
    /** Why the service disabled it (410 Gone), if it did. */
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (col) => col.notNull())
    /** The secret before the last rotation, still signing until `previous_secret_until`. */
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', 'text')
    .addColumn('version', 'integer', (col) => col.notNull())
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_endpoints_owner')
    .on('webhook_endpoints')
    .columns(['owner_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('endpoint_id', 'text', (col) =>
      col.notNull().references('webhook_endpoints.id').onDelete('cascade'),
    )
    .addColumn('owner_id', 'text', (col) => col.notNull())
    /** The event's id: the `webhook-id` of every attempt, so receivers can de-duplicate. */
    .addColumn('event_id', 'text', (col) => col.notNull())
    .addColumn('event_type', 'text', (col) => col.notNull())
    /** The exact bytes signed and sent, fixed at enqueue time. */
    .addColumn('payload', 'text', (col) => col.notNull())
    /** pending → delivered | failed (gave up) | cancelled (endpoint disabled). */
    .addColumn('status', 'text', (col) => col.notNull())
    /** Attempts since it was (re)queued, which the retry schedule counts from `queued_at`. */
    .addColumn('attempts', 'integer', (col) => col.notNull())
    .addColumn('queued_at', 'text', (col) => col.notNull())
    .addColumn('next_attempt_at', 'text')
    /** A worker holds the delivery until then; after a crash, another takes it over. */
    .addColumn('leased_until', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('delivered_at', 'text')
    .execute();
  // The worker's queue: due pending deliveries, oldest first.
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  // The delivery log of an endpoint, newest first.
  await db.schema
    .createIndex('webhook_deliveries_endpoint')
    .on('webhook_deliveries')
    .columns(['endpoint_id', 'created_at', 'id'])
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('delivery_id', 'text', (col) =>
      col.notNull().references('webhook_deliveries.id').onDelete('cascade'),
    )
    .addColumn('attempt', 'integer', (col) => col.notNull())
    .addColumn('started_at', 'text', (col) => col.notNull())
    .addColumn('duration_ms', 'integer', (col) => col.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_id', 'attempt'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('webhook_attempts').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
}
