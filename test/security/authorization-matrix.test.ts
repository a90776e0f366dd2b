import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { v7 as uuidv7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKeyToken } from '../../src/auth/api-key-token.js';
import { createApiKey } from '../../src/auth/api-keys.js';
import { apiKeysRepository } from '../../src/auth/api-keys.repository.js';
import { SCOPES, type RouteScope } from '../../src/auth/scopes.js';
import type { Problem } from '../../src/http/problem.js';
import { ACTIONS, TRANSITIONS } from '../../src/todos/todo-status.js';
import { TODO_STATUSES, type Todo, type TodoStatus } from '../../src/todos/todo.schemas.js';
import { openApiDocumentOf } from '../helpers/openapi-contract.js';
import { expectProblem } from '../helpers/problem-assertions.js';
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

/** What a request works on: nothing of anyone's, the caller's collection, or one of A's todos. */
type Target = 'none' | 'collection' | 'todo';

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

/** The concrete path of a route: `:id` is the target todo, other parameters from the fixture. */
function pathOf(url: string, fixture: RouteFixture, id: string | undefined): string {
  const path = url.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = name === 'id' ? id : fixture.params?.[name];
    if (value === undefined) throw new Error(`${url}: the fixture gives no value for :${name}`);
    return value;
  });
  return path;
}

function requestOf(
  method: string,
  url: string,
  fixture: RouteFixture,
  id: string | undefined,
  principal: Principal,
): InjectOptions {
  return {
    method,
    url: pathOf(url, fixture, id),
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

async function checkOwner(method: string, url: string, fixture: RouteFixture): Promise<void> {
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
  const todo = fixture.target === 'none' ? undefined : await createTodoOfA();
  const response = await t.inject(requestOf(method, url, fixture, todo?.id, 'owner'));
  expect(response.statusCode, response.body).toBe(fixture.success);
  if (!todo || method === 'HEAD') return;
  if (fixture.target === 'todo' && response.statusCode === 200) {
    expect(response.json<Todo>().id).toBe(todo.id);
  }
  if (method === 'GET' && fixture.target === 'collection') {
    expect(response.json<Todo[]>().map((listed) => listed.id)).toContain(todo.id);
  }
  if (method === 'POST' && fixture.target === 'collection') {
    const created = response.json<Todo>();
    const row = await t.database.db
      .selectFrom('todos')
      .select('owner_id')
      .where('id', '=', created.id)
      .executeTakeFirst();
    expect(row?.owner_id).toBe(OWNER_A);
  }
}

async function checkOtherPrincipal(
  method: string,
  url: string,
  fixture: RouteFixture,
  principal: Exclude<Principal, 'owner'>,
): Promise<void> {
  const todo = await createTodoOfA();
  if (principal === 'other-owner' && fixture.target === 'collection') {
    // B's own data is empty before each of its collection requests.
    await t.database.db.deleteFrom('todos').where('owner_id', '=', OWNER_B).execute();
  }
  const before = await checksumOf(OWNER_A);
  const request = requestOf(method, url, fixture, todo.id, principal);
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
  } else if (fixture.target === 'todo') {
    // API1: A's todo and a todo that never existed answer B identically.
    const missing = await t.inject(requestOf(method, url, fixture, uuidv7(), principal));
    expect(response.statusCode, response.body).toBe(404);
    if (method !== 'HEAD') expectProblem(response, 404, 'not-found');
    expect(missing.statusCode).toBe(404);
    expect(bodyWithoutRequestIdentity(response)).toBe(bodyWithoutRequestIdentity(missing));
    expect(stableHeaders(response)).toEqual(stableHeaders(missing));
  } else {
    expect(response.statusCode, response.body).toBe(fixture.success);
    if (method === 'GET') expect(response.json()).toEqual([]);
    if (method === 'HEAD') expect(response.headers['content-length']).toBe('2');
    if (method === 'POST') {
      const created = response.json<Todo>();
      const row = await t.database.db
        .selectFrom('todos')
        .select('owner_id')
        .where('id', '=', created.id)
        .executeTakeFirst();
      expect(row?.owner_id).toBe(OWNER_B);
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
      for (const principal of PRINCIPALS) {
        const todo = await createTodoOfA();
        const before = await checksumOf(OWNER_A);
        for (const method of ['TRACE', 'PROPFIND']) {
          const response = await t.inject({
            method,
            url: pathOf(url, fixture, todo.id),
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
