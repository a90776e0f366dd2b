import type { FastifyBaseLogger } from 'fastify';
import { Redis, type RedisOptions } from 'ioredis';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';

// The whole seam in one import for the HTTP wiring.
export { rateLimitHeaders } from './ratelimit-headers.js';

export interface RateLimitDecision {
  readonly allowed: boolean;
  /** Requests per window (the policy quota). */
  readonly limit: number;
  /** Requests left in the current window, ≥ 0. */
  readonly remaining: number;
  /** Whole seconds until the window frees up, ≥ 0. */
  readonly resetSeconds: number;
  readonly windowSeconds: number;
}

export interface RateLimiter {
  /** Counts one request for `key` (e.g. 'owner:alice' or 'ip:127.0.0.1'); never rejects, never hangs. */
  consume(key: string): Promise<RateLimitDecision>;
  /** How many times the shared store failed and the in-memory fallback answered instead. */
  storeErrors(): number;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  /** Requests allowed per key per window, ≥ 1 (the caller turns limiting off for 0). */
  readonly max: number;
  readonly windowSeconds: number;
  /** Redis shared by every instance. Without it each instance counts alone, in memory. */
  readonly redisUrl?: string;
  readonly log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
  /** Namespaces the counters, so that limiters with other purposes never share keys. */
  readonly keyPrefix?: string;
}

/**
 * Settings that bound what a dead or hung Redis costs a request to about 100 ms: while
 * disconnected, commands fail at once instead of queueing; a command without a reply times
 * out; and reconnects are tried at least every second, so that the shared limit holds again
 * soon after Redis is back.
 */
const REDIS_OPTIONS = {
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  connectTimeout: 500,
  commandTimeout: 100,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
} satisfies RedisOptions;

/** A store outage can last long and concern every request: say so at most this often. */
const WARNING_INTERVAL_MS = 10_000;

/**
 * Fixed-window rate limiter. With `redisUrl` every instance draws on one budget per key; when
 * Redis cannot answer, the limiter fails open to a per-instance in-memory limit of the same
 * `max` (so a fleet of N instances may allow up to N × max until Redis is back).
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { max, windowSeconds, redisUrl, log, keyPrefix = 'ratelimit' } = options;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be ≥ 1, got ${max}`);
  if (!Number.isInteger(windowSeconds) || windowSeconds < 1) {
    throw new RangeError(`windowSeconds must be a whole number ≥ 1, got ${windowSeconds}`);
  }
  const policy = { points: max, duration: windowSeconds, keyPrefix };
  const health = createStoreHealth(log);
  const store =
    redisUrl === undefined
      ? { limiter: new RateLimiterMemory(policy), close: async () => {} }
      : createRedisStore(redisUrl, policy, health);

  function decide(res: RateLimiterRes, allowed: boolean): RateLimitDecision {
    return {
      allowed,
      limit: max,
      remaining: allowed ? Math.max(0, res.remainingPoints) : 0,
      resetSeconds: Math.max(0, Math.ceil(res.msBeforeNext / 1000)),
      windowSeconds,
    };
  }

  return {
    async consume(key) {
      try {
        return decide(await store.limiter.consume(key), true);
      } catch (outcome) {
        // rate-limiter-flexible refuses with the counter's state, and fails with an Error.
        if (outcome instanceof RateLimiterRes) return decide(outcome, false);
        // Unexpected: the insurance limiter answers for Redis, and memory does not fail. Fail open.
        health.failed(outcome instanceof Error ? outcome.message : String(outcome));
        return {
          allowed: true,
          limit: max,
          remaining: max - 1,
          resetSeconds: windowSeconds,
          windowSeconds,
        };
      }
    },
    storeErrors: health.errors,
    close: store.close,
  };
}

interface Policy {
  readonly points: number;
  readonly duration: number;
  readonly keyPrefix: string;
}

/**
 * Counters in Redis, insured by counters in memory. rate-limiter-flexible consults the
 * insurance limiter only after a Redis call failed, so each of its answers is one store error.
 */
function createRedisStore(
  redisUrl: string,
  policy: Policy,
  health: StoreHealth,
): { limiter: RateLimiterAbstract; close: () => Promise<void> } {
  const client = new Redis(redisUrl, REDIS_OPTIONS);
  // Without a listener, connection errors would reach the console on every reconnect attempt.
  client.on('error', (error: Error) => {
    health.connectionFailed(error);
  });
  client.on('ready', () => {
    health.reconnected();
  });
  const limiter = new RateLimiterRedis({
    ...policy,
    storeClient: client,
    // Straight to the insurance limiter while (re)connecting, without a round trip to fail.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new InsuranceLimiter(policy, () => {
      health.failed(
        client.status === 'ready'
          ? 'Redis command failed or timed out'
          : `Redis connection is ${client.status}`,
      );
    }),
  });
  return {
    limiter,
    close: async () => {
      // Not QUIT: a rate limiter has nothing to flush, and QUIT could wait on a hung server.
      client.disconnect();
    },
  };
}

/** The in-memory limiter that answers while Redis cannot; tells `onAnswer` each time. */
class InsuranceLimiter extends RateLimiterMemory {
  readonly #onAnswer: () => void;

  constructor(policy: Policy, onAnswer: () => void) {
    super(policy);
    this.#onAnswer = onAnswer;
  }

  override consume(...args: Parameters<RateLimiterMemory['consume']>): Promise<RateLimiterRes> {
    this.#onAnswer();
    return super.consume(...args);
  }
}

type StoreHealth = ReturnType<typeof createStoreHealth>;

/** Counts store failures and reports an outage in the log: throttled, never once per request. */
function createStoreHealth(log: RateLimiterOptions['log']) {
  let errors = 0;
  let lastFailure: string | undefined;
  let lastConnectionError: string | undefined;
  let lastWarningAt = -Infinity;
  let degraded = false;

  function warn(): void {
    degraded = true;
    const now = Date.now();
    if (now - lastWarningAt < WARNING_INTERVAL_MS) return;
    lastWarningAt = now;
    log.warn(
      { storeErrors: errors, lastFailure, lastConnectionError },
      'Rate-limit store unavailable: each instance enforces its own in-memory limit until it is back',
    );
  }

  return {
    errors: () => errors,
    /** The store could not answer a request, and the fallback did. */
    failed(reason: string): void {
      errors += 1;
      lastFailure = reason;
      warn();
    },
    connectionFailed(error: Error): void {
      lastConnectionError = error.message;
      warn();
    },
    reconnected(): void {
      if (!degraded) return;
      degraded = false;
      lastFailure = lastConnectionError = undefined; // the next outage reports its own causes
      log.info(
        { storeErrors: errors },
        'Rate-limit store reachable again: limits are shared again',
      );
    },
  };
}
