import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ownerIdOf } from '../auth/owner.js';
import type { Database, Db } from '../db/database.js';
import { AppError } from '../http/app-error.js';
import {
  etagOf,
  ifNoneMatchHits,
  parseIfMatch,
  sendWithoutBody,
  type VersionPrecondition,
} from '../http/conditional.js';
import {
  AUTH_PROBLEMS,
  BODY_PROBLEMS,
  HEADERS,
  UNEXPECTED_BODY_PROBLEMS,
  emptyResponse,
  jsonResponse,
  problemResponses,
} from '../http/openapi-responses.js';
import { preferences } from '../http/prefer.js';
import { appendVary } from '../http/vary.js';
import { baseUrlOf, pathOf } from '../http/request-context.js';
import {
  parseIdempotencyKey,
  type Idempotency,
  type WriteResponse,
} from '../idempotency/idempotency.js';
import { ACTIONS, TRANSITIONS, type TodoAction } from './todo-transitions.js';
import {
  ListFiltersQuerySchema,
  ListQuerySchema,
  TodoIdParamsSchema,
  TodoPatchSchema,
  TodoSchema,
  TodoWriteSchema,
  type ListQuery,
  type Todo,
} from './todo.schemas.js';
import type { RequestContext, TodosService } from './todos.service.js';

export interface TodosRoutesOptions {
  readonly service: TodosService;
  readonly database: Database;
  readonly idempotency: Idempotency;
  readonly publicBaseUrl: string | undefined;
}

const TAGS = ['todos'];

const IfMatchHeaders = Type.Object({
  'if-match': Type.Optional(
    Type.String({ description: 'Apply only if the todo still has this ETag (or `*`); else 412.' }),
  ),
});
const IdempotentHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Makes the request safe to retry: for 24 h the same key returns the stored response.',
    }),
  ),
});
const IdempotentIfMatchHeaders = Type.Object({
  ...IfMatchHeaders.properties,
  ...IdempotentHeaders.properties,
});

const ListHeaders = Type.Object({
  prefer: Type.Optional(
    Type.String({
      description:
        'RFC 7240. `count=exact`: also count every todo matching the filters (ignoring paging) into `X-Total-Count`. Counting costs a pass over the matches, so it is never done otherwise. Other preferences are ignored.',
    }),
  ),
});

const TodoResponse = jsonResponse(TodoSchema, 'The todo.', { ETag: HEADERS.etag });
const ReplayableTodoResponse = jsonResponse(TodoSchema, 'The todo after the change.', {
  ETag: HEADERS.etag,
  'Idempotent-Replayed': HEADERS.replayed,
});

const ACTION_SUMMARIES: Readonly<Record<TodoAction, string>> = {
  start: 'Start working on a todo (→ in_progress)',
  block: 'Mark a todo blocked (→ blocked)',
  defer: 'Defer a todo (→ deferred)',
  complete: 'Complete a todo (→ completed)',
  cancel: 'Cancel a todo (→ cancelled)',
  reopen: 'Reopen a todo (→ open)',
};

function allowedFrom(target: string): string {
  const sources = Object.entries(TRANSITIONS)
    .filter(([, targets]) => (targets as readonly string[]).includes(target))
    .map(([source]) => source);
  return sources.join(', ');
}

function todoResponse(todo: Todo, statusCode = 200): WriteResponse {
  return {
    statusCode,
    headers: {
      etag: etagOf(todo.version),
      ...(statusCode === 201 ? { location: todo.url } : {}),
    },
    body: todo,
  };
}

function sendWrite(reply: FastifyReply, response: WriteResponse, replayed: boolean) {
  if (replayed) void reply.header('idempotent-replayed', 'true');
  return reply.code(response.statusCode).headers(response.headers).send(response.body);
}

/** The Link header of a page: the same query with the next cursor. */
function nextLink(base: string, query: ListQuery, cursor: string): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (name !== 'cursor') params.set(name, String(value));
  }
  params.set('cursor', cursor);
  return `<${base}/api/todos?${params.toString()}>; rel="next"`;
}

/** Action endpoints take no input: nothing, or an empty JSON object. */
function assertNoInput(body: unknown): void {
  if (body === undefined || body === null) return;
  if (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0) return;
  const fields = typeof body === 'object' && !Array.isArray(body) ? Object.keys(body) : [];
  throw new AppError('unknown-field', 'Action endpoints take no body fields.', {
    errors: fields.map((field) => ({
      pointer: `/${field}`,
      code: 'unknown-field',
      detail: 'is not a known field',
    })),
  });
}

/** `/api/todos`: thin handlers that read HTTP, call the service in one transaction, answer. */
export const todosRoutes: FastifyPluginAsyncTypebox<TodosRoutesOptions> = async (app, options) => {
  const { service, database, idempotency, publicBaseUrl } = options;

  const contextOf = (request: FastifyRequest): RequestContext => ({
    ownerId: ownerIdOf(request),
    baseUrl: baseUrlOf(request, publicBaseUrl),
  });

  const idempotencyScope = (request: FastifyRequest) => {
    const key = parseIdempotencyKey(request.headers['idempotency-key'] as string | undefined);
    return key === undefined
      ? undefined
      : { ownerId: ownerIdOf(request), method: request.method, path: pathOf(request), key };
  };

  /**
   * A POST that takes no input (actions, restore): `If-Match` and `Idempotency-Key` honoured,
   * the changed todo answered.
   */
  async function answerNoInputWrite(
    request: FastifyRequest,
    reply: FastifyReply,
    change: (
      trx: Db,
      ctx: RequestContext,
      precondition: VersionPrecondition | undefined,
    ) => Promise<Todo>,
  ) {
    assertNoInput(request.body);
    const ctx = contextOf(request);
    const precondition = parseIfMatch(request.headers['if-match']);
    const { response, replayed } = await idempotency.run(
      idempotencyScope(request),
      // No body and `{}` are the same (empty) input, so they share one fingerprint.
      null,
      async (trx) => todoResponse(await change(trx, ctx, precondition)),
    );
    return sendWrite(reply, response, replayed);
  }

  app.get(
    '/api/todos',
    {
      config: { scope: 'todos:read' },
      schema: {
        operationId: 'listTodos',
        summary: 'List todos',
        description:
          'A bare JSON array of the todos matching every filter given, in `sort` order (default: `order`, then `created_at`, then `id`). Pages are keyset-based: follow `Link: rel="next"` until it is absent. Send `Prefer: count=exact` to get the number of all matching todos in `X-Total-Count`. Every filter and every single sort key is served by an index.',
        tags: TAGS,
        querystring: ListQuerySchema,
        headers: ListHeaders,
        response: {
          200: jsonResponse(Type.Array(TodoSchema), 'One page of todos.', {
            Link: HEADERS.link,
            'X-Total-Count': HEADERS.totalCount,
            'Preference-Applied': HEADERS.preferenceApplied,
            Vary: HEADERS.varyPrefer,
          }),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            'invalid-parameter',
            'unknown-parameter',
            'invalid-cursor',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const count = preferences(request.headers.prefer).get('count')?.toLowerCase() === 'exact';
      const page = await service.list(database.db, ctx, request.query, { count });
      appendVary(reply, 'Prefer');
      if (page.nextCursor)
        void reply.header('link', nextLink(ctx.baseUrl, request.query, page.nextCursor));
      if (page.totalCount !== undefined) {
        void reply
          .header('x-total-count', String(page.totalCount))
          .header('preference-applied', 'count=exact');
      }
      // Already JSON (see `listedTodosJson`): Fastify sends a string with a JSON type as it is.
      return reply.type('application/json; charset=utf-8').send(page.json);
    },
  );

  app.post(
    '/api/todos',
    {
      config: { scope: 'todos:write' },
      schema: {
        operationId: 'createTodo',
        summary: 'Create a todo',
        tags: TAGS,
        headers: IdempotentHeaders,
        body: TodoWriteSchema,
        response: {
          201: jsonResponse(TodoSchema, 'The created todo.', {
            Location: HEADERS.location,
            ETag: HEADERS.etag,
            'Idempotent-Replayed': HEADERS.replayed,
          }),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...BODY_PROBLEMS,
            'quota-exceeded',
            'invalid-idempotency-key',
            'idempotency-in-flight',
            'idempotency-key-reused',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const { response, replayed } = await idempotency.run(
        idempotencyScope(request),
        request.body,
        async (trx) => todoResponse(await service.create(trx, ctx, request.body), 201),
      );
      return sendWrite(reply, response, replayed);
    },
  );

  app.delete(
    '/api/todos',
    {
      config: { scope: 'todos:write' },
      schema: {
        operationId: 'deleteTodos',
        summary: 'Delete every todo matching the filters (all when none)',
        description:
          'Each matching todo is deleted as by `DELETE /api/todos/{id}`: restorable until purged.',
        tags: TAGS,
        querystring: ListFiltersQuerySchema,
        response: {
          204: emptyResponse('The matching todos were deleted.'),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...UNEXPECTED_BODY_PROBLEMS,
            'invalid-parameter',
            'unknown-parameter',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      await database.writeTransaction((trx) => service.deleteMatching(trx, ctx, request.query));
      return sendWithoutBody(reply, 204);
    },
  );

  app.get(
    '/api/todos/:id',
    {
      config: { scope: 'todos:read' },
      schema: {
        operationId: 'getTodo',
        summary: 'Get a todo',
        tags: TAGS,
        params: TodoIdParamsSchema,
        headers: Type.Object({
          'if-none-match': Type.Optional(
            Type.String({ description: 'Answer 304 when the todo still has this ETag.' }),
          ),
        }),
        response: {
          200: TodoResponse,
          304: emptyResponse('The todo still has the ETag you sent.', { ETag: HEADERS.etag }),
          ...problemResponses([...AUTH_PROBLEMS, 'not-found', 'not-acceptable']),
        },
      },
    },
    async (request, reply) => {
      const todo = await service.get(database.db, contextOf(request), request.params.id);
      const etag = etagOf(todo.version);
      void reply.header('etag', etag);
      if (ifNoneMatchHits(request.headers['if-none-match'], etag))
        return sendWithoutBody(reply, 304);
      return todo;
    },
  );

  app.put(
    '/api/todos/:id',
    {
      config: { scope: 'todos:write' },
      schema: {
        operationId: 'replaceTodo',
        summary: 'Replace a todo',
        description:
          'Sets every writable field; omitted optional fields return to their defaults (an omitted `order` keeps its value). Read-only fields may be sent back unchanged. A body equal to the current state changes nothing (same version).',
        tags: TAGS,
        params: TodoIdParamsSchema,
        headers: IfMatchHeaders,
        body: TodoWriteSchema,
        response: {
          200: TodoResponse,
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...BODY_PROBLEMS,
            'not-found',
            'invalid-transition',
            'precondition-failed',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const precondition = parseIfMatch(request.headers['if-match']);
      const todo = await database.writeTransaction((trx) =>
        service.replace(trx, ctx, request.params.id, request.body, precondition),
      );
      return reply.header('etag', etagOf(todo.version)).send(todo);
    },
  );

  app.patch(
    '/api/todos/:id',
    {
      config: { scope: 'todos:write' },
      schema: {
        operationId: 'updateTodo',
        summary: 'Update a todo (JSON Merge Patch)',
        description:
          'RFC 7396: members present are set, `null` resets a field to its default, `metadata` merges key by key. Accepts `application/merge-patch+json` and `application/json`.',
        tags: TAGS,
        params: TodoIdParamsSchema,
        headers: IdempotentIfMatchHeaders,
        body: TodoPatchSchema,
        response: {
          200: ReplayableTodoResponse,
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...BODY_PROBLEMS,
            'not-found',
            'invalid-transition',
            'precondition-failed',
            'invalid-idempotency-key',
            'idempotency-in-flight',
            'idempotency-key-reused',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const precondition = parseIfMatch(request.headers['if-match']);
      const { response, replayed } = await idempotency.run(
        idempotencyScope(request),
        request.body,
        async (trx) =>
          todoResponse(
            await service.patch(trx, ctx, request.params.id, request.body, precondition),
          ),
      );
      return sendWrite(reply, response, replayed);
    },
  );

  app.delete(
    '/api/todos/:id',
    {
      config: { scope: 'todos:write' },
      schema: {
        operationId: 'deleteTodo',
        summary: 'Delete a todo',
        description:
          'The todo leaves lists and answers 404 from now on, but is kept for `DELETED_RETENTION_DAYS` (30 by default): `POST /api/todos/{id}/restore` brings it back. Then it is purged for good.',
        tags: TAGS,
        params: TodoIdParamsSchema,
        headers: IfMatchHeaders,
        response: {
          204: emptyResponse('The todo was deleted (restorable until purged).'),
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...UNEXPECTED_BODY_PROBLEMS,
            'not-found',
            'precondition-failed',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) => {
      const ctx = contextOf(request);
      const precondition = parseIfMatch(request.headers['if-match']);
      await database.writeTransaction((trx) =>
        service.delete(trx, ctx, request.params.id, precondition),
      );
      return sendWithoutBody(reply, 204);
    },
  );

  for (const action of Object.keys(ACTIONS) as TodoAction[]) {
    app.post(
      `/api/todos/:id/${action}`,
      {
        config: { scope: 'todos:write' },
        schema: {
          operationId: `${action}Todo`,
          summary: ACTION_SUMMARIES[action],
          description: `Allowed from: ${allowedFrom(ACTIONS[action])}; already ${ACTIONS[action]} is a no-op. No body, or \`{}\`.`,
          tags: TAGS,
          params: TodoIdParamsSchema,
          headers: IdempotentIfMatchHeaders,
          response: {
            200: ReplayableTodoResponse,
            ...problemResponses([
              ...AUTH_PROBLEMS,
              'malformed-json',
              'payload-too-large',
              'unsupported-media-type',
              'unknown-field',
              'not-found',
              'invalid-transition',
              'precondition-failed',
              'invalid-idempotency-key',
              'idempotency-in-flight',
              'idempotency-key-reused',
              'not-acceptable',
            ]),
          },
        },
      },
      async (request, reply) =>
        answerNoInputWrite(request, reply, (trx, ctx, precondition) =>
          service.applyAction(trx, ctx, request.params.id, action, precondition),
        ),
    );
  }

  app.post(
    '/api/todos/:id/restore',
    {
      config: { scope: 'todos:write' },
      schema: {
        operationId: 'restoreTodo',
        summary: 'Restore a deleted todo (undo a delete)',
        description:
          'Brings a deleted todo back as it was, with a new version. Possible until the todo is purged (`DELETED_RETENTION_DAYS` after its deletion). No body, or `{}`.',
        tags: TAGS,
        params: TodoIdParamsSchema,
        headers: IdempotentIfMatchHeaders,
        response: {
          200: ReplayableTodoResponse,
          ...problemResponses([
            ...AUTH_PROBLEMS,
            ...UNEXPECTED_BODY_PROBLEMS,
            'unknown-field',
            'not-found',
            'not-deleted',
            'quota-exceeded',
            'precondition-failed',
            'invalid-idempotency-key',
            'idempotency-in-flight',
            'idempotency-key-reused',
            'not-acceptable',
          ]),
        },
      },
    },
    async (request, reply) =>
      answerNoInputWrite(request, reply, (trx, ctx, precondition) =>
        service.restore(trx, ctx, request.params.id, precondition),
      ),
  );
};
