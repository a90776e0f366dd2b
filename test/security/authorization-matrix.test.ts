import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../../src/auth/api-key-token.js';
import { createApiKey } from '../../src/auth/api-keys.js';
import { apiKeysRepository } from '../../src/auth/api-keys.repository.js';
import { SCOPES, type RouteScope } from '../../src/auth/scopes.js';
import type { Problem } from '../../src/http/problem.js';
import { ACTIONS, TRANSITIONS } from '../../src/todos/todo-transitions.js';
import { TODO_STATUSES, type Todo, type TodoStatus } from '../../src/todos/todo.schemas.js';
import { openApiDocumentOf } from '../helpers/openapi-contract.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { openSse } from '../helpers/sse-client.js';
import { buildTestApp } from '../helpers/test-app.js';
import { ownerChecksum } from './owner-checksum.js';

/**
 * RELIABILITY.md §3 API1, API2 and API5 as one table: every route the app registers (read from
 * its route index, never listed by hand) × every kind of caller, each answer predicted by a few
 * rules and checked, with owner A's rows checksummed around every request that is not A's own.
 * A route without a fixture below fails, so a new route cannot ship outside the matrix.
 */

const OWNER_A = 'matrix-owner-a';
const OWNER_B = 'matrix-owner-b';

const PRINCIPALS = [
  'owner',
  'other-owner',
  'no-token',
  'basic',
  'bearer-alone',
  'unknown-token',
  'read-only',
  'expired',
  'revoked',
] as const;
type Principal = (typeof PRINCIPALS)[number];

/** Callers that prove no identity: 401 on every protected route. */
const UNAUTHENTICATED: ReadonlySet<Principal> = new Set([
  'no-token',
  'basic',
  'bearer-alone',
  'unknown-token',
  'expired',
  'revoked',
]);

/**
 * What a request works on: nothing of anyone's, the caller's collection, one of A's todos, the
 * caller's change feed (delta sync, event stream), the caller's webhook endpoints, one of A's
 * endpoints, or one of the deliveries of A's endpoint.
 */
type Target = 'none' | 'collection' | 'todo' | 'feed' | 'hooks' | 'hook' | 'delivery';

interface RouteFixture {
  /** The scope the route must declare (checked against the OpenAPI document too). */
  readonly scope: RouteScope;
  readonly target: Target;
  /** Values of path parameters other than `:id` (which is always the target todo). */
  readonly params?: Readonly<Record<string, string>>;
  readonly payload?: Readonly<Record<string, unknown>>;
  /** Owner A's status (for everyone on a public route). */
  readonly success: number;
  /** Action routes: the status the action moves to; A's answer then follows TRANSITIONS. */
  readonly moveTo?: TodoStatus;
  /** The target todo is deleted before the request (restore). */
  readonly deletedTarget?: boolean;
  /** The answer is an endless `text/event-stream`: its successes are read over a socket. */
  readonly stream?: boolean;
}

const publicPage = (success = 200): RouteFixture => ({ scope: 'public', target: 'none', success });
const action = (moveTo: TodoStatus): RouteFixture => ({
  scope: 'todos:write',
  target: 'todo',
  success: 200,
  moveTo,
});

/**
 * One entry per `METHOD url` of the route index. HEAD routes that Fastify derives from a GET
 * use the GET entry (same handler, same scope, no body).
 */
const FIXTURES: Readonly<Record<string, RouteFixture>> = {
  'GET /': publicPage(),
  'GET /healthz': publicPage(),
  'GET /readyz': publicPage(),
  'GET /api/openapi.json': publicPage(),
  'GET /problems': publicPage(),
  'GET /problems/:code': { ...publicPage(), params: { code: 'not-found' } },
  'GET /docs': publicPage(),
  'GET /docs/': publicPage(),
  'GET /docs/static/index.html': publicPage(302),
  'GET /docs/static/swagger-initializer.js': publicPage(),
  'GET /docs/json': publicPage(),
  'GET /docs/yaml': publicPage(),
  'GET /api/todos': { scope: 'todos:read', target: 'collection', success: 200 },
  'POST /api/todos': {
    scope: 'todos:write',
    target: 'collection',
    payload: { title: 'Created by the matrix' },
    success: 201,
  },
  'DELETE /api/todos': { scope: 'todos:write', target: 'collection', success: 204 },
  'GET /api/todos/:id': { scope: 'todos:read', target: 'todo', success: 200 },
  'PUT /api/todos/:id': {
    scope: 'todos:write',
    target: 'todo',
    payload: { title: 'Replaced by the matrix', priority: 'high' },
    success: 200,
  },
  'PATCH /api/todos/:id': {
    scope: 'todos:write',
    target: 'todo',
    payload: { title: 'Patched by the matrix' },
    success: 200,
  },
  'DELETE /api/todos/:id': { scope: 'todos:write', target: 'todo', success: 204 },
  'POST /api/todos/:id/start': action('in_progress'),
  'POST /api/todos/:id/block': action('blocked'),
  'POST /api/todos/:id/defer': action('deferred'),
  'POST /api/todos/:id/complete': action('completed'),
  'POST /api/todos/:id/cancel': action('cancelled'),
  'POST /api/todos/:id/reopen': action('open'),
  'POST /api/todos/:id/restore': {
    scope: 'todos:write',
    target: 'todo',
    success: 200,
    deletedTarget: true,
  },
  'GET /api/todos/changes': { scope: 'todos:read', target: 'feed', success: 200 },
  'GET /api/todos/events': { scope: 'todos:read', target: 'feed', success: 200, stream: true },
  'POST /api/webhooks': {
    scope: 'webhooks:manage',
    target: 'hooks',
    payload: { url: 'https://93.184.215.14/matrix' },
    success: 201,
  },
  'GET /api/webhooks': { scope: 'webhooks:manage', target: 'hooks', success: 200 },
  'GET /api/webhooks/:id': { scope: 'webhooks:manage', target: 'hook', success: 200 },
  'PATCH /api/webhooks/:id': {
    scope: 'webhooks:manage',
    target: 'hook',
    payload: { description: 'patched by the matrix' },
    success: 200,
  },
  'DELETE /api/webhooks/:id': { scope: 'webhooks:manage', target: 'hook', success: 204 },
  'POST /api/webhooks/:id/rotate-secret': {
    scope: 'webhooks:manage',
    target: 'hook',
    success: 200,
  },
  'POST /api/webhooks/:id/test': { scope: 'webhooks:manage', target: 'hook', success: 202 },
  'GET /api/webhooks/:id/deliveries': { scope: 'webhooks:manage', target: 'hook', success: 200 },
  'POST /api/webhooks/:id/deliveries/:delivery_id/redeliver': {
    scope: 'webhooks:manage',
    target: 'delivery',
    success: 202,
  },
};

function fixtureOf(method: string, url: string): RouteFixture | undefined {
  return FIXTURES[`${method} ${url}`] ?? (method === 'HEAD' ? FIXTURES[`GET ${url}`] : undefined);
}

/** The table is read when the file loads, so that each route gets a test of its own. */
const t = await buildTestApp({ env: { AUTH_MODE: 'required' } });
const ROUTES = t.app.routeIndex.routes();
afterAll(async () => {
  await t.close();
});

const authorization = {} as Record<Principal, string | undefined>;
/** Every (route, principal) pair checked so far. */
const checked: string[] = [];

beforeAll(async () => {
  const { database } = t;
  const now = Date.now();
  const expired = await createApiKey(
    database,
    { ownerId: OWNER_A, scopes: SCOPES, expiresAt: new Date(now - 60_000) },
    new Date(now - 3_600_000),
  );
  const revoked = await createApiKey(database, { ownerId: OWNER_A, scopes: SCOPES });
  Object.assign(authorization, {
    owner: await t.bearer(OWNER_A),
    'other-owner': await t.bearer(OWNER_B),
    'no-token': undefined,
    basic: `Basic ${Buffer.from(`${OWNER_A}:password`).toString('base64')}`,
    'bearer-alone': 'Bearer',
    'unknown-token': `Bearer ${generateApiKeyToken().token}`,
    'read-only': await t.bearer(OWNER_A, ['todos:read']),
    expired: `Bearer ${expired.token}`,
    revoked: `Bearer ${revoked.token}`,
  } satisfies Record<Principal, string | undefined>);

  // The revoked key worked until it was revoked: its 401s below are the revocation's doing.
  const before = await t.inject({
    method: 'GET',
    url: '/api/todos',
    headers: { authorization: authorization.revoked },
  });
  expect(before.statusCode).toBe(200);
  await database.writeTransaction((trx) =>
    apiKeysRepository.revoke(trx, revoked.row.id, new Date().toISOString()),
  );
});

function headersOf(principal: Principal): Record<string, string> {
  const value = authorization[principal];
  return value === undefined ? {} : { authorization: value };
}

/**
 * The concrete path of a route: `:id` is the target (todo or endpoint), `:delivery_id` the
 * target delivery, other parameters from the fixture.
 */
function pathOf(url: string, fixture: RouteFixture, target: PathTarget | undefined): string {
  const path = url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value =
      name === 'id'
        ? target?.id
        : name === 'delivery_id'
          ? target?.deliveryId
          : fixture.params?.[name];
    if (value === undefined) throw new Error(`${url}: the fixture gives no value for :${name}`);
    return value;
  });
  return path;
}

/** What `:id` (and `:delivery_id`) stand for in one request. */
interface PathTarget {
  readonly id: string;
  readonly deliveryId?: string;
}

function requestOf(
  method: string,
  url: string,
  fixture: RouteFixture,
  id: string | PathTarget | undefined,
  principal: Principal,
): InjectOptions {
  return {
    method,
    url: pathOf(url, fixture, typeof id === 'string' ? { id } : id),
    headers: headersOf(principal),
    ...(fixture.payload ? { payload: { ...fixture.payload } } : {}),
  };
}

/** Headers that differ between any two requests: their date, id and rate-limit window. */
const VOLATILE_HEADERS = new Set(['date', 'x-request-id', 'ratelimit', 'ratelimit-policy']);

function stableHeaders(response: LightMyRequestResponse): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(response.headers).filter(([name]) => !VOLATILE_HEADERS.has(name)),
  );
}

/** The body with the two members that name the request itself (its path and id) blanked out. */
function bodyWithoutRequestIdentity(response: LightMyRequestResponse): string {
  if (response.body === '') return '';
  const problem = response.json<Problem>();
  return response.body
    .replace(JSON.stringify(problem.instance), '"<instance>"')
    .replace(JSON.stringify(problem.request_id), '"<request_id>"');
}

async function createTodoOfA(status: TodoStatus = 'open'): Promise<Todo> {
  const response = await t.inject({
    method: 'POST',
    url: '/api/todos',
    headers: headersOf('owner'),
    payload: { title: `A's todo (${status})`, status, labels: ['mine'], metadata: { k: 'v' } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Todo>();
}

function checksumOf(owner: string): Promise<string> {
  return ownerChecksum(t.database.db, owner);
}

function expectUnauthenticated(
  response: LightMyRequestResponse,
  method: string,
  presented: boolean,
): void {
  expect(response.statusCode, response.body).toBe(401);
  const challenge = response.headers['www-authenticate'];
  expect(challenge).toMatch(/^Bearer realm="todo-api"/);
  if (presented) expect(challenge).toContain('error="invalid_token"');
  else expect(challenge).not.toContain('error=');
  if (method === 'HEAD') {
    expect(response.body).toBe('');
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  } else {
    expectProblem(response, 401, 'unauthenticated');
  }
}

function expectInsufficientScope(
  response: LightMyRequestResponse,
  method: string,
  scope: RouteScope,
): void {
  expect(response.statusCode, response.body).toBe(403);
  expect(response.headers['www-authenticate']).toBe(
    `Bearer realm="todo-api", error="insufficient_scope", scope="${scope}"`,
  );
  if (method !== 'HEAD') {
    const problem = expectProblem(response, 403, 'insufficient-scope');
    expect(problem.required_scope).toBe(scope);
    expect(problem.detail).toContain(scope);
  }
}

/** A's answer on an action route: allowed by the table (or a same-state no-op) → 200, else 409. */
function actionStatus(from: TodoStatus, to: TodoStatus): number {
  return from === to || TRANSITIONS[from].includes(to) ? 200 : 409;
}

/** The table that holds what a collection POST creates. */
const CREATED_IN = { collection: 'todos', hooks: 'webhook_endpoints' } as const;

/** A webhook endpoint of A's, alone (older ones go, so that A stays under the endpoint limit). */
async function createEndpointOfA(): Promise<string> {
  await t.database.db.deleteFrom('webhook_endpoints').where('owner_id', '=', OWNER_A).execute();
  const response = await t.inject({
    method: 'POST',
    url: '/api/webhooks',
    headers: headersOf('owner'),
    payload: { url: 'https://93.184.215.14/of-a' },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ id: string }>().id;
}

/**
 * What a request targets: one of A's todos (deleted first when the fixture says so), one of A's
 * endpoints (with a delivery), or — for collections — something of A's a list must show.
 */
async function targetOf(fixture: RouteFixture): Promise<PathTarget | undefined> {
  switch (fixture.target) {
    case 'none':
      return undefined;
    case 'hooks':
    case 'hook':
      return { id: await createEndpointOfA() };
    case 'delivery': {
      const id = await createEndpointOfA();
      const test = await t.inject({
        method: 'POST',
        url: `/api/webhooks/${id}/test`,
        headers: headersOf('owner'),
      });
      expect(test.statusCode, test.body).toBe(202);
      return { id, deliveryId: test.json<{ id: string }>().id };
    }
    default: {
      const todo = await createTodoOfA();
      if (fixture.deletedTarget) {
        const deleted = await t.inject({
          method: 'DELETE',
          url: `/api/todos/${todo.id}`,
          headers: headersOf('owner'),
        });
        expect(deleted.statusCode).toBe(204);
      }
      return { id: todo.id };
    }
  }
}

/** The owner of the row a collection POST created. */
async function creatorOf(fixture: RouteFixture, id: string): Promise<string | undefined> {
  const table = fixture.target === 'hooks' ? CREATED_IN.hooks : CREATED_IN.collection;
  const row = await t.database.db
    .selectFrom(table)
    .select('owner_id')
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.owner_id;
}

let listening: Promise<string> | undefined;

/**
 * Opens the event stream over a socket as `principal`, lets A create a todo, and returns the
 * status and whether that todo's event arrived.
 */
async function streamAs(principal: Principal): Promise<{ status: number; sawA: boolean }> {
  listening ??= t.app.listen({ port: 0, host: '127.0.0.1' });
  const stream = await openSse(`${await listening}/api/todos/events`, headersOf(principal));
  try {
    if (stream.status !== 200) return { status: stream.status, sawA: false };
    expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const todo = await createTodoOfA();
    const sawA = await stream.next(principal === 'other-owner' ? 300 : 5000).then(
      (message) => message.data.includes(todo.id),
      () => false,
    );
    return { status: stream.status, sawA };
  } finally {
    stream.close();
  }
}

async function checkOwner(method: string, url: string, fixture: RouteFixture): Promise<void> {
  if (fixture.stream) {
    expect(await streamAs('owner')).toEqual({ status: 200, sawA: true });
    return;
  }
  if (fixture.moveTo !== undefined) {
    for (const from of TODO_STATUSES) {
      const todo = await createTodoOfA(from);
      const response = await t.inject(requestOf(method, url, fixture, todo.id, 'owner'));
      const expected = actionStatus(from, fixture.moveTo);
      expect(response.statusCode, `from ${from}: ${response.body}`).toBe(expected);
      if (expected === 200) {
        expect(response.json<Todo>()).toMatchObject({ id: todo.id, status: fixture.moveTo });
      } else {
        const problem = expectProblem(response, 409, 'invalid-transition');
        expect(problem.current_status).toBe(from);
      }
    }
    return;
  }
  const target = await targetOf(fixture);
  const response = await t.inject(requestOf(method, url, fixture, target, 'owner'));
  expect(response.statusCode, response.body).toBe(fixture.success);
  if (method === 'GET' && fixture.target === 'feed') {
    expect(response.json<{ next_since: string }>().next_since).toBeTruthy();
  }
  if (!target || method === 'HEAD') return;
  const single = fixture.target === 'todo' || fixture.target === 'hook';
  if (single && response.statusCode === 200 && !url.endsWith('/deliveries')) {
    expect(response.json<{ id: string }>().id).toBe(target.id);
  }
  const listing = fixture.target === 'collection' || fixture.target === 'hooks';
  if (method === 'GET' && listing) {
    expect(response.json<{ id: string }[]>().map((listed) => listed.id)).toContain(target.id);
  }
  if (method === 'POST' && listing) {
    expect(await creatorOf(fixture, response.json<{ id: string }>().id)).toBe(OWNER_A);
  }
}

async function checkOtherPrincipal(
  method: string,
  url: string,
  fixture: RouteFixture,
  principal: Exclude<Principal, 'owner'>,
): Promise<void> {
  if (fixture.stream && (principal === 'other-owner' || principal === 'read-only')) {
    // B's stream stays silent while A writes; A's own read-only key sees A's events.
    const expected = { status: 200, sawA: principal === 'read-only' };
    expect(await streamAs(principal)).toEqual(expected);
    return;
  }
  const target = await targetOf(fixture);
  if (
    principal === 'other-owner' &&
    (fixture.target === 'collection' || fixture.target === 'hooks')
  ) {
    // B's own data is empty before each of its collection requests.
    await t.database.db.deleteFrom('todos').where('owner_id', '=', OWNER_B).execute();
    await t.database.db.deleteFrom('webhook_endpoints').where('owner_id', '=', OWNER_B).execute();
  }
  const before = await checksumOf(OWNER_A);
  const request = requestOf(method, url, fixture, target, principal);
  const response = await t.inject(request);

  if (UNAUTHENTICATED.has(principal)) {
    expectUnauthenticated(response, method, principal !== 'no-token');
  } else if (principal === 'read-only') {
    if (fixture.scope === 'todos:read') {
      const owner = await t.inject({ ...request, headers: headersOf('owner') });
      expect(response.statusCode).toBe(fixture.success);
      expect(stableHeaders(response)).toEqual(stableHeaders(owner));
      expect(response.body).toBe(owner.body);
    } else {
      expectInsufficientScope(response, method, fixture.scope);
    }
  } else if (
    fixture.target === 'todo' ||
    fixture.target === 'hook' ||
    fixture.target === 'delivery'
  ) {
    // API1: A's todo (endpoint, delivery) and one that never existed answer B identically.
    const never = { id: uuidv7(), deliveryId: uuidv7() };
    const missing = await t.inject(requestOf(method, url, fixture, never, principal));
    expect(response.statusCode, response.body).toBe(404);
    if (method !== 'HEAD') expectProblem(response, 404, 'not-found');
    expect(missing.statusCode).toBe(404);
    expect(bodyWithoutRequestIdentity(response)).toBe(bodyWithoutRequestIdentity(missing));
    expect(stableHeaders(response)).toEqual(stableHeaders(missing));
  } else if (fixture.target === 'feed') {
    expect(response.statusCode, response.body).toBe(fixture.success);
    if (method === 'GET') expect(response.json<{ changes: unknown[] }>().changes).toEqual([]);
  } else {
    expect(response.statusCode, response.body).toBe(fixture.success);
    if (method === 'GET') expect(response.json()).toEqual([]);
    if (method === 'HEAD') expect(response.headers['content-length']).toBe('2');
    if (method === 'POST') {
      expect(await creatorOf(fixture, response.json<{ id: string }>().id)).toBe(OWNER_B);
    }
  }
  expect(await checksumOf(OWNER_A), "A's rows changed").toBe(before);
}

/** Public routes serve no owner's data: every caller gets the owner's answer, header for header. */
async function checkPublic(method: string, url: string, fixture: RouteFixture): Promise<void> {
  const reference = await t.inject(requestOf(method, url, fixture, undefined, 'owner'));
  expect(reference.statusCode).toBe(fixture.success);
  checked.push(`${method} ${url} × owner`);
  for (const principal of PRINCIPALS.filter((name) => name !== 'owner')) {
    const before = await checksumOf(OWNER_A);
    const response = await t.inject(requestOf(method, url, fixture, undefined, principal));
    const label = principal;
    expect(response.statusCode, label).toBe(reference.statusCode);
    expect(stableHeaders(response), label).toEqual(stableHeaders(reference));
    expect(response.body === reference.body, `${label}: the body differs`).toBe(true);
    expect(await checksumOf(OWNER_A), `${label}: A's rows changed`).toBe(before);
    checked.push(`${method} ${url} × ${principal}`);
  }
}

async function labelled(label: string, check: () => Promise<void>): Promise<void> {
  try {
    await check();
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${label}: ${message}`, { cause: error });
  }
}

describe('authorization matrix (AUTH_MODE=required)', () => {
  it('reads a route table with every :id route and every action route', () => {
    const keys = ROUTES.map(({ method, url }) => `${method} ${url}`);
    for (const name of Object.keys(ACTIONS)) expect(keys).toContain(`POST /api/todos/:id/${name}`);
    for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE']) {
      expect(keys).toContain(`${method} /api/todos/:id`);
    }
    for (const method of ['GET', 'HEAD', 'POST', 'DELETE']) {
      expect(keys).toContain(`${method} /api/todos`);
    }
  });

  it('has no fixture left over from a route that no longer exists', () => {
    const keys = new Set(ROUTES.map(({ method, url }) => `${method} ${url}`));
    const stale = Object.keys(FIXTURES).filter((key) => {
      const [method = '', url = ''] = key.split(' ');
      return !keys.has(key) && !(method === 'GET' && keys.has(`HEAD ${url}`));
    });
    expect(stale).toEqual([]);
  });

  it('declares in the OpenAPI document the scope each fixture expects', () => {
    const document = openApiDocumentOf(t.app);
    const paths = document.paths as Record<
      string,
      Record<string, { security?: Record<string, string[]>[] }>
    >;
    let compared = 0;
    for (const { method, url } of ROUTES) {
      const operation = paths[url.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[method.toLowerCase()];
      const fixture = fixtureOf(method, url);
      if (!operation || !fixture) continue;
      const expected = fixture.scope === 'public' ? [] : [{ bearer: [fixture.scope] }];
      expect(operation.security, `${method} ${url}`).toEqual(expected);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(Object.keys(ACTIONS).length + 9);
  });

  it.each(ROUTES)('$method $url answers every principal by the rules', async ({ method, url }) => {
    const fixture = fixtureOf(method, url);
    if (!fixture) {
      expect.fail(`${method} ${url} has no fixture: add it to FIXTURES in this file`);
    }
    if (fixture.scope === 'public') {
      await labelled(`${method} ${url}`, () => checkPublic(method, url, fixture));
      return;
    }
    for (const principal of PRINCIPALS) {
      await labelled(`${method} ${url} × ${principal}`, () =>
        principal === 'owner'
          ? checkOwner(method, url, fixture)
          : checkOtherPrincipal(method, url, fixture, principal),
      );
      checked.push(`${method} ${url} × ${principal}`);
    }
  });

  it('checked every route × principal cell', () => {
    const size = ROUTES.length * PRINCIPALS.length;
    console.log(
      `authorization matrix: ${ROUTES.length} routes × ${PRINCIPALS.length} principals = ${size} cases`,
    );
    expect(new Set(checked).size).toBe(checked.length);
    expect(checked.length).toBe(size);
  });

  it('answers TRACE and PROPFIND on every route path with 404 or 405, never 2xx', async () => {
    let probes = 0;
    for (const url of new Set(ROUTES.map((route) => route.url))) {
      const fixture = fixtureOf('GET', url) ??
        fixtureOf('POST', url) ?? { scope: 'public', target: 'none', success: 200 };
      // One target per path: the checksum below proves that no probe changed it.
      const todo = await createTodoOfA();
      for (const principal of PRINCIPALS) {
        const before = await checksumOf(OWNER_A);
        for (const method of ['TRACE', 'PROPFIND']) {
          const response = await t.inject({
            method,
            url: pathOf(url, fixture, { id: todo.id, deliveryId: uuidv7() }),
            headers: headersOf(principal),
          });
          const label = `${method} ${url} × ${principal}`;
          expect([404, 405], label).toContain(response.statusCode);
          expect(response.headers['content-type'], label).toMatch(/^application\/problem\+json/);
          if (response.statusCode === 405) expect(response.headers.allow, label).toBeDefined();
          probes++;
        }
        expect(await checksumOf(OWNER_A), `${url} × ${principal}`).toBe(before);
      }
    }
    expect(probes).toBe(new Set(ROUTES.map((route) => route.url)).size * PRINCIPALS.length * 2);
  });
});
