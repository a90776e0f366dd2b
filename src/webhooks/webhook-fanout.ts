import type { Db } from '../db/database.js';
import type { TodoEventRow } from '../events/todo-event.table.js';
import { todoEventOf } from '../events/todo-events.js';
import type { WebhookDeliveryTable } from './webhook.tables.js';
import { webhooksRepository as repository } from './webhooks.repository.js';

/**
 * Queues one delivery per (event, subscribed endpoint), in the transaction that wrote the
 * events: a committed event always has its deliveries, and the payload — the exact bytes every
 * attempt signs and sends — is fixed now, with the todo's `url` as the writer reached it.
 */
export async function enqueueDeliveries(
  db: Db,
  ownerId: string,
  events: readonly TodoEventRow[],
  baseUrl: string,
  newId: () => string,
  at: string,
): Promise<void> {
  if (events.length === 0) return;
  const endpoints = await repository.enabledEndpoints(db, ownerId);
  if (endpoints.length === 0) return;
  const subscriptions = endpoints.map((endpoint) => ({
    id: endpoint.id,
    types: JSON.parse(endpoint.event_types) as string[],
  }));
  const rows: WebhookDeliveryTable[] = [];
  for (const event of events) {
    const payload = JSON.stringify(todoEventOf(event, baseUrl));
    for (const endpoint of subscriptions) {
      if (endpoint.types.length > 0 && !endpoint.types.includes(event.type)) continue;
      rows.push(newDelivery(endpoint.id, ownerId, event.id, event.type, payload, newId, at));
    }
  }
  await repository.insertDeliveries(db, rows);
}

/** A delivery due at once. */
export function newDelivery(
  endpointId: string,
  ownerId: string,
  eventId: string,
  eventType: string,
  payload: string,
  newId: () => string,
  at: string,
): WebhookDeliveryTable {
  return {
    id: newId(),
    endpoint_id: endpointId,
    owner_id: ownerId,
    event_id: eventId,
    event_type: eventType,
    payload,
    status: 'pending',
    attempts: 0,
    queued_at: at,
    next_attempt_at: at,
    leased_until: null,
    last_status_code: null,
    last_error: null,
    created_at: at,
    delivered_at: null,
  };
}
