import { createHash } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Principal } from './principal.js';

/**
 * The owner of every request while the service runs without authentication. Rows carried an
 * owner from day one, so per-user isolation needed no data migration.
 */
export const ANONYMOUS_OWNER_ID = 'anonymous';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authentication hook on every route that is not `public`. */
    principal: Principal | undefined;
  }
}

/** Whose data a request may touch. Every query the service runs is scoped by this id. */
export function ownerIdOf(request: FastifyRequest): string {
  if (!request.principal) {
    throw new Error(`${request.method} ${request.url} reached owner data without authentication`);
  }
  return request.principal.ownerId;
}

/**
 * A fixed-size stand-in for an owner id, where the id itself should not travel (sync tokens,
 * PostgreSQL NOTIFY payloads): unbounded ids stay short, and nothing reveals whose it is.
 */
export function ownerFingerprint(ownerId: string): string {
  return createHash('sha256').update(ownerId).digest('base64url');
}
