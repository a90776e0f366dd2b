import type { FastifyRequest } from 'fastify';

/** Host header values we are willing to reflect into absolute URLs. */
const SAFE_HOST = /^[A-Za-z0-9.-]+(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?$/;

/**
 * The origin clients reach us at: `PUBLIC_BASE_URL` when configured, otherwise the request's
 * own scheme and Host (a malformed Host falls back to `localhost`).
 */
export function baseUrlOf(request: FastifyRequest, publicBaseUrl: string | undefined): string {
  if (publicBaseUrl) return publicBaseUrl;
  const host = SAFE_HOST.test(request.host) ? request.host : 'localhost';
  return `${request.protocol}://${host}`;
}

/** The request path without its query string: what `instance` and idempotency scopes use. */
export function pathOf(request: FastifyRequest): string {
  return request.url.split('?')[0] ?? '/';
}
