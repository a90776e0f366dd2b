import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ownerIdOf } from '../auth/owner.js';
import type { Database } from '../db/database.js';
import { sendWithoutBody } from '../http/conditional.js';
import {
  AUTH_PROBLEMS,
  BODY_PROBLEMS,
  HEADERS,
  UNEXPECTED_BODY_PROBLEMS,
  emptyResponse,
  jsonResponse,
  problemResponses,
} from '../http/openapi-responses.js';
import { baseUrlOf } from '../http/request-context.js';
import type { RequestContext } from '../todos/todos.service.js';
import type { DeliveryWorker } from './delivery-worker.js';
import {
  DeliveryLogQuerySchema,
  DeliveryParamsSchema,
  WebhookCreateSchema,
  WebhookDeliverySchema,
  WebhookEndpointSchema,
  WebhookEndpointWithSecretSchema,
  WebhookIdParamsSchema,
  WebhookPatchSchema,
} from './webhook.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

export interface WebhooksRoutesOptions {
  readonly service: WebhooksService;
  readonly database: Database;
  readonly worker: DeliveryWorker;
  readonly publicBaseUrl: string | undefined;
}

const TAGS = ['webhooks'];
const SCOPE = 'webhooks:manage';
const NoInput = Type.Object({}, { additionalProperties: false });

/** `/api/webhooks`: endpoints, secrets, test events, the delivery log and redelivery. */
export const webhooksRoutes: FastifyPluginAsyncTypebox<WebhooksRoutesOptions> = async (
  app,
  options,
) => {
  const { service, database, worker, publicBaseUrl } = options;
  const contextOf = (request: FastifyRequest): RequestContext => ({
    ownerId: ownerIdOf(request),
    baseUrl: baseUrlOf(request, publicBaseUrl),
  });

  app.post(
    '/api/webhooks',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'createWebhook',
        summary: 'Register a webhook endpoint',
        description:
          'The answer holds the signing `secret`, shown this once. Deliveries follow Standard Webhooks (see the README, "Webhooks").',
        tags: TAGS,
        body: WebhookCreateSchema,
        response: {
          201: jsonResponse(WebhookEndpointWithSecretSchema, 'The endpoint, with its secret.', {
            Location: HEADERS.webhookLocation,
          }),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...BODY_PROBLEMS,
            'quota-exceeded',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const url = await service.checkUrl(request.body.url);
      const created = await database.writeTransaction((trx) =>
        service.create(trx, ctx, request.body, url),
      );
      return reply
        .code(201)
        .header('location', `${ctx.baseUrl}/api/webhooks/${created.id}`)
        .send(created);
    },
  );

  app.get(
    '/api/webhooks',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        tags: TAGS,
        querystring: NoInput,
        response: {
          200: jsonResponse(Type.Array(WebhookEndpointSchema), 'Every endpoint, oldest first.'),
          ...problemResponses([...AUTH_PROBLEMS, 'unknown-parameter', 'not-acceptable']),
        },
      },
    },
    async (request) => service.list(database.db, contextOf(request)),
  );

  app.get(
    '/api/webhooks/:id',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        tags: TAGS,
        params: WebhookIdParamsSchema,
        response: {
          200: jsonResponse(WebhookEndpointSchema, 'The endpoint.'),
          ...problemResponses([...AUTH_PROBLEMS, 'not-found', 'not-acceptable']),
        },
      },
    },
    async (request) => service.get(database.db, contextOf(request), request.params.id),
  );

  app.patch(
    '/api/webhooks/:id',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'updateWebhook',
        summary: 'Change a webhook endpoint',
        description:
          'Members present are changed. `enabled: false` cancels its pending deliveries; `enabled: true` also re-enables an endpoint the service disabled.',
        tags: TAGS,
        params: WebhookIdParamsSchema,
        body: WebhookPatchSchema,
        response: {
          200: jsonResponse(WebhookEndpointSchema, 'The endpoint after the change.'),
          ...problemResponses([...AUTH_PROBLEMS, ...BODY_PROBLEMS, 'not-found', 'not-acceptable']),
        },
      },
    },
    async (request) => {
      const ctx = contextOf(request);
      const { url } = request.body;
      const checked = url === undefined ? undefined : await service.checkUrl(url);
      return database.writeTransaction((trx) =>
        service.update(trx, ctx, request.params.id, request.body, checked),
      );
    },
  );

  app.delete(
    '/api/webhooks/:id',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint and its delivery log',
        tags: TAGS,
        params: WebhookIdParamsSchema,
        response: {
          204: emptyResponse('The endpoint was deleted; nothing more is sent to it.'),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...UNEXPECTED_BODY_PROBLEMS,
            'not-found',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      await database.writeTransaction((trx) => service.delete(trx, ctx, request.params.id));
      return sendWithoutBody(reply, 204);
    },
  );

  app.post(
    '/api/webhooks/:id/rotate-secret',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description:
          'Answers the new secret, shown this once. For 24 hours deliveries carry signatures with both the new and the previous secret (`previous_secret_until`), so receivers can switch at their pace.',
        tags: TAGS,
        params: WebhookIdParamsSchema,
        response: {
          200: jsonResponse(WebhookEndpointWithSecretSchema, 'The endpoint, with its new secret.'),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...UNEXPECTED_BODY_PROBLEMS,
            'not-found',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request) => {
      const ctx = contextOf(request);
      return database.writeTransaction((trx) => service.rotateSecret(trx, ctx, request.params.id));
    },
  );

  app.post(
    '/api/webhooks/:id/test',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'testWebhook',
        summary: 'Send a test event',
        description:
          'Queues a `webhook.test` event for this endpoint alone and answers its delivery; follow it in the delivery log.',
        tags: TAGS,
        params: WebhookIdParamsSchema,
        response: {
          202: jsonResponse(WebhookDeliverySchema, 'The queued delivery.'),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...UNEXPECTED_BODY_PROBLEMS,
            'not-found',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const delivery = await database.writeTransaction((trx) =>
        service.sendTest(trx, ctx, request.params.id),
      );
      worker.wake();
      return reply.code(202).send(delivery);
    },
  );

  app.get(
    '/api/webhooks/:id/deliveries',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'The delivery log of an endpoint',
        description:
          'Newest first, each delivery with its status and every attempt (status code or error, duration). Pages continue in `Link: rel="next"`.',
        tags: TAGS,
        params: WebhookIdParamsSchema,
        querystring: DeliveryLogQuerySchema,
        response: {
          200: jsonResponse(Type.Array(WebhookDeliverySchema), 'One page of deliveries.', {
            Link: HEADERS.link,
          }),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            'invalid-parameter',
            'unknown-parameter',
            'invalid-cursor',
            'not-found',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const page = await service.deliveries(database.db, ctx, request.params.id, request.query);
      if (page.nextCursor !== undefined) {
        const params = new URLSearchParams({ cursor: page.nextCursor });
        if (request.query.limit !== undefined) params.set('limit', String(request.query.limit));
        void reply.header(
          'link',
          `<${ctx.baseUrl}/api/webhooks/${request.params.id}/deliveries?${params.toString()}>; rel="next"`,
        );
      }
      return page.deliveries;
    },
  );

  app.post(
    '/api/webhooks/:id/deliveries/:delivery_id/redeliver',
    {
      config: { scope: SCOPE },
      schema: {
        operationId: 'redeliverWebhook',
        summary: 'Send a delivery again',
        description:
          'Queues the delivery again at once, with the same payload and `webhook-id`, on a fresh retry schedule — whatever became of it.',
        tags: TAGS,
        params: DeliveryParamsSchema,
        response: {
          202: jsonResponse(WebhookDeliverySchema, 'The queued delivery.'),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...UNEXPECTED_BODY_PROBLEMS,
            'not-found',
            'endpoint-disabled',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const { id, delivery_id: deliveryId } = request.params;
      const delivery = await database.writeTransaction((trx) =>
        service.redeliver(trx, ctx, id, deliveryId),
      );
      worker.wake();
      return reply.code(202).send(delivery);
    },
  );
};
