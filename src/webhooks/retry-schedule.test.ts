import { describe, expect, it } from 'vitest';
import { nextAttemptAt, parseRetryAfter, RETRY_OFFSETS_S } from './retry-schedule.js';

const QUEUED = new Date('2026-11-21T10:00:00.000Z');
const at = (seconds: number) => new Date(QUEUED.getTime() + seconds * 1000);

describe('the retry schedule', () => {
  it('follows the Standard Webhooks example, as offsets from when the delivery was queued', () => {
    const times = RETRY_OFFSETS_S.map((_, attempts) =>
      nextAttemptAt({ queuedAt: QUEUED, attempts, now: QUEUED, scale: 1, random: () => 0.5 }),
    );
    expect(times.map((time) => ((time?.getTime() ?? 0) - QUEUED.getTime()) / 1000)).toEqual([
      0, 5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400,
    ]);
  });

  it('gives up after the tenth attempt, about 24 hours in', () => {
    expect(
      nextAttemptAt({ queuedAt: QUEUED, attempts: 10, now: at(86_400), scale: 1, random: () => 0 }),
    ).toBeUndefined();
  });

  it('jitters each wait by at most ±10 %', () => {
    const early = nextAttemptAt({
      queuedAt: QUEUED,
      attempts: 4,
      now: QUEUED,
      scale: 1,
      random: () => 0,
    });
    const late = nextAttemptAt({
      queuedAt: QUEUED,
      attempts: 4,
      now: QUEUED,
      scale: 1,
      random: () => 0.999999,
    });
    expect(early?.getTime()).toBe(at(7200 * 0.9).getTime());
    expect((late?.getTime() ?? 0) - at(7200 * 1.1).getTime()).toBeLessThanOrEqual(1);
  });

  it('never schedules in the past, and waits for Retry-After', () => {
    const now = at(10_000);
    expect(
      nextAttemptAt({ queuedAt: QUEUED, attempts: 2, now, scale: 1, random: () => 0.5 })?.getTime(),
    ).toBe(now.getTime());
    expect(
      nextAttemptAt({
        queuedAt: QUEUED,
        attempts: 1,
        now: QUEUED,
        retryAfterS: 120,
        scale: 1,
        random: () => 0.5,
      })?.getTime(),
    ).toBe(at(120).getTime());
  });

  it('scales for tests', () => {
    expect(
      nextAttemptAt({
        queuedAt: QUEUED,
        attempts: 9,
        now: QUEUED,
        scale: 0.001,
        random: () => 0.5,
      })?.getTime(),
    ).toBe(at(86.4).getTime());
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('30', QUEUED)).toBe(30);
    expect(parseRetryAfter(at(90).toUTCString(), QUEUED)).toBe(90);
    expect(parseRetryAfter('soon', QUEUED)).toBeUndefined();
    expect(parseRetryAfter(undefined, QUEUED)).toBeUndefined();
  });
});
