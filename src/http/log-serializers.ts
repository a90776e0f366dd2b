import type { FastifyRequest } from 'fastify';
import { TOKEN_QUERY_PARAMETERS } from '../auth/authenticator.js';

/**
 * The URL as logged: a token a client put in the query string is refused (401), but the request
 * line is logged before that, so its value is masked here. Authorization headers are never logged
 * (pino `redact`).
 */
export function redactedUrl(url: string): string {
  const queryStart = url.indexOf('?');
  if (queryStart === -1) return url;
  const params = new URLSearchParams(url.slice(queryStart + 1));
  let redacted = false;
  for (const name of TOKEN_QUERY_PARAMETERS) {
    if (params.has(name)) {
      params.set(name, '[REDACTED]');
      redacted = true;
    }
  }
  return redacted ? `${url.slice(0, queryStart)}?${params.toString()}` : url;
}

/** Fastify's request serializer, with the URL redacted. */
export function serializeRequest(request: FastifyRequest) {
  return {
    method: request.method,
    url: redactedUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket.remotePort,
  };
}
