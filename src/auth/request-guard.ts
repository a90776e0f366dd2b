import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../http/app-error.js';
import { rateLimitHeaders, type RateLimiter } from '../limits/rate-limiter.js';
import { insufficientScope } from './auth-errors.js';
import type { Authenticator } from './authenticator.js';
import type { Principal } from './principal.js';

export interface RequestGuardDeps {
  readonly authenticator: Authenticator;
  /** Absent when rate limiting is turned off. */
  readonly rateLimiter: RateLimiter | undefined;
}

/** Whose budget a request spends: its owner's when it proved one, else its client address's. */
function rateLimitKey(request: FastifyRequest, principal: Principal | undefined): string {
  return principal && principal.credential.kind !== 'anonymous'
    ? `owner:${principal.ownerId}`
    : `ip:${request.ip}`;
}

/**
 * The `onRequest` gate of every request, in this order: who is asking (routes that are not
 * public), whose rate-limit budget it spends, then whether its scope allows the route. Failed
 * authentication still spends the client address's budget first, so guessing tokens runs into
 * 429 like any other flood.
 */
export function createRequestGuard(deps: RequestGuardDeps) {
  const { authenticator, rateLimiter } = deps;

  return async function guard(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const scope = request.routeOptions.config.scope;
    // Unmatched paths (404/405), preflights and public routes serve no owner's data.
    const needsOwner = scope !== undefined && scope !== 'public';
    let principal: Principal | undefined;
    let failure: Error | undefined;
    if (needsOwner) {
      try {
        principal = await authenticator.authenticate(request);
      } catch (error) {
        failure = error instanceof Error ? error : new Error(String(error));
      }
    }
    if (rateLimiter) {
      const decision = await rateLimiter.consume(rateLimitKey(request, principal));
      const headers = rateLimitHeaders(decision);
      void reply.headers(headers);
      if (!decision.allowed) {
        throw new AppError(
          'rate-limited',
          `Rate limit of ${decision.limit} requests per ${decision.windowSeconds} s reached; retry in ${headers['Retry-After'] ?? '1'} s.`,
        );
      }
    }
    if (failure) throw failure;
    if (needsOwner && principal && !principal.scopes.has(scope)) throw insufficientScope(scope);
    request.principal = principal;
  };
}
