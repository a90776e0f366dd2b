import { randomUUID } from 'node:crypto';

/** What the `RateLimit-Policy`, `RateLimit` and `Retry-After` fields of one response say. */
export interface RateLimitFields {
  /** `q`: requests per window. */
  readonly quota: number;
  /** `w`: window length in seconds. */
  readonly window: number;
  /** `r`: requests left in the current window. */
  readonly remaining: number;
  /** `t`: seconds until the window frees up. */
  readonly reset: number;
  readonly retryAfter: number | undefined;
}

const POLICY = /^"default";q=(\d+);w=(\d+)$/;
const BUDGET = /^"default";r=(\d+);t=(\d+)$/;

function single(headers: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name);
  if (entry === undefined) return undefined;
  if (typeof entry[1] !== 'string')
    throw new Error(`${name} is not one field: ${String(entry[1])}`);
  return entry[1];
}

/**
 * The rate-limit fields of a response (any header-name case), or `undefined` when it carries
 * none. Throws when only one of the pair is present or either is not in the draft's syntax, so
 * that a malformed field fails the test that reads it.
 */
export function rateLimitFieldsOf(
  headers: Readonly<Record<string, unknown>>,
): RateLimitFields | undefined {
  const policy = single(headers, 'ratelimit-policy');
  const budget = single(headers, 'ratelimit');
  const retryAfter = single(headers, 'retry-after');
  if (policy === undefined && budget === undefined) return undefined;
  const q = POLICY.exec(policy ?? '');
  const r = BUDGET.exec(budget ?? '');
  if (!q || !r) {
    throw new Error(`malformed rate-limit fields: RateLimit-Policy=${policy} RateLimit=${budget}`);
  }
  if (retryAfter !== undefined && !/^\d+$/.test(retryAfter)) {
    throw new Error(`Retry-After is not delay-seconds: ${retryAfter}`);
  }
  return {
    quota: Number(q[1]),
    window: Number(q[2]),
    remaining: Number(r[1]),
    reset: Number(r[2]),
    retryAfter: retryAfter === undefined ? undefined : Number(retryAfter),
  };
}

/**
 * An owner name no other test (nor another run sharing the same Redis) uses: the limiter keys
 * budgets by owner id, and its Redis key prefix cannot be changed through the app.
 */
export function uniqueOwner(name: string): string {
  return `${name}-${randomUUID()}`;
}

/** The p-th percentile (nearest rank) of `values`; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}
