import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { errorHandler } from '../http/error-handler.js';
import { webAppRoutes } from './web-app.routes.js';

describe('the web app at /', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves index.html revalidated, under a policy that allows only its own scripts', async () => {
    const response = await t.inject({ method: 'GET', url: '/?status=all' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    expect(response.headers['content-security-policy']).toContain("script-src 'self'");
    expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.body).toContain('<div id="app">');
  });

  it('serves the hashed bundle it references as immutable for a year', async () => {
    const page = await t.inject({ method: 'GET', url: '/' });
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1];
    expect(script).toBeDefined();
    const response = await t.inject({ method: 'GET', url: script ?? '' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^(application|text)\/javascript/);
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('answers unknown assets and API paths with problems, not the page', async () => {
    for (const url of [
      '/assets/missing.js',
      '/assets/../index.html',
      `/api/todos/${'a'.repeat(200)}`,
    ]) {
      const response = await t.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type'], url).toMatch(/^application\/problem\+json/);
    }
  });

  it('answers 503 with a problem naming the build command when the bundle is missing', async () => {
    const emptyRoot = await mkdtemp(join(tmpdir(), 'web-root-'));
    const app = Fastify({ logger: false });
    app.setErrorHandler(errorHandler);
    await app.register(webAppRoutes, { root: emptyRoot });
    const response = await app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(503);
    expect(response.json<{ code: string; detail: string }>()).toMatchObject({
      code: 'unavailable',
      detail: expect.stringContaining('npm run build:web') as string,
    });
    await app.close();
    await rm(emptyRoot, { recursive: true });
  });
});
