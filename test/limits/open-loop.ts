import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** One request of an open-loop run and what came back. */
export interface Exchange {
  /** 0 when the request failed without a response (see `error`). */
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
  /** When it was sent and answered, in ms since the run started. */
  readonly sentAtMs: number;
  readonly latencyMs: number;
  readonly error: string | undefined;
}

export interface OpenLoopOptions {
  readonly port: number;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly ratePerSecond: number;
  readonly durationMs: number;
  /** A request unanswered this long counts as an error. */
  readonly timeoutMs?: number;
}

/** How often the scheduler wakes up to send what is due. */
const TICK_MS = 5;

/**
 * Sends GETs at a steady `ratePerSecond` for `durationMs` whatever the answers take (an open
 * loop, as real clients arrive), over keep-alive connections, and resolves with every exchange
 * once all are answered. The count is capped by rate × duration, the wall time by duration +
 * timeout.
 *
 * Not autocannon: its rate option lets each connection send its whole per-second allowance at
 * the start of every second and then pause, so the load arrives in bursts whose edges race the
 * edges of a fixed rate-limit window, and the admitted share then depends on that race.
 */
export async function openLoop(options: OpenLoopOptions): Promise<Exchange[]> {
  const { port, path, headers, ratePerSecond, durationMs, timeoutMs = 5000 } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const started = performance.now();
  const exchanges: Promise<Exchange>[] = [];

  const send = (): Promise<Exchange> =>
    new Promise((resolve) => {
      const sentAt = performance.now();
      const answer = (fields: Omit<Exchange, 'sentAtMs' | 'latencyMs'>) => {
        resolve({ ...fields, sentAtMs: sentAt - started, latencyMs: performance.now() - sentAt });
      };
      const req = request({ host: '127.0.0.1', port, path, agent, headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          answer({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString(),
            error: undefined,
          });
        });
      });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
      req.on('error', (error) => {
        answer({ status: 0, headers: {}, body: '', error: error.message });
      });
      req.end();
    });

  // Due requests are counted from the elapsed time, so that a late timer catches up.
  for (let elapsed = 0; elapsed < durationMs; elapsed = performance.now() - started) {
    const due = Math.floor((elapsed / 1000) * ratePerSecond) + 1;
    while (exchanges.length < due) exchanges.push(send());
    await sleep(TICK_MS);
  }
  try {
    return await Promise.all(exchanges);
  } finally {
    agent.destroy();
  }
}
