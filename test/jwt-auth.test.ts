import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from './helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

const ISSUER = 'https://id.test/';
const AUDIENCE = 'todo-api';

/** OIDC access tokens through the whole app: a loopback JWKS, keys made here. */
describe('JWT access tokens', () => {
  let jwks: Server;
  let privateKey: CryptoKey;
  let testApp: TestApp;

  const sign = (claims: Record<string, unknown>, subject = 'alice') =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject(subject)
      .setIssuedAt()
      .setExpirationTime('5m')
      .sign(privateKey);

  beforeAll(async () => {
    const pair = await generateKeyPair('ES256');
    privateKey = pair.privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'ES256' };
    jwks = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [jwk] }));
    }).listen(0, '127.0.0.1');
    await once(jwks, 'listening');
    const { port } = jwks.address() as AddressInfo;
    testApp = await buildTestApp({
      env: {
        AUTH_MODE: 'required',
        JWT_JWKS_URL: `http://127.0.0.1:${port}/jwks`,
        JWT_ISSUER: ISSUER,
        JWT_AUDIENCE: AUDIENCE,
        JWT_ALGORITHMS: 'ES256',
      },
    });
  });

  afterAll(async () => {
    await testApp.close();
    jwks.close();
  });

  it('acts as the owner named by sub, with the scopes of the scope claim', async () => {
    const token = await sign({ scope: 'todos:read todos:write' });
    const created = await testApp.inject({
      method: 'POST',
      url: '/api/todos',
      headers: { authorization: `Bearer ${token}` },
      payload: { title: 'from the identity provider' },
    });
    expect(created.statusCode).toBe(201);

    // An API key of the same owner sees the same todos: owner = sub, whatever the credential.
    const listed = await testApp.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: await testApp.bearer('alice', ['todos:read']) },
    });
    expect(listed.json<{ id: string }[]>().map((todo) => todo.id)).toEqual([
      created.json<{ id: string }>().id,
    ]);
  });

  it('answers 403 insufficient-scope for a JWT without the route scope', async () => {
    const token = await sign({ scope: 'todos:read' });
    const response = await testApp.inject({
      method: 'POST',
      url: '/api/todos',
      headers: { authorization: `Bearer ${token}` },
      payload: { title: 'x' },
    });
    expectProblem(response, 403, 'insufficient-scope');
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"');
  });

  it('answers 401 for a JWT of another audience', async () => {
    const token = await new SignJWT({ scope: 'todos:read' })
      .setProtectedHeader({ alg: 'ES256', kid: 'k1' })
      .setIssuer(ISSUER)
      .setAudience('another-api')
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(privateKey);
    const response = await testApp.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: `Bearer ${token}` },
    });
    expectProblem(response, 401, 'unauthenticated');
    expect(response.headers['www-authenticate']).toContain('error="invalid_token"');
  });

  it('keeps other subjects apart', async () => {
    const token = await sign({ scope: 'todos:read' }, 'bob');
    const response = await testApp.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(response.json()).toEqual([]);
  });
});
