import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A client's `X-Request-Id` is kept when it is short and made of safe characters. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** Fastify `genReqId`: the caller's id when it is safe to echo and log, a new UUID otherwise. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}
