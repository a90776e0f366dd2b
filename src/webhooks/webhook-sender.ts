import { Agent, request } from 'undici';
import { checkTarget, guardedLookup, type TargetPolicy } from './target-guard.js';

/**
 * One HTTP attempt of a delivery (RELIABILITY.md §8.2): POST the payload, never follow a
 * redirect (undici's `request` does not), give up after `timeoutMs` in all, read at most
 * 64 KiB of the answer. Every connection resolves through the SSRF guard; IP literals, which
 * never reach a lookup, are checked before.
 */

/** Bytes of a receiver's answer read at most; the rest is discarded. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendOutcome {
  /** The receiver's status, when it answered. */
  readonly statusCode?: number;
  readonly retryAfter?: string;
  /** Why there is no answer: timeout, refused connection, blocked target, … */
  readonly error?: string;
  readonly durationMs: number;
}

export interface WebhookSender {
  send(
    url: string,
    headers: Readonly<Record<string, string>>,
    payload: string,
  ): Promise<SendOutcome>;
  close(): Promise<void>;
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${error.message}` : error.message;
  }
  return String(error);
}

export function createWebhookSender(policy: TargetPolicy, timeoutMs: number): WebhookSender {
  const agent = new Agent({
    connect: { lookup: guardedLookup(policy), timeout: timeoutMs },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    // A fresh connection per attempt would be kinder to nobody; keep them briefly.
    keepAliveTimeout: 4000,
  });

  return {
    async send(url, headers, payload) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      try {
        checkTarget(url, policy);
        const response = await request(url, {
          method: 'POST',
          headers: {
            ...headers,
            'content-type': 'application/json',
            'user-agent': 'todo-api-webhooks/1',
          },
          body: payload,
          dispatcher: agent,
          signal: AbortSignal.timeout(timeoutMs),
        });
        let read = 0;
        for await (const chunk of response.body) {
          read += (chunk as Buffer).length;
          if (read >= MAX_RESPONSE_BYTES) break;
        }
        // Stops the download when it was cut short above (no-op when fully read).
        response.body.destroy();
        const retryAfter = response.headers['retry-after'];
        return {
          statusCode: response.statusCode,
          ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
          durationMs: elapsed(),
        };
      } catch (error) {
        return { error: describe(error), durationMs: elapsed() };
      }
    },

    // Cuts off attempts still running: their deliveries are leased and will be sent again.
    close: () => agent.destroy(),
  };
}
