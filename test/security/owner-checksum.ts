import { createHash } from 'node:crypto';
import type { Db } from '../../src/db/database.js';

/**
 * A digest of every row that belongs to `owner`, in every table that holds owner data (todos,
 * their label index, the usage counter, stored idempotent responses, events, webhook endpoints
 * and deliveries). Equal digests before and after a request mean the request changed nothing
 * of that owner's.
 */
export async function ownerChecksum(db: Db, owner: string): Promise<string> {
  const todos = await db
    .selectFrom('todos')
    .selectAll()
    .where('owner_id', '=', owner)
    .orderBy('id')
    .execute();
  const labels = await db
    .selectFrom('todo_labels')
    .selectAll()
    .where('owner_id', '=', owner)
    .orderBy('todo_id')
    .orderBy('label_key')
    .execute();
  const usage = await db
    .selectFrom('owner_usage')
    .selectAll()
    .where('owner_id', '=', owner)
    .execute();
  const idempotency = await db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('owner_id', '=', owner)
    .orderBy('method')
    .orderBy('path')
    .orderBy('key')
    .execute();
  const events = await db
    .selectFrom('todo_events')
    .selectAll()
    .where('owner_id', '=', owner)
    .orderBy('seq')
    .execute();
  const endpoints = await db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('owner_id', '=', owner)
    .orderBy('id')
    .execute();
  const deliveries = await db
    .selectFrom('webhook_deliveries')
    .select(['id', 'endpoint_id', 'event_id', 'payload', 'created_at'])
    .where('owner_id', '=', owner)
    .orderBy('id')
    .execute();
  return createHash('sha256')
    .update(JSON.stringify({ todos, labels, usage, idempotency, events, endpoints, deliveries }))
    .digest('hex');
}
