import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import {
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import type { JwtConfig } from '../config.js';
import { AppError } from '../http/app-error.js';
import { createJwtVerifier, scopesOf } from './jwt-verifier.js';

const ISSUER = 'https://issuer.test/';
const AUDIENCE = 'https://todo-api.test';
const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

interface SigningKey {
  readonly kid: string;
  readonly alg: string;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly jwk: JWK;
}

async function signingKey(kid: string, alg: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicKey, jwk };
}

/** A loopback JWKS endpoint that counts its requests and can be made to fail or go away. */
class JwksServer {
  hits = 0;
  failing = false;

  private constructor(
    private readonly server: Server,
    public keys: readonly JWK[],
  ) {}

  static async start(keys: readonly JWK[]): Promise<JwksServer> {
    const server = createServer();
    const jwks = new JwksServer(server, keys);
    server.on('request', (_request, response) => {
      jwks.hits += 1;
      if (jwks.failing) {
        response.writeHead(503).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/jwk-set+json' });
      response.end(JSON.stringify({ keys: jwks.keys }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return jwks;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/.well-known/jwks.json`;
  }

  async stop(): Promise<void> {
    if (!this.server.listening) return;
    const closed = new Promise<void>((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
    this.server.closeAllConnections();
    await closed;
  }
}

let primary: SigningKey;
let ecKey: SigningKey;
let rotated: SigningKey;
let jwks: JwksServer;

function config(overrides: Partial<JwtConfig> = {}): JwtConfig {
  return {
    jwksUrl: jwks.url,
    issuer: ISSUER,
    audience: AUDIENCE,
    algorithms: ['RS256'],
    clockToleranceSeconds: 30,
    ...overrides,
  };
}

/** A token valid for ten minutes from now unless `claims` says otherwise; `undefined` drops a claim. */
async function sign(
  claims: Record<string, unknown> = {},
  key: SigningKey = primary,
  kid: string = key.kid,
): Promise<string> {
  const now = Math.floor(Date.now() / SECOND);
  const payload = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: 'user-1',
    iat: now,
    exp: now + 600,
    scope: 'todos:read',
    ...claims,
  } as JWTPayload;
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, kid }).sign(key.privateKey);
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

async function expectInvalidToken(verification: Promise<unknown>, detail?: string): Promise<void> {
  const error: unknown = await verification.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(AppError);
  const appError = error as AppError;
  expect(appError.status).toBe(401);
  expect(appError.code).toBe('unauthenticated');
  expect(appError.options.headers?.['www-authenticate']).toContain('error="invalid_token"');
  expect(appError.detail).not.toMatch(/["\\]/);
  if (detail !== undefined) expect(appError.detail).toBe(detail);
}

beforeAll(async () => {
  [primary, ecKey, rotated] = await Promise.all([
    signingKey('key-1', 'RS256'),
    signingKey('ec-1', 'ES256'),
    signingKey('key-2', 'RS256'),
  ]);
});

beforeEach(async () => {
  // jose reads Date.now() for cache age and cooldown, so a fake Date drives them; timers stay real.
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));
  jwks = await JwksServer.start([primary.jwk, ecKey.jwk]);
});

afterEach(async () => {
  vi.useRealTimers();
  await jwks.stop();
});

function advance(ms: number): void {
  vi.setSystemTime(Date.now() + ms);
}

describe('createJwtVerifier: valid tokens', () => {
  it('returns sub as the owner, the issuer as the credential and our scopes from `scope`', async () => {
    const verifier = createJwtVerifier(config());

    const principal = await verifier.verify(
      await sign({ sub: 'alice', scope: 'openid todos:read  todos:write email' }),
    );

    expect(principal.ownerId).toBe('alice');
    expect(principal.credential).toEqual({ kind: 'jwt', issuer: ISSUER });
    expect([...principal.scopes].sort()).toEqual(['todos:read', 'todos:write']);
  });

  it.each([
    ['an array', ['webhooks:manage', 'profile']],
    ['a string', 'profile webhooks:manage'],
  ])('reads scopes from `scp` given as %s', async (_form, scp) => {
    const verifier = createJwtVerifier(config());

    const principal = await verifier.verify(await sign({ scope: undefined, scp }));

    expect([...principal.scopes]).toEqual(['webhooks:manage']);
  });

  it('authenticates a token with none of our scopes, granting none', async () => {
    const verifier = createJwtVerifier(config());

    const principal = await verifier.verify(await sign({ scope: 'openid profile' }));

    expect(principal.ownerId).toBe('user-1');
    expect(principal.scopes.size).toBe(0);
  });

  it('accepts a token that expired within the clock tolerance', async () => {
    const verifier = createJwtVerifier(config({ clockToleranceSeconds: 30 }));
    const now = Math.floor(Date.now() / SECOND);

    const principal = await verifier.verify(await sign({ iat: now - 600, exp: now - 10 }));

    expect(principal.ownerId).toBe('user-1');
  });

  it('fetches the JWKS once for many tokens signed with a known key', async () => {
    const verifier = createJwtVerifier(config());

    for (let i = 0; i < 20; i += 1) {
      await verifier.verify(await sign({ sub: `user-${i}` }));
    }

    expect(jwks.hits).toBe(1);
  });
});

describe('createJwtVerifier: rejected tokens', () => {
  it('rejects alg none without fetching keys', async () => {
    const verifier = createJwtVerifier(config());
    const now = Math.floor(Date.now() / SECOND);
    const claims = { iss: ISSUER, aud: AUDIENCE, sub: 'mallory', exp: now + 600 };
    const token = `${base64url({ alg: 'none', kid: primary.kid })}.${base64url(claims)}.`;

    await expectInvalidToken(verifier.verify(token), 'The token is not valid.');
    expect(jwks.hits).toBe(0);
  });

  it('rejects HS256 signed with the bytes of the RSA public key', async () => {
    const verifier = createJwtVerifier(config({ algorithms: ['RS256', 'ES256'] }));
    const publicKeyBytes = new TextEncoder().encode(await exportSPKI(primary.publicKey));
    const now = Math.floor(Date.now() / SECOND);
    const token = await new SignJWT({ iss: ISSUER, aud: AUDIENCE, sub: 'mallory', exp: now + 600 })
      .setProtectedHeader({ alg: 'HS256', kid: primary.kid })
      .sign(publicKeyBytes);

    await expectInvalidToken(verifier.verify(token), 'The token is not valid.');
  });

  it('rejects an algorithm outside the allow-list even with a published key', async () => {
    const verifier = createJwtVerifier(config({ algorithms: ['RS256'] }));

    await expectInvalidToken(verifier.verify(await sign({}, ecKey)), 'The token is not valid.');
    // The same token passes once ES256 is allowed, so the allow-list is what rejected it.
    const allowing = createJwtVerifier(config({ algorithms: ['RS256', 'ES256'] }));
    await expect(allowing.verify(await sign({}, ecKey))).resolves.toMatchObject({
      ownerId: 'user-1',
    });
  });

  it('rejects an expired token', async () => {
    const verifier = createJwtVerifier(config({ clockToleranceSeconds: 30 }));
    const now = Math.floor(Date.now() / SECOND);

    await expectInvalidToken(
      verifier.verify(await sign({ iat: now - 600, exp: now - 31 })),
      'The token has expired.',
    );
  });

  it('rejects a token whose nbf is in the future', async () => {
    const verifier = createJwtVerifier(config({ clockToleranceSeconds: 30 }));
    const now = Math.floor(Date.now() / SECOND);

    await expectInvalidToken(
      verifier.verify(await sign({ nbf: now + 120 })),
      'The token is not yet valid.',
    );
  });

  it.each([
    ['a wrong iss', { iss: 'https://other-issuer.test/' }],
    ['a wrong aud', { aud: 'https://other-api.test' }],
    ['no sub', { sub: undefined }],
    ['an empty sub', { sub: '' }],
    ['a sub with a NUL', { sub: 'alice\u0000' }],
    ['a sub with a line break', { sub: 'alice\nbob' }],
    ['a sub that is not a string', { sub: 42 }],
    ['no exp', { exp: undefined }],
  ])('rejects a token with %s', async (_case, claims) => {
    const verifier = createJwtVerifier(config());

    await expectInvalidToken(verifier.verify(await sign(claims)), 'The token is not valid.');
  });

  it('rejects a token signed with a key whose kid the JWKS does not have', async () => {
    const verifier = createJwtVerifier(config());

    await expectInvalidToken(verifier.verify(await sign({}, rotated)), 'The token is not valid.');
  });

  it('rejects a token whose payload was changed after signing', async () => {
    const verifier = createJwtVerifier(config());
    const [header, , signature] = (await sign({ sub: 'mallory' })).split('.');
    const now = Math.floor(Date.now() / SECOND);
    const payload = base64url({ iss: ISSUER, aud: AUDIENCE, sub: 'alice', exp: now + 600 });

    await expectInvalidToken(
      verifier.verify(`${header ?? ''}.${payload}.${signature ?? ''}`),
      'The token is not valid.',
    );
  });

  it('rejects a string that is not a JWT', async () => {
    const verifier = createJwtVerifier(config());

    await expectInvalidToken(verifier.verify('not-a-jwt'), 'The token is not valid.');
  });
});

describe('createJwtVerifier: key refetching', () => {
  it('refetches for 1,000 unknown-kid tokens at most once per 30 s cooldown', async () => {
    const verifier = createJwtVerifier(config());
    await verifier.verify(await sign());
    expect(jwks.hits).toBe(1);
    advance(31 * SECOND);
    const unknown = await Promise.all(
      Array.from({ length: 1000 }, (_, i) => sign({}, rotated, `unknown-${i}`)),
    );

    const results = await Promise.allSettled(unknown.map((token) => verifier.verify(token)));
    for (const token of unknown.slice(0, 10)) await expectInvalidToken(verifier.verify(token));

    expect(results.every((result) => result.status === 'rejected')).toBe(true);
    expect(jwks.hits).toBe(2);
    advance(31 * SECOND);
    await expectInvalidToken(verifier.verify(await sign({}, rotated, 'unknown-again')));
    expect(jwks.hits).toBe(3);
  });

  it('picks up a key published after the last fetch once the cooldown has passed', async () => {
    const verifier = createJwtVerifier(config());
    await verifier.verify(await sign());
    jwks.keys = [primary.jwk, rotated.jwk];

    await expectInvalidToken(verifier.verify(await sign({}, rotated)));
    advance(31 * SECOND);
    const principal = await verifier.verify(await sign({ sub: 'bob' }, rotated));

    expect(principal.ownerId).toBe('bob');
    expect(jwks.hits).toBe(2);
  });
});

describe('createJwtVerifier: JWKS outage', () => {
  it('keeps verifying cached keys while the JWKS server is down, and rejects a new kid', async () => {
    const verifier = createJwtVerifier(config());
    await verifier.verify(await sign());
    await jwks.stop();

    await expect(verifier.verify(await sign({ sub: 'a' }))).resolves.toMatchObject({
      ownerId: 'a',
    });
    await expectInvalidToken(verifier.verify(await sign({}, rotated)), 'The token is not valid.');
    // Past jose's cache max age (10 min), where jose alone would reject once the refetch fails.
    advance(11 * MINUTE);
    await expect(verifier.verify(await sign({ sub: 'b' }))).resolves.toMatchObject({
      ownerId: 'b',
    });
    advance(23 * HOUR);
    await expect(verifier.verify(await sign({ sub: 'c' }))).resolves.toMatchObject({
      ownerId: 'c',
    });
    await expectInvalidToken(verifier.verify(await sign({}, rotated)), 'The token is not valid.');
  });

  it('stops trusting cached keys 24 h after the last successful fetch', async () => {
    const verifier = createJwtVerifier(config());
    await verifier.verify(await sign());
    await jwks.stop();

    advance(24 * HOUR + MINUTE);

    await expectInvalidToken(verifier.verify(await sign()), 'The token is not valid.');
  });

  it('rejects every token when the JWKS was never reachable', async () => {
    const verifier = createJwtVerifier(config());
    await jwks.stop();

    await expectInvalidToken(verifier.verify(await sign()), 'The token is not valid.');
  });

  it('retries a failing JWKS at most once per cooldown, then drops keys it no longer lists', async () => {
    const verifier = createJwtVerifier(config());
    await verifier.verify(await sign());
    jwks.failing = true;
    advance(11 * MINUTE);

    const token = await sign();
    for (let i = 0; i < 200; i += 1) await verifier.verify(token);
    expect(jwks.hits).toBe(2);
    advance(31 * SECOND);
    await verifier.verify(await sign());
    expect(jwks.hits).toBe(3);

    jwks.failing = false;
    jwks.keys = [rotated.jwk];
    advance(31 * SECOND);
    await expectInvalidToken(verifier.verify(await sign()));
    expect(jwks.hits).toBe(4);
    await expect(verifier.verify(await sign({ sub: 'd' }, rotated))).resolves.toMatchObject({
      ownerId: 'd',
    });
  });
});

describe('scopesOf', () => {
  it.each([
    [{}, []],
    [{ scope: 'todos:read' }, ['todos:read']],
    [{ scope: ' todos:read  todos:write ' }, ['todos:read', 'todos:write']],
    [{ scope: 'todos:read todos:read' }, ['todos:read']],
    [{ scope: 'TODOS:READ todos:reader openid' }, []],
    [{ scope: 42 }, []],
    [{ scp: ['todos:write', 7, 'webhooks:manage'] }, ['todos:write', 'webhooks:manage']],
    [{ scp: 'todos:write' }, ['todos:write']],
    [{ scope: 'todos:read', scp: ['todos:write'] }, ['todos:read', 'todos:write']],
  ])('reads %j as %j', (payload, expected) => {
    expect([...scopesOf(payload)]).toEqual(expected);
  });
});
