import type { RateLimitDecision } from './rate-limiter.js';

/**
 * The rate-limit header fields of draft-ietf-httpapi-ratelimit-headers-10 (the same syntax as
 * -09): `RateLimit-Policy` and `RateLimit` are Structured Field lists whose items name a policy.
 * We enforce one policy, so each list holds one item, named "default".
 * @see https://datatracker.ietf.org/doc/draft-ietf-httpapi-ratelimit-headers/10/
 */
const POLICY_NAME = '"default"';

/** Headers for every response: the policy, the budget left, and `Retry-After` when refused. */
export function rateLimitHeaders(decision: RateLimitDecision): Record<string, string> {
  // Structured Field integers must be whole and non-negative, and `w` must be non-zero too.
  const quota = Math.max(0, Math.floor(decision.limit));
  const window = Math.max(1, Math.ceil(decision.windowSeconds));
  const remaining = Math.max(0, Math.floor(decision.remaining));
  // Rounded up: a client told to come back early would only be refused again.
  const reset = Math.max(0, Math.ceil(decision.resetSeconds));
  const headers: Record<string, string> = {
    'RateLimit-Policy': `${POLICY_NAME};q=${quota};w=${window}`,
    RateLimit: `${POLICY_NAME};r=${remaining};t=${reset}`,
  };
  if (!decision.allowed) {
    // The draft says Retry-After should not point earlier than `t`; 0 would invite a busy loop.
    headers['Retry-After'] = String(Math.max(1, reset));
  }
  return headers;
}
