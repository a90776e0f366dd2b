import { Type, type Static } from 'typebox';
import { TODO_EVENT_TYPES } from '../events/todo-event-types.js';

/** The shapes of `/api/webhooks`: endpoints, their deliveries, and the test event. */

const Timestamp = Type.String({ format: 'date-time' });
const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) =>
  Type.Union([schema, Type.Null()]);

export const WEBHOOK_LIMITS = {
  /** Endpoints one owner may register. */
  endpoints: 10,
  urlLength: 2048,
  descriptionLength: 500,
} as const;

const EventTypesSchema = Type.Array(Type.Enum(TODO_EVENT_TYPES), {
  maxItems: TODO_EVENT_TYPES.length,
  uniqueItems: true,
  description: 'Event types delivered to this endpoint; empty or omitted: all of them.',
});
const UrlSchema = Type.String({
  minLength: 1,
  maxLength: WEBHOOK_LIMITS.urlLength,
  description:
    'Where deliveries are POSTed: https on port 443 (or another allowed port), a public address. Private, loopback, link-local and similar targets are refused, also when a name resolves to one.',
});
const DescriptionSchema = Type.String({ maxLength: WEBHOOK_LIMITS.descriptionLength });

export const WebhookEndpointSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    url: Type.String(),
    description: Type.Union([Type.String(), Type.Null()]),
    event_types: Type.Array(Type.Enum(TODO_EVENT_TYPES)),
    enabled: Type.Boolean(),
    disabled_reason: Type.Union([
      Type.String({
        description: 'Why the service disabled it, e.g. the receiver answered 410 Gone.',
      }),
      Type.Null(),
    ]),
    previous_secret_until: Type.Union([
      Type.String({
        format: 'date-time',
        description: 'Until then deliveries carry a signature with the previous secret too.',
      }),
      Type.Null(),
    ]),
    version: Type.Integer({ minimum: 1 }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false },
);
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;

/** Answered once, on create and on rotation: the secret is never shown again. */
export const WebhookEndpointWithSecretSchema = Type.Object(
  {
    ...WebhookEndpointSchema.properties,
    secret: Type.String({
      description: '`whsec_…`: verify deliveries with it (Standard Webhooks). Shown only now.',
    }),
  },
  { additionalProperties: false },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecretSchema>;

export const WebhookCreateSchema = Type.Object(
  {
    url: UrlSchema,
    description: Type.Optional(Nullable(DescriptionSchema)),
    event_types: Type.Optional(EventTypesSchema),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false },
);
export type WebhookCreate = Static<typeof WebhookCreateSchema>;

export const WebhookPatchSchema = Type.Object(
  {
    url: Type.Optional(UrlSchema),
    description: Type.Optional(Nullable(DescriptionSchema)),
    event_types: Type.Optional(EventTypesSchema),
    enabled: Type.Optional(
      Type.Boolean({ description: '`true` also re-enables an endpoint the service disabled.' }),
    ),
  },
  { additionalProperties: false },
);
export type WebhookPatch = Static<typeof WebhookPatchSchema>;

export const WebhookIdParamsSchema = Type.Object({
  id: Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  }),
});
export const DeliveryParamsSchema = Type.Object({
  id: WebhookIdParamsSchema.properties.id,
  delivery_id: WebhookIdParamsSchema.properties.id,
});

export const WebhookAttemptSchema = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    started_at: Timestamp,
    duration_ms: Type.Integer({ minimum: 0 }),
    status_code: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([
      Type.String({ description: 'Why there was no usable answer (timeout, refused, …).' }),
      Type.Null(),
    ]),
  },
  { additionalProperties: false },
);

export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    event_id: Type.String({ description: 'The `webhook-id` of every attempt.' }),
    event_type: Type.String(),
    status: Type.Enum(['pending', 'delivered', 'failed', 'cancelled']),
    next_attempt_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    delivered_at: Type.Union([Timestamp, Type.Null()]),
    attempts: Type.Array(WebhookAttemptSchema),
  },
  { additionalProperties: false },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const DELIVERY_LOG_LIMIT = { default: 20, max: 100 } as const;

export const DeliveryLogQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `Deliveries per page, newest first, 1–${DELIVERY_LOG_LIMIT.max} (default ${DELIVERY_LOG_LIMIT.default}); larger values are capped.`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({ minLength: 1, maxLength: 512, description: 'From `Link: rel="next"`.' }),
    ),
  },
  { additionalProperties: false },
);
