import type { Db } from '../db/database.js';
import { AppError, notFound, validationError } from '../http/app-error.js';
import type { TokenSealer } from '../http/sealed-token.js';
import type { RequestContext } from '../todos/todos.service.js';
import { todosRepository } from '../todos/todos.repository.js';
import {
  checkResolvedTarget,
  checkTarget,
  BlockedTargetError,
  type TargetPolicy,
} from './target-guard.js';
import { newDelivery } from './webhook-fanout.js';
import { newWebhookSecret, ROTATION_GRACE_MS } from './webhook-signature.js';
import {
  DELIVERY_LOG_LIMIT,
  WEBHOOK_LIMITS,
  type WebhookCreate,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
  type WebhookPatch,
} from './webhook.schemas.js';
import type {
  WebhookAttemptRow,
  WebhookDeliveryRow,
  WebhookEndpointRow,
} from './webhook.tables.js';
import {
  webhooksRepository as repository,
  type DeliveryLogPosition,
} from './webhooks.repository.js';

export interface WebhooksServiceDeps {
  readonly policy: TargetPolicy;
  readonly sealer: TokenSealer;
  readonly now: () => Date;
  readonly newId: () => string;
}

export interface DeliveryPage {
  readonly deliveries: WebhookDelivery[];
  readonly nextCursor: string | undefined;
}

/** The API object of an endpoint; the secrets never leave through it. */
function endpointOf(row: WebhookEndpointRow, now: Date): WebhookEndpoint {
  const until = row.previous_secret_until;
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: JSON.parse(row.event_types) as WebhookEndpoint['event_types'],
    enabled: row.enabled === 1,
    disabled_reason: row.disabled_reason,
    previous_secret_until: until !== null && until > now.toISOString() ? until : null,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function deliveryOf(
  row: WebhookDeliveryRow,
  attempts: readonly WebhookAttemptRow[],
): WebhookDelivery {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    created_at: row.created_at,
    delivered_at: row.delivered_at,
    attempts: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      started_at: attempt.started_at,
      duration_ms: attempt.duration_ms,
      status_code: attempt.status_code,
      error: attempt.error,
    })),
  };
}

function isLogPosition(value: unknown): value is { c: string; i: string; e: string } {
  if (typeof value !== 'object' || value === null) return false;
  const { c, i, e } = value as Record<string, unknown>;
  return typeof c === 'string' && typeof i === 'string' && typeof e === 'string';
}

export function createWebhooksService(deps: WebhooksServiceDeps) {
  const { policy, sealer, now, newId } = deps;

  /**
   * The normalized URL, or a 422 naming `/url` when the target is not allowed (DNS included:
   * call it before a write transaction, not inside).
   */
  async function checkUrl(raw: string): Promise<string> {
    try {
      const url = checkTarget(raw, policy);
      await checkResolvedTarget(url, policy);
      return url.href;
    } catch (error) {
      const [rule, detail] =
        error instanceof BlockedTargetError
          ? [error.rule, error.message]
          : ['unresolvable', 'does not resolve to an address'];
      throw validationError([{ pointer: '/url', code: `blocked-${rule}`, detail }]);
    }
  }

  async function load(db: Db, ctx: RequestContext, id: string, forUpdate = false) {
    const row = await repository.findEndpoint(db, ctx.ownerId, id, { forUpdate });
    if (!row) throw notFound();
    return row;
  }

  return {
    checkUrl,

    /** `url` is `body.url` as `checkUrl` returned it. */
    async create(
      db: Db,
      ctx: RequestContext,
      body: WebhookCreate,
      url: string,
    ): Promise<WebhookEndpointWithSecret> {
      // Counted under the owner's lock, so that concurrent creates cannot pass the limit.
      await todosRepository.lockOwner(db, ctx.ownerId);
      if ((await repository.countEndpoints(db, ctx.ownerId)) >= WEBHOOK_LIMITS.endpoints) {
        throw new AppError(
          'quota-exceeded',
          `You already have ${WEBHOOK_LIMITS.endpoints} webhook endpoints, the most allowed; delete one first.`,
          { extensions: { limit: WEBHOOK_LIMITS.endpoints } },
        );
      }
      const at = now();
      const secret = newWebhookSecret();
      const row = await repository.insertEndpoint(db, {
        id: newId(),
        owner_id: ctx.ownerId,
        url,
        description: body.description ?? null,
        event_types: JSON.stringify(body.event_types ?? []),
        enabled: body.enabled === false ? 0 : 1,
        disabled_reason: null,
        secret,
        previous_secret: null,
        previous_secret_until: null,
        version: 1,
        created_at: at.toISOString(),
        updated_at: at.toISOString(),
      });
      return { ...endpointOf(row, at), secret };
    },

    async list(db: Db, ctx: RequestContext): Promise<WebhookEndpoint[]> {
      const at = now();
      return (await repository.listEndpoints(db, ctx.ownerId)).map((row) => endpointOf(row, at));
    },

    async get(db: Db, ctx: RequestContext, id: string): Promise<WebhookEndpoint> {
      return endpointOf(await load(db, ctx, id), now());
    },

    /** `url` is `patch.url` as `checkUrl` returned it, if the patch has one. */
    async update(
      db: Db,
      ctx: RequestContext,
      id: string,
      patch: WebhookPatch,
      url: string | undefined,
    ): Promise<WebhookEndpoint> {
      await load(db, ctx, id, true);
      const at = now();
      const row = await repository.updateEndpoint(db, ctx.ownerId, id, {
        ...(url === undefined ? {} : { url }),
        ...(patch.description === undefined ? {} : { description: patch.description }),
        ...(patch.event_types === undefined
          ? {}
          : { event_types: JSON.stringify(patch.event_types) }),
        ...(patch.enabled === undefined
          ? {}
          : { enabled: patch.enabled ? 1 : 0, disabled_reason: null }),
        updated_at: at.toISOString(),
      });
      if (patch.enabled === false) await repository.cancelPending(db, id);
      return endpointOf(row, at);
    },

    async delete(db: Db, ctx: RequestContext, id: string): Promise<void> {
      if (!(await repository.deleteEndpoint(db, ctx.ownerId, id))) throw notFound();
    },

    /** A new secret; the old one keeps signing next to it for 24 hours. */
    async rotateSecret(
      db: Db,
      ctx: RequestContext,
      id: string,
    ): Promise<WebhookEndpointWithSecret> {
      const current = await load(db, ctx, id, true);
      const at = now();
      const secret = newWebhookSecret();
      const row = await repository.updateEndpoint(db, ctx.ownerId, id, {
        secret,
        previous_secret: current.secret,
        previous_secret_until: new Date(at.getTime() + ROTATION_GRACE_MS).toISOString(),
        updated_at: at.toISOString(),
      });
      return { ...endpointOf(row, at), secret };
    },

    /** Queues a `webhook.test` event for this endpoint alone; answers the delivery. */
    async sendTest(db: Db, ctx: RequestContext, id: string): Promise<WebhookDelivery> {
      const endpoint = await load(db, ctx, id);
      const at = now().toISOString();
      const eventId = `evt_${newId()}`;
      const payload = JSON.stringify({
        id: eventId,
        type: 'webhook.test',
        timestamp: at,
        data: { endpoint_id: endpoint.id, message: 'A test delivery from todo-api.' },
      });
      const row = newDelivery(
        endpoint.id,
        ctx.ownerId,
        eventId,
        'webhook.test',
        payload,
        newId,
        at,
      );
      await repository.insertDeliveries(db, [row]);
      return deliveryOf(row, []);
    },

    async deliveries(
      db: Db,
      ctx: RequestContext,
      id: string,
      query: { readonly limit?: number | undefined; readonly cursor?: string | undefined },
    ): Promise<DeliveryPage> {
      await load(db, ctx, id);
      let position: DeliveryLogPosition | undefined;
      if (query.cursor !== undefined) {
        const opened = sealer.open(query.cursor);
        if (!opened.ok || !isLogPosition(opened.payload) || opened.payload.e !== id) {
          throw new AppError(
            'invalid-cursor',
            'The cursor is not one this service issued for this log.',
            {
              errors: [{ pointer: 'cursor', code: 'invalid-cursor', detail: 'is not valid here' }],
            },
          );
        }
        position = { createdAt: opened.payload.c, id: opened.payload.i };
      }
      const limit = Math.min(query.limit ?? DELIVERY_LOG_LIMIT.default, DELIVERY_LOG_LIMIT.max);
      const rows = await repository.deliveryLog(db, id, position, limit + 1);
      const page = rows.slice(0, limit);
      const attempts = await repository.attemptsOf(
        db,
        page.map((row) => row.id),
      );
      const last = page.at(-1);
      return {
        deliveries: page.map((row) =>
          deliveryOf(
            row,
            attempts.filter((attempt) => attempt.delivery_id === row.id),
          ),
        ),
        nextCursor:
          rows.length > limit && last
            ? sealer.seal({ c: last.created_at, i: last.id, e: id })
            : undefined,
      };
    },

    /** Sends a delivery again, whatever became of it, on a fresh retry schedule. */
    async redeliver(
      db: Db,
      ctx: RequestContext,
      id: string,
      deliveryId: string,
    ): Promise<WebhookDelivery> {
      const endpoint = await load(db, ctx, id, true);
      if (!(await repository.findDelivery(db, endpoint.id, deliveryId))) throw notFound();
      if (endpoint.enabled !== 1) {
        throw new AppError('endpoint-disabled', 'The endpoint is disabled; enable it first.');
      }
      const row = await repository.requeue(db, deliveryId, now().toISOString());
      return deliveryOf(row, await repository.attemptsOf(db, [row.id]));
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
