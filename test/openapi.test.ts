import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers/test-app.js';
import type { OpenApiDocument } from './helpers/openapi-contract.js';

describe('GET /api/openapi.json', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await buildTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('is an OpenAPI 3.1 document listing every route the app registered', async () => {
    const response = await t.inject({ method: 'GET', url: '/api/openapi.json' });
    expect(response.statusCode).toBe(200);
    const document = response.json<OpenApiDocument & { openapi: string }>();
    expect(document.openapi).toBe('3.1.0');

    const registered = t.app.routeIndex
      .routes()
      .filter(({ method }) => method !== 'HEAD' && method !== 'OPTIONS')
      // Swagger UI and the web app's page are for people, not operations of the API.
      .filter(({ url }) => !url.startsWith('/docs') && url !== '/');
    const undocumented = registered.filter(({ method, url }) => {
      const template = url.replace(/:(\w+)/g, '{$1}');
      return document.paths[template]?.[method.toLowerCase()] === undefined;
    });
    expect(registered.length).toBeGreaterThanOrEqual(17);
    expect(undocumented).toEqual([]);
  });
});
