import type { Selectable } from 'kysely';

/** A receiver of one owner's events (migration 0011). */
export interface WebhookEndpointTable {
  id: string;
  owner_id: string;
  url: string;
  description: string | null;
  /** JSON array of event types; empty: every type. */
  event_types: string;
  /** 1 or 0 (SQLite has no boolean). */
  enabled: number;
  disabled_reason: string | null;
  /** `whsec_` + base64 of 32 random bytes. */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

/** One event for one endpoint, with its retry state. */
export interface WebhookDeliveryTable {
  id: string;
  endpoint_id: string;
  owner_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  status: DeliveryStatus;
  /** Attempts since it was (re)queued at `queued_at`: the retry schedule's position. */
  attempts: number;
  queued_at: string;
  next_attempt_at: string | null;
  leased_until: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  delivered_at: string | null;
}

/** One try of a delivery: what the receiver answered, or why there was no answer. */
export interface WebhookAttemptTable {
  delivery_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status_code: number | null;
  error: string | null;
}

export type WebhookEndpointRow = Selectable<WebhookEndpointTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveryTable>;
export type WebhookAttemptRow = Selectable<WebhookAttemptTable>;
