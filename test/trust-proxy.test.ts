import { afterEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

/** Behind a reverse proxy: X-Forwarded-* counts only when the peer is a configured proxy. */
describe('TRUST_PROXY', () => {
  let testApp: TestApp | undefined;
  afterEach(async () => {
    await testApp?.close();
    testApp = undefined;
  });

  const listFrom = (app: TestApp, forwardedFor: string) =>
    app.inject({ method: 'GET', url: '/api/todos', headers: { 'x-forwarded-for': forwardedFor } });

  it('rate-limits anonymous clients by their forwarded address behind a trusted proxy', async () => {
    testApp = await buildTestApp({ env: { RATE_LIMIT_MAX: '1', TRUST_PROXY: '127.0.0.1' } });
    expect((await listFrom(testApp, '203.0.113.1')).statusCode).toBe(200);
    expect((await listFrom(testApp, '203.0.113.2')).statusCode).toBe(200);
    expect((await listFrom(testApp, '203.0.113.1')).statusCode).toBe(429);
  });

  it('ignores X-Forwarded-For from a peer that is not a configured proxy', async () => {
    testApp = await buildTestApp({ env: { RATE_LIMIT_MAX: '1', TRUST_PROXY: '10.0.0.0/8' } });
    expect((await listFrom(testApp, '203.0.113.1')).statusCode).toBe(200);
    // Same peer (127.0.0.1), so the same budget, whatever the header claims.
    expect((await listFrom(testApp, '203.0.113.2')).statusCode).toBe(429);
  });

  it('builds url from X-Forwarded-Proto and -Host of a trusted proxy', async () => {
    testApp = await buildTestApp({
      env: { TRUST_PROXY: '127.0.0.1', PUBLIC_BASE_URL: '' },
    });
    const created = await testApp.inject({
      method: 'POST',
      url: '/api/todos',
      headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'todos.example' },
      payload: { title: 'behind a proxy' },
    });
    expect(created.json<{ url: string }>().url).toMatch(/^https:\/\/todos\.example\/api\/todos\//);
  });
});
