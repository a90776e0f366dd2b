/**
 * When a failed delivery is tried again: the Standard Webhooks example schedule, as offsets from
 * when the delivery was queued — at once, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h —
 * each with ±10 % jitter so that many receivers coming back do not get a thundering herd.
 * After the last, the delivery has failed. `scale` shrinks the schedule for tests.
 */
export const RETRY_OFFSETS_S = [
  0, 5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400,
] as const;

const JITTER = 0.1;
/** A receiver's `Retry-After` is honoured up to this. */
const MAX_RETRY_AFTER_S = 86_400;

export interface RetryInput {
  /** When the delivery was queued: the schedule's origin. */
  readonly queuedAt: Date;
  /** Attempts made so far (the failed one included). */
  readonly attempts: number;
  readonly now: Date;
  /** Seconds the receiver asked to wait (429/503 `Retry-After`), if any. */
  readonly retryAfterS?: number | undefined;
  readonly scale: number;
  /** In [0, 1). */
  readonly random: () => number;
}

/** The next attempt's time, or `undefined` when the schedule is exhausted. */
export function nextAttemptAt(input: RetryInput): Date | undefined {
  const offset = RETRY_OFFSETS_S[input.attempts];
  if (offset === undefined) return undefined;
  const jitter = 1 + (input.random() * 2 - 1) * JITTER;
  const scheduled = input.queuedAt.getTime() + offset * 1000 * input.scale * jitter;
  const asked =
    input.retryAfterS === undefined
      ? 0
      : input.now.getTime() + Math.min(input.retryAfterS, MAX_RETRY_AFTER_S) * 1000;
  return new Date(Math.max(scheduled, asked, input.now.getTime()));
}

/** `Retry-After` in seconds (delta-seconds or an HTTP date), if the header is usable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now.getTime()) / 1000);
}
