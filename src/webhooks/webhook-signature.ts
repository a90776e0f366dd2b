import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/**
 * Standard Webhooks signing (RELIABILITY.md §8.1), through the reference library: `webhook-id`
 * stable across retries, `webhook-timestamp` fresh per attempt, `webhook-signature` the HMAC of
 * `{id}.{timestamp}.{body}` per secret.
 */

/** How long the secret before a rotation keeps signing next to the new one. */
export const ROTATION_GRACE_MS = 24 * 3_600_000;

/** `whsec_` + base64 of 32 random bytes: the format the reference library reads. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export interface EndpointSecrets {
  readonly secret: string;
  readonly previous_secret: string | null;
  readonly previous_secret_until: string | null;
}

/** The secrets that sign at `now`: the current one, and the previous one during its grace. */
export function signingSecrets(endpoint: EndpointSecrets, now: Date): string[] {
  const { previous_secret: previous, previous_secret_until: until } = endpoint;
  const inGrace = previous !== null && until !== null && now.toISOString() < until;
  return inGrace ? [endpoint.secret, previous] : [endpoint.secret];
}

/** The three Standard Webhooks headers of one attempt. */
export function webhookHeaders(
  secrets: readonly string[],
  messageId: string,
  at: Date,
  payload: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets
      .map((secret) => new Webhook(secret).sign(messageId, at, payload))
      .join(' '),
  };
}
