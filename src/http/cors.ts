import type { FastifyCorsOptions } from '@fastify/cors';
import type { Config } from '../config.js';

/** Response headers a browser script may read (they carry paging, concurrency and limits). */
export const EXPOSED_HEADERS = [
  'ETag',
  'Location',
  'Link',
  'X-Total-Count',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
  'X-Request-Id',
  'Idempotent-Replayed',
  'Preference-Applied',
  'WWW-Authenticate',
];

/**
 * CORS for every path, errors included: the hook runs on request, before anything can fail.
 * Credentials are never allowed; the API authenticates with bearer tokens, not cookies.
 */
export function corsOptions(config: Config): FastifyCorsOptions {
  return {
    origin: config.corsOrigins === '*' ? '*' : [...config.corsOrigins],
    credentials: false,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: [
      'Content-Type',
      'Authorization',
      'If-Match',
      'If-None-Match',
      'Idempotency-Key',
      'Prefer',
      'X-Request-Id',
    ],
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
    strictPreflight: false,
    hook: 'onRequest',
  };
}
