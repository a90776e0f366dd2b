import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import packageJson from '../../package.json' with { type: 'json' };
import { declarePublicRoutes } from '../auth/route-scopes.js';
import { problemResponses } from '../http/openapi-responses.js';

/**
 * The OpenAPI 3.1 document is generated from the same route schemas that validate requests and
 * serialize responses, so it cannot drift from the behaviour. `/docs` serves Swagger UI from
 * the npm package: no CDN, works offline.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'todo-api',
        version: packageJson.version,
        description:
          'A to-do REST API. Errors are RFC 9457 problem documents (`application/problem+json`) whose `type` is documented at `/problems/{code}`. Writes accept `Idempotency-Key`; single todos carry a strong `ETag` for `If-Match` / `If-None-Match`. Every request may send `X-Request-Id` (≤ 128 characters of `[A-Za-z0-9._:@/+=-]`; otherwise one is generated); every response echoes it. Limits: body 64 KiB (413), URL 8 KiB (414), request head 16 KiB (431).',
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description:
              'An API key (`tdk_…`, made with `npm run tokens -- create`) or, when the server is configured with a JWKS, an OIDC access token. Scopes: `todos:read`, `todos:write`, `webhooks:manage`; each operation lists the one it needs. A server bound to loopback with the default AUTH_MODE also serves requests without a token, as one anonymous owner.',
          },
        },
      },
      tags: [
        { name: 'todos', description: 'The todo resource.' },
        {
          name: 'events',
          description:
            'What changed: the live event stream and delta sync (see the README, "Events").',
        },
        {
          name: 'webhooks',
          description: 'Endpoints that receive the events, signed per Standard Webhooks.',
        },
        { name: 'operations', description: 'Health and readiness probes.' },
        { name: 'problems', description: 'Documentation of problem codes.' },
        { name: 'meta', description: 'This document.' },
      ],
    },
    // The security of each operation comes from the scope its route declares.
    transform: ({ schema, url, route }) => {
      const scope = route.config?.scope;
      const security = scope === undefined || scope === 'public' ? [] : [{ bearer: [scope] }];
      return { schema: { ...schema, security }, url };
    },
  });

  await app.register(async (docs) => {
    declarePublicRoutes(docs);
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true },
      staticCSP: true,
    });
  });
}

/** `GET /api/openapi.json`: the generated document. Registered after every other route. */
export async function openApiRoute(app: FastifyInstance): Promise<void> {
  app.get(
    '/api/openapi.json',
    {
      config: { scope: 'public' },
      schema: {
        operationId: 'getOpenApi',
        summary: 'This OpenAPI 3.1 document',
        tags: ['meta'],
        response: {
          200: {
            description: 'OpenAPI 3.1',
            content: {
              'application/json': { schema: Type.Object({}, { additionalProperties: true }) },
            },
          },
          ...problemResponses(['not-acceptable']),
        },
      },
    },
    async (_request, reply) => reply.type('application/json').send(JSON.stringify(app.swagger())),
  );
}
