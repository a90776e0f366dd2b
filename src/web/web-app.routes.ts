import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { declarePublicRoutes } from '../auth/route-scopes.js';
import { AppError } from '../http/app-error.js';

/** Where `npm run build:web` (run by `npm install`) puts the bundle. */
export const WEB_APP_ROOT = fileURLToPath(new URL('../../web/dist', import.meta.url));

/**
 * The page may load only its own bundle and talk only to this origin; it may not be framed.
 * Swagger UI at `/docs` has its own policy (`staticCSP`).
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export interface WebAppOptions {
  readonly root: string;
}

/**
 * The web app at `/`: static files of the bundle, which works only through the public API.
 * Hashed assets are cached for a year; `index.html` is revalidated, so a deploy shows at once.
 */
export async function webAppRoutes(app: FastifyInstance, options: WebAppOptions): Promise<void> {
  declarePublicRoutes(app);
  if (!existsSync(join(options.root, 'index.html'))) {
    app.log.warn({ root: options.root }, 'the web app is not built; run `npm run build:web`');
    app.get('/', { schema: { hide: true } }, async () => {
      throw new AppError('unavailable', 'The web app is not built; run `npm run build:web`.');
    });
    return;
  }
  const headers = (reply: FastifyReply, cacheControl: string): FastifyReply =>
    reply
      .header('cache-control', cacheControl)
      .header('content-security-policy', CONTENT_SECURITY_POLICY)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer');
  // Only `/assets/*` is a wildcard: one at `/` would also answer API paths that no route matches.
  await app.register(fastifyStatic, {
    root: join(options.root, 'assets'),
    prefix: '/assets/',
    index: false,
    cacheControl: false,
    dotfiles: 'deny',
    // Also called for `sendFile('index.html')` below, which must be revalidated every time.
    setHeaders: (reply, path) => {
      const immutable = !path.endsWith('index.html');
      void headers(reply, immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  // A page for people, not an operation of the API: kept out of the OpenAPI document.
  app.get('/', { schema: { hide: true } }, async (_request, reply) =>
    reply.sendFile('index.html', options.root),
  );
}
