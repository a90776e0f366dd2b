import { describe, expect, it } from 'vitest';
import type { RateLimitDecision } from './rate-limiter.js';
import { rateLimitHeaders } from './ratelimit-headers.js';

function decision(overrides: Partial<RateLimitDecision>): RateLimitDecision {
  return {
    allowed: true,
    limit: 100,
    remaining: 99,
    resetSeconds: 60,
    windowSeconds: 60,
    ...overrides,
  };
}

describe('rateLimitHeaders', () => {
  it.each([
    [
      'an allowed request',
      decision({}),
      { 'RateLimit-Policy': '"default";q=100;w=60', RateLimit: '"default";r=99;t=60' },
    ],
    [
      'the last allowed request',
      decision({ remaining: 0, resetSeconds: 12 }),
      { 'RateLimit-Policy': '"default";q=100;w=60', RateLimit: '"default";r=0;t=12' },
    ],
    [
      'a refused request',
      decision({ allowed: false, remaining: 0, resetSeconds: 12 }),
      {
        'RateLimit-Policy': '"default";q=100;w=60',
        RateLimit: '"default";r=0;t=12',
        'Retry-After': '12',
      },
    ],
    [
      'a refused request whose window just ended (Retry-After is never 0)',
      decision({ allowed: false, remaining: 0, resetSeconds: 0 }),
      {
        'RateLimit-Policy': '"default";q=100;w=60',
        RateLimit: '"default";r=0;t=0',
        'Retry-After': '1',
      },
    ],
    [
      'fractions and negatives (rounded to what the draft allows)',
      decision({ limit: 5.7, remaining: -1, resetSeconds: 1.2, windowSeconds: 0 }),
      { 'RateLimit-Policy': '"default";q=5;w=1', RateLimit: '"default";r=0;t=2' },
    ],
  ])('formats %s', (_name, input, expected) => {
    expect(rateLimitHeaders(input)).toEqual(expected);
  });

  it('never points Retry-After earlier than the reset parameter', () => {
    for (const resetSeconds of [0, 1, 2, 59, 3600]) {
      const headers = rateLimitHeaders(decision({ allowed: false, remaining: 0, resetSeconds }));
      const reset = Number(/;t=(\d+)$/.exec(headers.RateLimit ?? '')?.[1]);
      expect(Number(headers['Retry-After'])).toBeGreaterThanOrEqual(Math.max(1, reset));
    }
  });
});
