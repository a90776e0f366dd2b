import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../../src/webhooks/webhook.schemas.js';
import { expectProblem } from '../helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/** `/api/webhooks` as a client manages it: create, read, change, rotate, delete, limits. */
describe('webhook endpoints', () => {
  let t: TestApp;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    t = await buildTestApp({ env: { AUTH_MODE: 'required' } });
    alice = await t.bearer('hook-alice');
    bob = await t.bearer('hook-bob');
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (authorization: string) => ({ authorization });

  async function create(payload: object, authorization = alice) {
    return t.inject({ method: 'POST', url: '/api/webhooks', payload, headers: as(authorization) });
  }

  it('creates an endpoint and shows its secret exactly once', async () => {
    const response = await create({
      url: 'https://93.184.215.14/hooks/todos',
      description: 'CI',
      event_types: ['todo.completed'],
    });
    expect(response.statusCode, response.body).toBe(201);
    const endpoint = response.json<WebhookEndpointWithSecret>();
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(endpoint).toMatchObject({
      url: 'https://93.184.215.14/hooks/todos',
      description: 'CI',
      event_types: ['todo.completed'],
      enabled: true,
      disabled_reason: null,
      version: 1,
    });
    expect(response.headers.location).toBe(`http://todo.test/api/webhooks/${endpoint.id}`);

    const listed = await t.inject({ method: 'GET', url: '/api/webhooks', headers: as(alice) });
    expect(listed.json<WebhookEndpoint[]>().map((e) => e.id)).toContain(endpoint.id);
    expect(listed.body).not.toContain(endpoint.secret);
    expect(listed.body).not.toContain('secret"');
  });

  it('changes and deletes an endpoint; other owners see nothing', async () => {
    const endpoint = (await create({ url: 'https://93.184.215.14/a' })).json<WebhookEndpoint>();
    const url = `/api/webhooks/${endpoint.id}`;
    const patched = await t.inject({
      method: 'PATCH',
      url,
      headers: as(alice),
      payload: { enabled: false, description: 'paused' },
    });
    expect(patched.json<WebhookEndpoint>()).toMatchObject({
      enabled: false,
      description: 'paused',
      version: 2,
    });
    expectProblem(await t.inject({ method: 'GET', url, headers: as(bob) }), 404, 'not-found');
    expectProblem(await t.inject({ method: 'DELETE', url, headers: as(bob) }), 404, 'not-found');
    expect((await t.inject({ method: 'DELETE', url, headers: as(alice) })).statusCode).toBe(204);
    expectProblem(await t.inject({ method: 'GET', url, headers: as(alice) }), 404, 'not-found');
  });

  it.each([
    ['http://93.184.215.14/x', 'blocked-scheme'],
    ['ftp://example.com/x', 'blocked-scheme'],
    ['https://user:pw@93.184.215.14/x', 'blocked-credentials'],
    ['https://93.184.215.14:8080/x', 'blocked-port'],
    ['not a url', 'blocked-url'],
    ['https://127.0.0.1/x', 'blocked-address'],
    ['https://127.1/x', 'blocked-address'],
    ['https://0x7f000001/x', 'blocked-address'],
    ['https://2130706433/x', 'blocked-address'],
    ['https://017700000001/x', 'blocked-address'],
    ['https://[::1]/x', 'blocked-address'],
    ['https://[::ffff:127.0.0.1]/x', 'blocked-address'],
    ['https://[::ffff:7f00:1]/x', 'blocked-address'],
    ['https://0.0.0.0/x', 'blocked-address'],
    ['https://[::]/x', 'blocked-address'],
    ['https://10.0.0.1/x', 'blocked-address'],
    ['https://172.16.0.1/x', 'blocked-address'],
    ['https://192.168.0.1/x', 'blocked-address'],
    ['https://100.64.0.1/x', 'blocked-address'],
    ['https://169.254.169.254/latest/meta-data', 'blocked-address'],
    ['https://[fd00::1]/x', 'blocked-address'],
    ['https://[fe80::1]/x', 'blocked-address'],
    ['https://224.0.0.1/x', 'blocked-address'],
    ['https://localhost/x', 'blocked-address'],
    // Resolves to loopback, or not at all where the resolver wants no trailing dot.
    ['https://localhost./x', 'blocked-address|blocked-unresolvable'],
  ])('refuses %s (%s)', async (target, codes) => {
    const problem = expectProblem(await create({ url: target }), 422, 'validation-error', {
      pointer: '/url',
    });
    expect(codes.split('|')).toContain(problem.errors?.[0]?.code);
  });

  it('refuses a URL changed to a blocked one', async () => {
    const endpoint = (await create({ url: 'https://93.184.215.14/b' })).json<WebhookEndpoint>();
    expectProblem(
      await t.inject({
        method: 'PATCH',
        url: `/api/webhooks/${endpoint.id}`,
        headers: as(alice),
        payload: { url: 'https://10.1.2.3/' },
      }),
      422,
      'validation-error',
      { pointer: '/url' },
    );
  });

  it('keeps at most 10 endpoints per owner', async () => {
    const owner = await t.bearer('hook-many');
    for (let i = 0; i < 10; i++) {
      expect((await create({ url: `https://93.184.215.14/${i}` }, owner)).statusCode).toBe(201);
    }
    const problem = expectProblem(
      await create({ url: 'https://93.184.215.14/11' }, owner),
      422,
      'quota-exceeded',
    );
    expect(problem.limit).toBe(10);
  });

  it('validates event types and unknown fields', async () => {
    expectProblem(
      await create({ url: 'https://93.184.215.14/c', event_types: ['todo.exploded'] }),
      422,
      'validation-error',
    );
    expectProblem(
      await create({ url: 'https://93.184.215.14/c', colour: 'red' }),
      422,
      'unknown-field',
    );
  });
});
