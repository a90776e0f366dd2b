import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.js';
import { nextAttemptAt, parseRetryAfter } from './retry-schedule.js';
import type { WebhookSender } from './webhook-sender.js';
import { signingSecrets, webhookHeaders } from './webhook-signature.js';
import type { WebhookDeliveryRow } from './webhook.tables.js';
import { webhooksRepository as repository } from './webhooks.repository.js';

export interface DeliveryWorkerOptions {
  readonly database: Database;
  readonly sender: WebhookSender;
  readonly log: FastifyBaseLogger;
  readonly now: () => Date;
  /** Deliveries in flight at once in this process. */
  readonly concurrency: number;
  /** … and to one endpoint. */
  readonly perEndpoint: number;
  /** How often the queue is read when nothing woke the worker. */
  readonly pollMs: number;
  /** How long a claimed delivery stays this worker's; longer than an attempt can take. */
  readonly leaseMs: number;
  /** Shrinks the retry schedule (tests). */
  readonly retryScale: number;
  readonly random?: () => number;
}

/** How long `stop` lets attempts in flight finish. */
const STOP_GRACE_MS = 2000;

export interface DeliveryWorker {
  /** New deliveries may be due. */
  wake(): void;
  /** Stops claiming and waits for the attempts in flight. */
  stop(): Promise<void>;
}

/**
 * Sends due deliveries, at least once each. A delivery is leased when claimed; a worker that
 * dies mid-attempt leaves the lease to run out, and any worker then claims it again (the
 * receiver sees the same `webhook-id` and de-duplicates). Every attempt is logged; the outcome
 * decides the rest: 2xx delivered; 410 disables the endpoint; anything else is retried on the
 * schedule (429/503 not before their `Retry-After`) until it is exhausted.
 */
export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { database, sender, log, now } = options;
  const random = options.random ?? Math.random;
  const inFlight = new Map<string, Promise<void>>();
  const perEndpoint = new Map<string, number>();
  // Changed from callbacks (attempts ending, stop) while a claim is waiting on the database.
  const state = { claiming: false, stopped: false };
  /** Wake-ups so far: a claim goes round again when one came while it ran. */
  let wakes = 0;

  async function attempt(delivery: WebhookDeliveryRow): Promise<void> {
    const endpoint = await repository.endpointById(database.db, delivery.endpoint_id);
    if (!endpoint || endpoint.enabled !== 1) {
      await database.writeTransaction((trx) =>
        repository.settle(trx, delivery.id, {
          status: 'cancelled',
          next_attempt_at: null,
          last_status_code: null,
          last_error: 'the endpoint was disabled or deleted',
          delivered_at: null,
        }),
      );
      return;
    }
    const started = now();
    const headers = webhookHeaders(
      signingSecrets(endpoint, started),
      delivery.event_id,
      started,
      delivery.payload,
    );
    const outcome = await sender.send(endpoint.url, headers, delivery.payload);
    const finished = now();
    const status = outcome.statusCode;
    const delivered = status !== undefined && status >= 200 && status < 300;
    const gone = status === 410;
    const retryAfterS =
      status === 429 || status === 503 ? parseRetryAfter(outcome.retryAfter, finished) : undefined;
    const next =
      delivered || gone
        ? undefined
        : nextAttemptAt({
            queuedAt: new Date(delivery.queued_at),
            attempts: delivery.attempts,
            now: finished,
            retryAfterS,
            scale: options.retryScale,
            random,
          });

    await database.writeTransaction(async (trx) => {
      await repository.logAttempt(trx, {
        delivery_id: delivery.id,
        started_at: started.toISOString(),
        duration_ms: outcome.durationMs,
        status_code: status ?? null,
        error: outcome.error ?? null,
      });
      await repository.settle(trx, delivery.id, {
        status: delivered ? 'delivered' : gone ? 'cancelled' : next ? 'pending' : 'failed',
        next_attempt_at: next?.toISOString() ?? null,
        last_status_code: status ?? null,
        last_error: outcome.error ?? null,
        delivered_at: delivered ? finished.toISOString() : null,
      });
      if (gone) {
        await repository.updateEndpoint(trx, endpoint.owner_id, endpoint.id, {
          enabled: 0,
          disabled_reason: 'The receiver answered 410 Gone.',
          updated_at: finished.toISOString(),
        });
        await repository.cancelPending(trx, endpoint.id);
      }
    });
    if (gone) log.warn({ endpointId: endpoint.id }, 'webhook endpoint disabled: 410 Gone');
  }

  function start(delivery: WebhookDeliveryRow): void {
    perEndpoint.set(delivery.endpoint_id, (perEndpoint.get(delivery.endpoint_id) ?? 0) + 1);
    const running = attempt(delivery)
      .catch((error: unknown) => {
        // The lease runs out and the delivery is claimed again.
        log.warn({ err: error, deliveryId: delivery.id }, 'webhook attempt could not be recorded');
      })
      .finally(() => {
        inFlight.delete(delivery.id);
        const count = (perEndpoint.get(delivery.endpoint_id) ?? 1) - 1;
        if (count === 0) perEndpoint.delete(delivery.endpoint_id);
        else perEndpoint.set(delivery.endpoint_id, count);
        wake();
      });
    inFlight.set(delivery.id, running);
  }

  async function claim(): Promise<void> {
    wakes++;
    if (state.claiming) return;
    state.claiming = true;
    try {
      let seen: number;
      do {
        seen = wakes;
        const free = options.concurrency - inFlight.size;
        if (state.stopped || free <= 0) break;
        const full = [...perEndpoint].filter(([, n]) => n >= options.perEndpoint).map(([id]) => id);
        const at = now();
        if (!(await repository.anyDue(database.db, at.toISOString()))) break;
        const claimed = await database.writeTransaction((trx) =>
          repository.claimDue(trx, {
            now: at.toISOString(),
            leasedUntil: new Date(at.getTime() + options.leaseMs).toISOString(),
            limit: free,
            perEndpoint: options.perEndpoint,
            excludeEndpoints: full,
          }),
        );
        const surplus: string[] = [];
        for (const delivery of claimed) {
          if ((perEndpoint.get(delivery.endpoint_id) ?? 0) >= options.perEndpoint) {
            surplus.push(delivery.id);
          } else {
            start(delivery);
          }
        }
        if (surplus.length > 0) {
          await database.writeTransaction(async (trx) => {
            for (const id of surplus) await repository.release(trx, id);
          });
        }
        // A full batch: more may be due at once.
        if (claimed.length === free && surplus.length === 0) wakes++;
      } while (seen !== wakes);
    } catch (error) {
      log.warn({ err: error }, 'claiming webhook deliveries failed; retrying at the next poll');
    } finally {
      state.claiming = false;
    }
  }

  const wake = () => {
    if (!state.stopped) void claim();
  };
  const poll = setInterval(wake, options.pollMs);
  poll.unref();
  wake();

  return {
    wake,
    async stop() {
      state.stopped = true;
      clearInterval(poll);
      // Attempts still running after the grace are cut off; their leases run out and another
      // worker sends them again.
      const grace = new Promise((resolve) => setTimeout(resolve, STOP_GRACE_MS).unref());
      await Promise.race([Promise.allSettled([...inFlight.values()]), grace]);
      await sender.close();
    },
  };
}
