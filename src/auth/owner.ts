import type { FastifyRequest } from 'fastify';

/**
 * The owner every todo belongs to while the service runs without authentication. Rows carry an
 * owner from day one so that per-user isolation needs no data migration.
 */
export const ANONYMOUS_OWNER_ID = 'anonymous';

/** Whose data a request may touch. Without authentication, the one anonymous owner's. */
export function ownerIdOf(_request: FastifyRequest): string {
  return ANONYMOUS_OWNER_ID;
}
