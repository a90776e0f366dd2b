import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Database } from '../db/database.js';
import { AppError } from '../http/app-error.js';
import { jsonResponse, problemResponses } from '../http/openapi-responses.js';

const TAGS = ['operations'];

/** Liveness (the process answers) and readiness (it can reach its database). */
export const healthRoutes: FastifyPluginAsyncTypebox<{ database: Database }> = async (
  app,
  { database },
) => {
  app.get(
    '/healthz',
    {
      config: { scope: 'public' },
      schema: {
        operationId: 'getHealth',
        summary: 'Liveness: the process is up',
        tags: TAGS,
        response: {
          200: jsonResponse(Type.Object({ status: Type.Literal('ok') }), 'The process is up.'),
          ...problemResponses(['not-acceptable']),
        },
      },
    },
    async (_request, reply) => {
      void reply.header('cache-control', 'no-store');
      return { status: 'ok' as const };
    },
  );

  app.get(
    '/readyz',
    {
      config: { scope: 'public' },
      schema: {
        operationId: 'getReadiness',
        summary: 'Readiness: the database answers',
        tags: TAGS,
        response: {
          200: jsonResponse(
            Type.Object({
              status: Type.Literal('ready'),
              checks: Type.Object({ database: Type.Literal('ok') }),
            }),
            'Ready to serve.',
          ),
          ...problemResponses(['not-acceptable']),
        },
      },
    },
    async (request, reply) => {
      void reply.header('cache-control', 'no-store');
      try {
        await database.ping();
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        throw new AppError('unavailable', 'The database is not reachable.', {
          headers: { 'retry-after': '5' },
        });
      }
      return { status: 'ready' as const, checks: { database: 'ok' as const } };
    },
  );
};
