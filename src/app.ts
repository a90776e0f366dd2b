import { randomBytes } from 'node:crypto';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { v7 as uuidv7 } from 'uuid';
import { createApiKeyVerifier } from './auth/api-key-verifier.js';
import { createAuthenticator } from './auth/authenticator.js';
import { createJwtVerifier } from './auth/jwt-verifier.js';
import { createRequestGuard } from './auth/request-guard.js';
import { requireRouteScopes } from './auth/route-scopes.js';
import { ownerIdOf } from './auth/owner.js';
import { authRequired, type Config } from './config.js';
import type { Database } from './db/database.js';
import { getOrCreateSetting } from './db/settings.repository.js';
import { openApiRoute, registerOpenApi } from './docs/openapi.js';
import { createDeltaSync } from './events/delta-sync.js';
import { createEventBus } from './events/event-bus.js';
import { changesRoutes, eventStreamRoutes } from './events/events.routes.js';
import { healthRoutes } from './health/health.routes.js';
import { AppError } from './http/app-error.js';
import { assertAcceptsJson } from './http/content-negotiation.js';
import { corsOptions } from './http/cors.js';
import { clientErrorHandler, errorHandler, sendProblem, toAppError } from './http/error-handler.js';
import { assertOneHostHeader } from './http/host-header.js';
import { JSON_MEDIA_TYPES, parseJsonRequest } from './http/json-body.js';
import { serializeRequest } from './http/log-serializers.js';
import { requestIdOf } from './http/request-id.js';
import { pathOf } from './http/request-context.js';
import { createRouteIndex, type RouteIndex } from './http/route-index.js';
import { validatorCompiler } from './http/validation.js';
import { createIdempotency } from './idempotency/idempotency.js';
import { createRateLimiter } from './limits/rate-limiter.js';
import { createTokenSealer } from './http/sealed-token.js';
import { purgeExpired } from './maintenance/purges.js';
import { startDeliveryWorker } from './webhooks/delivery-worker.js';
import { createWebhookSender } from './webhooks/webhook-sender.js';
import { webhooksRoutes } from './webhooks/webhooks.routes.js';
import { createWebhooksService } from './webhooks/webhooks.service.js';
import { problemsRoutes } from './problems/problems.routes.js';
import { createCursorCodec } from './todos/todo-cursor.js';
import { todosRoutes } from './todos/todos.routes.js';
import { createTodosService } from './todos/todos.service.js';
import { WEB_APP_ROOT, webAppRoutes } from './web/web-app.routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route and its methods: answers 405s, and lets tests enumerate the API. */
    readonly routeIndex: RouteIndex;
    /**
     * Starts a shutdown's drain: from now on every new request answers 503 `unavailable` (and
     * `/readyz` with it, so load balancers stop sending), while requests in flight finish.
     */
    stopAcceptingRequests(): void;
  }
}

export interface AppDeps {
  readonly config: Config;
  readonly database: Database;
  /** `false` silences logging (most tests); otherwise pino writes JSON lines to `logStream`. */
  readonly logger?: false;
  /** Where log lines go; standard output by default. */
  readonly logStream?: DestinationStream;
  readonly now?: () => Date;
}

/** How often expired idempotency keys, deleted todos and events are purged. */
const PURGE_INTERVAL_MS = 10 * 60_000;
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);
/** How often Node checks connections against the request and headers timeouts. */
const TIMEOUT_CHECK_INTERVAL_MS = 500;

/**
 * Builds the whole service over an open database: parsers, hooks, error handling, routes and
 * the OpenAPI document. It never listens; `server.ts` does, and tests `inject`.
 */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, database } = deps;
  const now = deps.now ?? (() => new Date());
  const routeIndex = createRouteIndex();

  const app = Fastify({
    logger: deps.logger ?? {
      level: config.logLevel,
      redact: ['req.headers.authorization'],
      serializers: { req: serializeRequest },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    genReqId: requestIdOf,
    requestIdHeader: false,
    bodyLimit: config.bodyLimit,
    // Client address, scheme and host come from X-Forwarded-* only when sent by a known proxy.
    trustProxy: config.trustProxy ? [...config.trustProxy] : false,
    // Our own onRequest hook answers while shutting down, with a problem document.
    return503OnClosing: false,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    // Node enforces these only when given at server creation (measured; see the README).
    http: {
      requestTimeout: config.requestTimeoutMs,
      headersTimeout: config.headersTimeoutMs,
      connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS,
      maxHeaderSize: config.maxHeaderSize,
      // Checked by assertOneHostHeader, which answers with a problem document.
      requireHostHeader: false,
    },
    clientErrorHandler,
    frameworkErrors: (error, request, reply) => {
      sendProblem(request, reply, toAppError(error));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('routeIndex', routeIndex);
  app.decorateRequest('principal', undefined);
  requireRouteScopes(app);
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);

  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routeIndex.add(method, route.url);
  });
  app.setNotFoundHandler((request, reply) => {
    const allowed = routeIndex.allowedMethods(pathOf(request));
    if (allowed.length === 0) {
      sendProblem(request, reply, new AppError('not-found', 'Nothing exists at this address.'));
      return;
    }
    sendProblem(
      request,
      reply,
      new AppError('method-not-allowed', `${request.method} is not supported here.`, {
        headers: { allow: allowed.join(', ') },
      }),
    );
  });

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_MEDIA_TYPES, { parseAs: 'buffer' }, parseJsonRequest);

  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  let closing = false;
  app.decorate('stopAcceptingRequests', () => {
    closing = true;
  });
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onSend', async (request, reply) => {
    if (!reply.hasHeader('cache-control')) {
      // Clients may keep GET answers but must revalidate them (ETag); nothing else is cached.
      const cacheable = request.method === 'GET' || request.method === 'HEAD';
      void reply.header('cache-control', cacheable ? 'private, no-cache' : 'no-store');
    }
    // While shutting down, requests in flight close their connection when answered, so that
    // server.close() does not wait for the keep-alive timeout of each one.
    if (closing) void reply.header('connection', 'close');
  });

  await app.register(cors, corsOptions(config));
  // After the CORS hook, so that these problems (503 while closing, 400 Host, 414) carry CORS
  // headers like every other.
  app.addHook('onRequest', async (request) => {
    if (closing) {
      throw new AppError('unavailable', 'The service is shutting down; retry shortly.', {
        headers: { 'retry-after': '1' },
      });
    }
    assertOneHostHeader(request);
    if (request.url.length > config.maxUrlLength) {
      throw new AppError(
        'uri-too-long',
        `The request target exceeds ${config.maxUrlLength} bytes.`,
      );
    }
  });
  await registerOpenApi(app);

  const authenticator = createAuthenticator({
    apiKeys: createApiKeyVerifier({ database, now, log: app.log }),
    jwt: config.jwt ? createJwtVerifier(config.jwt) : undefined,
    anonymous: !authRequired(config),
  });
  const rateLimiter =
    config.rateLimitMax > 0
      ? createRateLimiter({
          max: config.rateLimitMax,
          windowSeconds: config.rateLimitWindowSeconds,
          redisUrl: config.redisUrl,
          log: app.log,
        })
      : undefined;
  app.addHook('onRequest', createRequestGuard({ authenticator, rateLimiter }));
  app.addHook('onClose', async () => {
    await rateLimiter?.close();
  });

  const cursorSecret =
    config.cursorSecret ??
    (await getOrCreateSetting(database, 'cursor_secret', () =>
      randomBytes(32).toString('base64url'),
    ));
  const service = createTodosService({
    cursors: createCursorCodec(cursorSecret),
    now,
    newId: uuidv7,
    todoQuota: config.todoQuota,
  });
  const idempotency = createIdempotency({ database, now, ttlHours: config.idempotencyTtlHours });
  const sealer = createTokenSealer(cursorSecret);

  const webhookPolicy = config.webhooks;
  if (webhookPolicy.allowLoopback) {
    app.log.warn(
      'WEBHOOK_ALLOW_LOOPBACK=true: webhooks may reach this machine (tests and development only)',
    );
  }
  const deliveryWorker = startDeliveryWorker({
    database,
    sender: createWebhookSender(webhookPolicy, webhookPolicy.timeoutMs),
    log: app.log,
    // Attempts, timeouts and leases are real time, whatever clock the app was given.
    now: () => new Date(),
    concurrency: webhookPolicy.concurrency,
    perEndpoint: webhookPolicy.endpointConcurrency,
    pollMs: webhookPolicy.pollMs,
    // Longer than any attempt, so that only a dead worker's deliveries are taken over.
    leaseMs: webhookPolicy.timeoutMs * 2 + 1000,
    retryScale: webhookPolicy.retryScale,
  });
  app.addHook('onClose', async () => {
    await deliveryWorker.stop();
  });

  await app.register(async (jsonApi) => {
    jsonApi.addHook('onRequest', async (request) => {
      assertAcceptsJson(request.headers.accept);
    });
    await jsonApi.register(todosRoutes, {
      service,
      database,
      idempotency,
      publicBaseUrl: config.publicBaseUrl,
    });
    await jsonApi.register(webhooksRoutes, {
      service: createWebhooksService({ policy: webhookPolicy, sealer, now, newId: uuidv7 }),
      database,
      worker: deliveryWorker,
      publicBaseUrl: config.publicBaseUrl,
    });
    await jsonApi.register(changesRoutes, {
      deltaSync: createDeltaSync(sealer),
      database,
      publicBaseUrl: config.publicBaseUrl,
    });
    await jsonApi.register(healthRoutes, { database });
    await jsonApi.register(openApiRoute);
  });
  await app.register(problemsRoutes);
  await app.register(webAppRoutes, { root: WEB_APP_ROOT });

  const bus = await createEventBus(database, app.log);
  await app.register(eventStreamRoutes, {
    bus,
    database,
    publicBaseUrl: config.publicBaseUrl,
    maxStreamsPerOwner: config.sseMaxStreams,
    stream: { heartbeatMs: config.sseHeartbeatMs, drainTimeoutMs: config.sseDrainTimeoutMs },
  });
  // A successful write has committed (and its events with it) before it is answered.
  app.addHook('onResponse', async (request, reply) => {
    if (SAFE_METHODS.has(request.method) || reply.statusCode >= 300 || !request.principal) return;
    bus.published(ownerIdOf(request));
    deliveryWorker.wake();
  });
  // Streams never end by themselves; the server cannot close while they are open.
  app.addHook('preClose', async () => {
    await bus.close();
  });

  const purge = setInterval(() => {
    idempotency.purgeExpired().catch((error: unknown) => {
      app.log.warn({ err: error }, 'purging expired idempotency keys failed');
    });
    purgeExpired({ database, now, ...config }).then(
      (purged) => {
        if (purged.todos + purged.events + purged.deliveries > 0)
          app.log.info({ purged }, 'purged expired rows');
      },
      (error: unknown) => {
        app.log.warn({ err: error }, 'purging deleted todos and old events failed');
      },
    );
  }, PURGE_INTERVAL_MS);
  purge.unref();
  app.addHook('onClose', async () => {
    clearInterval(purge);
  });

  return app;
}
