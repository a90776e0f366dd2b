import type { FastifyRequest } from 'fastify';
import { AppError } from './app-error.js';

/**
 * RFC 9112 §3.2: an HTTP/1.1 request without a Host header, or with more than one, is a 400.
 * Node checks the first itself but answers with a bare 400 and lets the second through (it
 * keeps the first Host), so Node's check is off and this one answers with a problem document.
 */
export function assertOneHostHeader(request: FastifyRequest): void {
  const raw = request.raw.rawHeaders;
  let hosts = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === 'host') hosts++;
  const http11 = request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1;
  if (hosts > 1 || (hosts === 0 && http11)) {
    throw new AppError('malformed-request', 'An HTTP/1.1 request needs exactly one Host header.');
  }
}
