import { execFile } from 'node:child_process';
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app.js';
import { generateApiKeyToken, secretMatches } from '../src/auth/api-key-token.js';
import { createApiKey } from '../src/auth/api-keys.js';
import { apiKeysRepository } from '../src/auth/api-keys.repository.js';
import { SCOPES, type Scope } from '../src/auth/scopes.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/create-database.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import type { Problem } from '../src/http/problem.js';
import { ACTIONS } from '../src/todos/todo-transitions.js';
import type { Todo } from '../src/todos/todo.schemas.js';
import { expectProblem } from './helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';
import {
  TEST_DIALECT,
  createTestDatabase,
  tableNames,
  type TestDatabase,
} from './helpers/test-database.js';

// A pass-through spy on the one function secrets must be compared with.
vi.mock('node:crypto', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:crypto')>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

/**
 * API keys and the authenticator end to end (API.md §7, RELIABILITY.md §3 API2 and §9): the
 * token format, what is stored, how tokens are checked, where they are accepted, what they
 * allow, what the logs keep of them, and the `npm run tokens` CLI.
 */

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TOKEN_PATTERN = /^tdk_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

function partsOf(token: string): { id: string; secret: string } {
  const match = TOKEN_PATTERN.exec(token);
  if (!match?.[1] || !match[2]) throw new Error(`not an API key token: ${token}`);
  return { id: match[1], secret: match[2] };
}

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** Replaces the character at `index` with another one of the same alphabet. */
function flip(token: string, index: number): string {
  const char = token.charAt(index);
  const replacement = char === 'a' ? 'b' : char === '0' ? '1' : /[0-9a-f]/.test(char) ? '0' : 'a';
  return token.slice(0, index) + replacement + token.slice(index + 1);
}

/** The body without the members that name the request itself. */
function withoutRequestIdentity(
  response: LightMyRequestResponse,
): Omit<Problem, 'instance' | 'request_id'> {
  const { instance: _instance, request_id: _requestId, ...rest } = response.json<Problem>();
  return rest;
}

function expectInvalidToken(response: LightMyRequestResponse, detail?: string): Problem {
  const problem = expectProblem(response, 401, 'unauthenticated');
  expect(response.headers['www-authenticate']).toMatch(
    /^Bearer realm="todo-api", error="invalid_token"/,
  );
  if (detail !== undefined) expect(problem.detail).toBe(detail);
  return problem;
}

describe('API keys', () => {
  let t: TestApp;
  let clock: Date;
  beforeEach(async () => {
    clock = new Date('2031-05-01T08:00:00.000Z');
    t = await buildTestApp({ env: { AUTH_MODE: 'required' }, now: () => clock });
  });
  afterEach(async () => {
    await t.close();
  });

  const advance = (ms: number) => {
    clock = new Date(clock.getTime() + ms);
  };
  const list = (authorization: string) =>
    t.inject({ method: 'GET', url: '/api/todos', headers: { authorization } });

  it('issues tokens of the form tdk_<24 hex>_<43 base64url>, every one different', async () => {
    const tokens = new Set<string>();
    for (let i = 0; i < 25; i++) {
      const { row, token } = await createApiKey(t.database, { ownerId: 'alice', scopes: SCOPES });
      expect(token).toMatch(TOKEN_PATTERN);
      expect(partsOf(token).id).toBe(row.id);
      tokens.add(token);
    }
    expect(tokens.size).toBe(25);
    expect((await t.bearer('bob')).slice('Bearer '.length)).toMatch(TOKEN_PATTERN);
  });

  it('stores only the SHA-256 of the secret: no row of any table holds the secret', async () => {
    const created = await createApiKey(t.database, { ownerId: 'alice', scopes: SCOPES });
    const { secret } = partsOf(created.token);
    expect((await list(`Bearer ${created.token}`)).statusCode).toBe(200);

    const rows = await t.database.db.selectFrom('api_keys').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]?.secret_hash).toBe(sha256Hex(secret));

    // Every table, whole: the hash is there (the dump sees the row), the secret is not.
    const tables = await tableNames(t.database.db);
    expect(tables).toContain('api_keys');
    const dump: unknown[] = [];
    for (const table of tables) {
      dump.push((await sql`select * from ${sql.table(table)}`.execute(t.database.db)).rows);
    }
    const text = JSON.stringify(dump);
    expect(text).toContain(sha256Hex(secret));
    for (const needle of [secret, created.token]) expect(text).not.toContain(needle);
  });

  it.runIf(TEST_DIALECT === 'sqlite')(
    'never writes the secret to the SQLite file or its WAL, in any text encoding',
    async () => {
      const created = await createApiKey(t.database, { ownerId: 'alice', scopes: SCOPES });
      const { secret } = partsOf(created.token);
      expect((await list(`Bearer ${created.token}`)).statusCode).toBe(200);

      // Byte for byte, free pages included: the hash is there (the scan sees the row), the
      // secret is not, in any encoding SQLite could use for text.
      const directory = t.testDatabase.directory ?? '';
      const files = readdirSync(directory).map((name) => readFileSync(join(directory, name)));
      const bytes = Buffer.concat(files);
      expect(files.length).toBeGreaterThan(0);
      expect(bytes.includes(sha256Hex(secret))).toBe(true);
      for (const needle of [secret, created.token]) {
        expect(bytes.includes(Buffer.from(needle, 'utf8'))).toBe(false);
        expect(bytes.includes(Buffer.from(needle, 'utf16le'))).toBe(false);
      }
    },
  );

  it('compares secrets with crypto.timingSafeEqual, for a wrong secret and an unknown id alike', async () => {
    const spy = vi.mocked(timingSafeEqual);
    const created = await createApiKey(t.database, { ownerId: 'alice', scopes: SCOPES });
    const { id, secret } = partsOf(created.token);

    spy.mockClear();
    expect(secretMatches(secret, sha256Hex(secret))).toBe(true);
    expect(secretMatches(`${secret.slice(0, -1)}x`, sha256Hex(secret))).toBe(false);
    expect(spy).toHaveBeenCalledTimes(2);
    for (const [presented, stored] of spy.mock.calls) {
      expect(Buffer.isBuffer(presented) && presented.length).toBe(32);
      expect(Buffer.isBuffer(stored) && stored.length).toBe(32);
    }

    spy.mockClear();
    const wrongSecret = `tdk_${id}_${generateApiKeyToken().secret}`;
    expectInvalidToken(await list(`Bearer ${wrongSecret}`));
    expect(spy).toHaveBeenCalledTimes(1);

    spy.mockClear();
    expectInvalidToken(await list(`Bearer ${generateApiKeyToken().token}`));
    expect(spy).toHaveBeenCalledTimes(1);

    // And the verifier never compares hashes as strings.
    const verifier = readFileSync(join(ROOT, 'src/auth/api-key-verifier.ts'), 'utf8');
    expect(verifier).toMatch(/secretMatches\(/);
    expect(verifier).not.toMatch(/secret_hash\s*[!=]==|[!=]==\s*\w*\.?secret_hash/);
  });

  it('refuses a revoked key on the very next request', async () => {
    const created = await createApiKey(t.database, { ownerId: 'alice', scopes: SCOPES });
    const authorization = `Bearer ${created.token}`;
    expect((await list(authorization)).statusCode).toBe(200);
    await t.database.writeTransaction((trx) =>
      apiKeysRepository.revoke(trx, created.row.id, clock.toISOString()),
    );
    expectInvalidToken(await list(authorization), 'The token has been revoked.');
  });

  it('refuses a key from the moment it expires', async () => {
    const created = await createApiKey(
      t.database,
      { ownerId: 'alice', scopes: SCOPES, expiresAt: new Date(clock.getTime() + 3_600_000) },
      clock,
    );
    const authorization = `Bearer ${created.token}`;
    expect((await list(authorization)).statusCode).toBe(200);
    advance(3_600_000 - 1);
    expect((await list(authorization)).statusCode).toBe(200);
    advance(1);
    expectInvalidToken(await list(authorization), 'The token has expired.');
  });

  it('sets last_used_at on first use and rewrites it at most once a minute', async () => {
    const created = await createApiKey(t.database, { ownerId: 'alice', scopes: SCOPES }, clock);
    const lastUsed = async () =>
      (await apiKeysRepository.findById(t.database.db, created.row.id))?.last_used_at;
    const authorization = `Bearer ${created.token}`;
    expect(await lastUsed()).toBeNull();

    const first = clock.toISOString();
    expect((await list(authorization)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(first);
    advance(30_000);
    expect((await list(authorization)).statusCode).toBe(200);
    advance(29_999);
    expect((await list(authorization)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(first);
    advance(1);
    expect((await list(authorization)).statusCode).toBe(200);
    expect(await lastUsed()).toBe(clock.toISOString());
  });
});

describe('the Authorization header', () => {
  let t: TestApp;
  let alice: string;
  beforeAll(async () => {
    t = await buildTestApp({ env: { AUTH_MODE: 'required' } });
    alice = await t.bearer('alice');
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 401 without a token, with a challenge that carries no error code', async () => {
    const response = await t.inject({ method: 'GET', url: '/api/todos' });
    expectProblem(response, 401, 'unauthenticated');
    expect(response.headers['www-authenticate']).toBe('Bearer realm="todo-api"');
  });

  it.each(['access_token', 'token', 'api_key'])(
    'refuses a valid token in the query parameter %s, even beside a valid header',
    async (name) => {
      const token = alice.slice('Bearer '.length);
      for (const headers of [{}, { authorization: alice }]) {
        const response = await t.inject({
          method: 'GET',
          url: `/api/todos?${name}=${encodeURIComponent(token)}`,
          headers,
        });
        expectProblem(response, 401, 'unauthenticated');
        expect(response.headers['www-authenticate']).toContain('error="invalid_request"');
      }
    },
  );

  it('refuses two Authorization headers, even when both are valid', async () => {
    // Capitalised: Node's header types allow repeated values only for names they do not know.
    const twice = { Authorization: [alice, alice] };
    const response = await t.inject({ method: 'GET', url: '/api/todos', headers: twice });
    expectProblem(response, 401, 'unauthenticated');

    // Over a real socket, where Node keeps only the first of repeated headers.
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const mallory = await t.bearer('mallory');
    const status = await new Promise<number>((resolve, reject) => {
      const outgoing = httpRequest(
        { host: '127.0.0.1', port, path: '/api/todos', method: 'GET' },
        (incoming) => {
          incoming.resume();
          resolve(incoming.statusCode ?? 0);
        },
      );
      outgoing.setHeader('authorization', [alice, mallory]);
      outgoing.on('error', reject);
      outgoing.end();
    });
    expect(status).toBe(401);
  });

  it.each(['bearer', 'BEARER', 'Bearer', 'bEaReR'])(
    'accepts the scheme spelled %s',
    async (scheme) => {
      const token = alice.slice('Bearer '.length);
      const response = await t.inject({
        method: 'GET',
        url: '/api/todos',
        headers: { authorization: `${scheme} ${token}` },
      });
      expect(response.statusCode).toBe(200);
    },
  );

  it('answers a token with one flipped character exactly like an unknown token', async () => {
    const token = alice.slice('Bearer '.length);
    const unknown = await t.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: `Bearer ${generateApiKeyToken().token}` },
    });
    expectInvalidToken(unknown, 'The token is not valid.');
    // In the prefix, the id, the separator, the secret's first and last characters.
    for (const index of [0, 4, 27, 28, 29, token.length - 1]) {
      const flipped = flip(token, index);
      expect(flipped).not.toBe(token);
      const response = await t.inject({
        method: 'GET',
        url: '/api/todos',
        headers: { authorization: `Bearer ${flipped}` },
      });
      expectInvalidToken(response);
      expect(withoutRequestIdentity(response), `flipped at ${index}`).toEqual(
        withoutRequestIdentity(unknown),
      );
      expect(response.headers['www-authenticate']).toBe(unknown.headers['www-authenticate']);
    }
  });

  it('answers 403 insufficient-scope naming the scope a token lacks', async () => {
    const reader = await t.bearer('alice', ['todos:read']);
    const write = await t.inject({
      method: 'POST',
      url: '/api/todos',
      headers: { authorization: reader },
      payload: { title: 'Not allowed' },
    });
    const problem = expectProblem(write, 403, 'insufficient-scope');
    expect(problem.required_scope).toBe('todos:write');
    expect(write.headers['www-authenticate']).toBe(
      'Bearer realm="todo-api", error="insufficient_scope", scope="todos:write"',
    );
    const rows = await t.database.db
      .selectFrom('todos')
      .select('id')
      .where('title', '=', 'Not allowed')
      .execute();
    expect(rows).toEqual([]);

    const writer = await t.bearer('alice', ['todos:write']);
    const read = await t.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: writer },
    });
    expect(expectProblem(read, 403, 'insufficient-scope').required_scope).toBe('todos:read');
    expect(read.headers['www-authenticate']).toBe(
      'Bearer realm="todo-api", error="insufficient_scope", scope="todos:read"',
    );
  });
});

const ANONYMOUS_SETUPS: readonly { mode: string; env: Readonly<Record<string, string>> }[] = [
  { mode: 'AUTH_MODE=anonymous', env: { AUTH_MODE: 'anonymous' } },
  { mode: 'the loopback default (AUTH_MODE=auto, HOST=127.0.0.1)', env: {} },
];

describe.each(ANONYMOUS_SETUPS)('with $mode', ({ env }) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env });
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves requests without a token as the anonymous owner', async () => {
    expect((await t.inject({ method: 'GET', url: '/api/todos' })).statusCode).toBe(200);
  });

  it('still refuses a presented token that is not valid', async () => {
    const alice = await t.bearer('alice');
    const revoked = await createApiKey(t.database, { ownerId: 'alice', scopes: SCOPES });
    await t.database.writeTransaction((trx) =>
      apiKeysRepository.revoke(trx, revoked.row.id, new Date().toISOString()),
    );
    for (const authorization of [
      'Bearer',
      'Basic YWxpY2U6c2VjcmV0',
      `Bearer ${generateApiKeyToken().token}`,
      `Bearer ${flip(alice.slice('Bearer '.length), 40)}`,
      `Bearer ${revoked.token}`,
      'Bearer not-a-token',
    ]) {
      const response = await t.inject({
        method: 'GET',
        url: '/api/todos',
        headers: { authorization },
      });
      expectInvalidToken(response);
    }
    const query = await t.inject({
      method: 'GET',
      url: `/api/todos?access_token=${alice.slice('Bearer '.length)}`,
    });
    expectProblem(query, 401, 'unauthenticated');
  });

  it("acts as a valid token's owner, not as the anonymous one", async () => {
    const alice = await t.bearer('alice');
    const created = await t.inject({
      method: 'POST',
      url: '/api/todos',
      headers: { authorization: alice },
      payload: { title: "Alice's, not anonymous" },
    });
    expect(created.statusCode).toBe(201);
    const { id } = created.json<Todo>();
    const row = await t.database.db
      .selectFrom('todos')
      .select('owner_id')
      .where('id', '=', id)
      .executeTakeFirst();
    expect(row?.owner_id).toBe('alice');

    const anonymous = await t.inject({ method: 'GET', url: '/api/todos' });
    expect(anonymous.json<Todo[]>().map((todo) => todo.id)).not.toContain(id);
    const asAlice = await t.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: alice },
    });
    expect(asAlice.json<Todo[]>().map((todo) => todo.id)).toContain(id);
  });
});

describe('route scopes', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  beforeEach(async () => {
    testDatabase = await createTestDatabase('todo-api-scopes-');
    database = createDatabase(testDatabase.url);
    await migrateToLatest(database.db);
  });
  afterEach(async () => {
    await database.close();
    await testDatabase.drop();
  });

  async function appWith(register: (app: FastifyInstance) => void): Promise<FastifyInstance> {
    const config = loadConfig({ DATABASE_URL: testDatabase.url });
    const app = await buildApp({ config, database, logger: false });
    register(app);
    return app;
  }

  it('refuses to start when a route declares no config.scope, naming the route', async () => {
    const app = await appWith((instance) => {
      instance.get('/unscoped', async () => ({ ok: true }));
    });
    await expect(app.ready()).rejects.toThrow(/Route GET \/unscoped declares no config\.scope/);
    await app.close().catch(() => undefined);
  });

  it('refuses to start when a plugin route declares no config.scope', async () => {
    const app = await appWith((instance) => {
      void instance.register(
        async (plugin) => {
          plugin.delete('/things/:id', { config: {} }, async () => ({ ok: true }));
        },
        { prefix: '/api' },
      );
    });
    await expect(app.ready()).rejects.toThrow(
      /Route DELETE \/api\/things\/:id declares no config\.scope/,
    );
    await app.close().catch(() => undefined);
  });

  it('starts when the same route declares a scope', async () => {
    const app = await appWith((instance) => {
      instance.get('/scoped', { config: { scope: 'todos:read' } }, async () => ({ ok: true }));
    });
    await expect(app.ready()).resolves.toBeDefined();
    const response = await app.inject({ method: 'GET', url: '/scoped' });
    expect(response.statusCode).toBe(200);
    await app.close();
  });
});

describe('the OpenAPI document', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  interface Operation {
    security?: Record<string, string[]>[];
    responses?: Record<string, unknown>;
  }
  interface Document {
    components: { securitySchemes: Record<string, Record<string, unknown>> };
    paths: Record<string, Record<string, Operation>>;
  }

  it('defines the bearer scheme; protected operations list their scope, public ones none', async () => {
    const response = await t.inject({ method: 'GET', url: '/api/openapi.json' });
    const document = response.json<Document>();
    expect(document.components.securitySchemes.bearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });

    const seen = { public: 0, protected: 0 };
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const label = `${method.toUpperCase()} ${path}`;
        if (path.startsWith('/api/webhooks')) {
          expect(operation.security, label).toEqual([{ bearer: ['webhooks:manage'] }]);
          seen.protected++;
        } else if (path === '/api/todos' || path.startsWith('/api/todos/')) {
          const scope = method === 'get' ? 'todos:read' : 'todos:write';
          expect(operation.security, label).toEqual([{ bearer: [scope] }]);
          expect(Object.keys(operation.responses ?? {}), label).toEqual(
            expect.arrayContaining(['401', '403']),
          );
          seen.protected++;
        } else {
          expect(operation.security, label).toEqual([]);
          seen.public++;
        }
      }
    }
    // List, create, bulk delete; get, replace, patch, delete; one operation per action;
    // restore, changes, events; nine webhook operations.
    expect(seen.protected).toBe(3 + 4 + Object.keys(ACTIONS).length + 3 + 9);
    expect(seen.public).toBeGreaterThanOrEqual(5);
  });
});

describe('logs', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let app: FastifyInstance;
  let output: string;

  beforeEach(async () => {
    testDatabase = await createTestDatabase('todo-api-auth-log-');
    const config = loadConfig({
      DATABASE_URL: testDatabase.url,
      AUTH_MODE: 'required',
      LOG_LEVEL: 'trace',
      RATE_LIMIT_MAX: '0',
    });
    database = createDatabase(config.databaseUrl);
    await migrateToLatest(database.db);
    output = '';
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    app = await buildApp({ config, database, logStream: stream });
  });
  afterEach(async () => {
    await app.close();
    await database.close();
    await testDatabase.drop();
  });

  const newToken = async (scopes: readonly Scope[] = SCOPES) =>
    (await createApiKey(database, { ownerId: 'alice', scopes })).token;

  it('never contain a token, whatever happens to the request', async () => {
    const valid = await newToken();
    const reader = await newToken(['todos:read']);
    const revoked = await createApiKey(database, { ownerId: 'alice', scopes: SCOPES });
    await database.writeTransaction((trx) =>
      apiKeysRepository.revoke(trx, revoked.row.id, new Date().toISOString()),
    );
    const flipped = flip(valid, valid.length - 1);
    const unknown = generateApiKeyToken().token;
    const twice = { Authorization: [valid, valid] };
    const requests: InjectOptions[] = [
      { method: 'GET', url: '/api/todos', headers: { authorization: `Bearer ${valid}` } },
      { method: 'GET', url: '/api/todos', headers: { authorization: `bearer ${valid}` } },
      {
        method: 'POST',
        url: '/api/todos',
        headers: { authorization: `Bearer ${valid}` },
        payload: { title: 'logged?' },
      },
      {
        method: 'POST',
        url: '/api/todos',
        headers: { authorization: `Bearer ${reader}` },
        payload: { title: 'refused' },
      },
      { method: 'GET', url: '/api/todos', headers: { authorization: `Bearer ${flipped}` } },
      { method: 'GET', url: '/api/todos', headers: { authorization: `Bearer ${unknown}` } },
      {
        method: 'GET',
        url: '/api/todos',
        headers: { authorization: `Bearer ${revoked.token}` },
      },
      { method: 'GET', url: '/api/todos', headers: twice },
      { method: 'GET', url: '/nowhere', headers: { authorization: `Bearer ${valid}` } },
      { method: 'GET', url: '/healthz', headers: { authorization: `Bearer ${valid}` } },
    ];
    const statuses: number[] = [];
    for (const request of requests) {
      statuses.push((await app.inject(request)).statusCode);
    }
    expect(statuses).toEqual([200, 200, 201, 403, 401, 401, 401, 401, 404, 200]);

    const lines = output.split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThanOrEqual(requests.length * 2);
    for (const token of [valid, reader, revoked.token, flipped, unknown]) {
      const { secret } = partsOf(token);
      expect(output).not.toContain(secret);
      expect(output).not.toContain(secret.slice(0, 16));
    }
  });

  // The request line is logged before the token is refused; the URL serializer masks it.
  it('never contain a token even when a client sends it in the query string', async () => {
    const valid = await newToken();
    for (const name of ['access_token', 'token', 'api_key']) {
      const response = await app.inject({ method: 'GET', url: `/api/todos?${name}=${valid}` });
      expect(response.statusCode).toBe(401);
    }
    expect(output).not.toContain(partsOf(valid).secret);
    expect(output).toContain('access_token=%5BREDACTED%5D');
  });
});

describe('npm run tokens', () => {
  interface CliResult {
    readonly code: number;
    readonly stdout: string;
    readonly stderr: string;
  }
  interface CreatedJson {
    id: string;
    owner: string;
    scopes: string[];
    token: string;
    expires_at: string | null;
  }

  const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
  let testDatabase: TestDatabase;
  let databaseUrl: string;
  let t: { app: FastifyInstance; database: Database } | undefined;

  beforeAll(async () => {
    testDatabase = await createTestDatabase('todo-api-tokens-cli-');
    databaseUrl = testDatabase.url;
  });
  afterAll(async () => {
    await t?.app.close();
    await t?.database.close();
    await testDatabase.drop();
  });

  function tokens(...args: string[]): Promise<CliResult> {
    return new Promise((resolve) => {
      execFile(
        TSX,
        [join(ROOT, 'src/auth/tokens-cli.ts'), ...args],
        { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** An app on the CLI's database, opened once the CLI has created it. */
  async function serviceApp(): Promise<FastifyInstance> {
    if (!t) {
      const config = loadConfig({ DATABASE_URL: databaseUrl, AUTH_MODE: 'required' });
      const database = createDatabase(config.databaseUrl);
      await migrateToLatest(database.db);
      t = { app: await buildApp({ config, database, logger: false }), database };
    }
    return t.app;
  }

  let textToken = '';
  let json: CreatedJson | undefined;

  it('create prints the token on a line of its own', { timeout: 60_000 }, async () => {
    const result = await tokens(
      'create',
      '--owner',
      'alice',
      '--scopes',
      'todos:read,todos:write',
      '--expires',
      '30d',
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.split('\n').map((line) => line.trim());
    const tokenLines = lines.filter((line) => TOKEN_PATTERN.test(line));
    expect(tokenLines).toHaveLength(1);
    textToken = tokenLines[0] ?? '';
  });

  it(
    'create --json prints one JSON object with id, owner, scopes and token',
    { timeout: 60_000 },
    async () => {
      const before = Date.now();
      const result = await tokens(
        'create',
        '--owner',
        'bob',
        '--scopes',
        'todos:read',
        '--expires',
        '30d',
        '--json',
      );
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim().split('\n')).toHaveLength(1);
      json = JSON.parse(result.stdout) as CreatedJson;
      expect(json).toMatchObject({ owner: 'bob', scopes: ['todos:read'] });
      expect(json.token).toMatch(TOKEN_PATTERN);
      expect(partsOf(json.token).id).toBe(json.id);
      expect(Object.keys(json)).not.toContain('secret_hash');
      const expiresIn = Date.parse(json.expires_at ?? '') - before;
      expect(Math.abs(expiresIn - 30 * 86_400_000)).toBeLessThan(60_000);
    },
  );

  it('the tokens work against an app on the same database, as their owners', async () => {
    const app = await serviceApp();
    const created = await app.inject({
      method: 'POST',
      url: '/api/todos',
      headers: { authorization: `Bearer ${textToken}` },
      payload: { title: 'Made with a CLI token' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const row = await t?.database.db
      .selectFrom('todos')
      .select('owner_id')
      .where('id', '=', created.json<Todo>().id)
      .executeTakeFirst();
    expect(row?.owner_id).toBe('alice');

    const bobWrites = await app.inject({
      method: 'POST',
      url: '/api/todos',
      headers: { authorization: `Bearer ${json?.token ?? ''}` },
      payload: { title: 'Bob may only read' },
    });
    expectProblem(bobWrites, 403, 'insufficient-scope');
    const bobReads = await app.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: `Bearer ${json?.token ?? ''}` },
    });
    expect(bobReads.statusCode).toBe(200);
    expect(bobReads.json()).toEqual([]);
  });

  it('list shows the keys but never a token or a hash', { timeout: 60_000 }, async () => {
    const hashes =
      (await t?.database.db.selectFrom('api_keys').select('secret_hash').execute()) ?? [];
    expect(hashes).toHaveLength(2);
    const { id } = partsOf(textToken);
    for (const args of [['list'], ['list', '--json']]) {
      const result = await tokens(...args);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toContain(id);
      expect(result.stdout).toContain(json?.id ?? 'missing');
      expect(result.stdout).toContain('alice');
      for (const token of [textToken, json?.token ?? '']) {
        expect(result.stdout).not.toContain(partsOf(token).secret);
      }
      for (const { secret_hash } of hashes) expect(result.stdout).not.toContain(secret_hash);
    }
  });

  it('revoke <id> stops the token on its next request', { timeout: 60_000 }, async () => {
    const app = await serviceApp();
    const authorization = `Bearer ${textToken}`;
    expect(
      (await app.inject({ method: 'GET', url: '/api/todos', headers: { authorization } }))
        .statusCode,
    ).toBe(200);
    const result = await tokens('revoke', partsOf(textToken).id);
    expect(result.code, result.stderr).toBe(0);
    const after = await app.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization },
    });
    expectInvalidToken(after, 'The token has been revoked.');
  });

  it.each([
    {
      problem: 'an unknown scope',
      args: ['create', '--owner', 'alice', '--scopes', 'todos:read,admin'],
    },
    { problem: 'no owner', args: ['create', '--scopes', 'todos:read'] },
    { problem: 'no scopes', args: ['create', '--owner', 'alice'] },
    { problem: 'an unknown command', args: ['mint'] },
  ])('exits 2 with the usage for $problem', { timeout: 60_000 }, async ({ args }) => {
    const result = await tokens(...args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: npm run tokens');
    expect(result.stdout).not.toMatch(/tdk_/);
  });

  it('exits 1 when revoking an unknown id', { timeout: 60_000 }, async () => {
    const result = await tokens('revoke', '0123456789abcdef01234567');
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No API key with id 0123456789abcdef01234567');
  });
});
