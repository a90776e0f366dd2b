import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ownerIdOf } from '../auth/owner.js';
import type { Database } from '../db/database.js';
import { AppError } from '../http/app-error.js';
import { assertAccepts } from '../http/content-negotiation.js';
import { AUTH_PROBLEMS, jsonResponse, problemResponses } from '../http/openapi-responses.js';
import { baseUrlOf } from '../http/request-context.js';
import type { DeltaSync } from './delta-sync.js';
import type { EventBus } from './event-bus.js';
import { streamEvents, type EventStreamSettings } from './event-stream.js';
import { TODO_EVENT_TYPES } from './todo-event-types.js';
import { todoEventsRepository as events } from './todo-events.repository.js';
import { ChangesPageSchema, ChangesQuerySchema } from './todo-event.schemas.js';

export interface ChangesRoutesOptions {
  readonly deltaSync: DeltaSync;
  readonly database: Database;
  readonly publicBaseUrl: string | undefined;
}

export interface EventStreamRoutesOptions {
  readonly bus: EventBus;
  readonly database: Database;
  readonly publicBaseUrl: string | undefined;
  readonly maxStreamsPerOwner: number;
  readonly stream: EventStreamSettings;
}

const TAGS = ['events'];

const EVENT_STREAM = 'text/event-stream';

/** `GET /api/todos/events`: the live stream (`text/event-stream`, not JSON). */
export const eventStreamRoutes: FastifyPluginAsyncTypebox<EventStreamRoutesOptions> = async (
  app,
  options,
) => {
  const { bus, database, publicBaseUrl, maxStreamsPerOwner } = options;
  app.addHook('onRequest', async (request) => {
    assertAccepts(request.headers.accept, [EVENT_STREAM]);
  });

  app.get(
    '/api/todos/events',
    {
      // A HEAD would hold the connection open with nothing to send.
      exposeHeadRoute: false,
      config: { scope: 'todos:read' },
      schema: {
        operationId: 'streamTodoEvents',
        summary: 'Follow changes live (Server-Sent Events)',
        description: `A \`text/event-stream\` of the caller's events as they commit: each has \`id:\` = its \`sequence\`, \`event:\` = its type (${TODO_EVENT_TYPES.join(', ')}) and \`data:\` = the event as JSON (\`TodoEvent\`). Reconnect with \`Last-Event-ID\` (EventSource does) to get every event since, without gaps or duplicates, for as long as events are kept (\`EVENT_RETENTION_HOURS\`, 24 by default); from an older one the stream starts with \`event: reset\`: list the todos again. Comment lines (\`: heartbeat\`) keep it open through proxies. The token goes in \`Authorization\` (use a fetch-based EventSource; tokens in the URL are refused). At most \`SSE_MAX_STREAMS\` streams per owner and instance; a client that stops reading is disconnected.`,
        tags: TAGS,
        querystring: Type.Object({}, { additionalProperties: false }),
        headers: Type.Object({
          'last-event-id': Type.Optional(
            Type.String({
              pattern: '^[0-9]{1,15}$',
              description: 'The `id:` of the last event received: resume after it.',
            }),
          ),
        }),
        response: {
          200: {
            description: 'The event stream; it stays open.',
            content: { [EVENT_STREAM]: { schema: Type.String() } },
          },
          ...problemResponses([
            ...AUTH_PROBLEMS,
            'invalid-parameter',
            'unknown-parameter',
            'not-acceptable',
            'too-many-streams',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ownerId = ownerIdOf(request);
      if (bus.streamsOf(ownerId) >= maxStreamsPerOwner) {
        throw new AppError(
          'too-many-streams',
          `You already hold ${maxStreamsPerOwner} event streams here; close one first.`,
          { headers: { 'retry-after': '5' } },
        );
      }
      const last = await events.lastSeq(database.db, ownerId);
      const given = request.headers['last-event-id'];
      const seen = given === undefined ? last : Number(given);
      const resumable = await events.keptAfter(database.db, ownerId, seen, last);
      streamEvents(reply, {
        db: database.db,
        bus,
        ownerId,
        baseUrl: baseUrlOf(request, publicBaseUrl),
        after: resumable ? seen : last,
        reset: !resumable,
        settings: options.stream,
        log: request.log,
      });
      return reply;
    },
  );
};

/** Delta sync (`GET /api/todos/changes`), JSON. */
export const changesRoutes: FastifyPluginAsyncTypebox<ChangesRoutesOptions> = async (
  app,
  options,
) => {
  const { deltaSync, database, publicBaseUrl } = options;

  app.get(
    '/api/todos/changes',
    {
      config: { scope: 'todos:read' },
      schema: {
        operationId: 'listTodoChanges',
        summary: 'Changes since a sync token (delta sync)',
        description:
          'Without `since`: an empty page and a token for "now". Take it, list the todos, then call with `since` = the last `next_since` to get every todo changed since — its current state, or a tombstone when it was deleted — each once. Apply `changes` in order; while `has_more`, call again at once. Tokens stay valid as long as events are kept (`EVENT_RETENTION_HOURS`, 24 by default); an older one answers 410 `sync-token-expired`: list again.',
        tags: TAGS,
        querystring: ChangesQuerySchema,
        response: {
          200: jsonResponse(ChangesPageSchema, 'The changes, and the token to continue from.'),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            'invalid-parameter',
            'unknown-parameter',
            'sync-token-expired',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request) =>
      deltaSync.changes(
        database.db,
        { ownerId: ownerIdOf(request), baseUrl: baseUrlOf(request, publicBaseUrl) },
        request.query.since,
        request.query.limit,
      ),
  );
};
