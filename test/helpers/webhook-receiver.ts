import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a receiver got, with the verdict of the reference verifier. */
export interface Received {
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
  readonly at: number;
}

/** How the receiver answers the n-th request (from 0). */
export type Answer = (
  index: number,
  request: Received,
) => {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Waits this long before answering (a slow or hanging receiver). */
  readonly delayMs?: number;
};

export interface WebhookReceiver {
  readonly url: string;
  readonly received: Received[];
  /** The most requests this receiver was answering at once. */
  maxInFlight(): number;
  /** Resolves once `count` requests arrived; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/** A webhook receiver on loopback that records every request and answers as told. */
export async function startReceiver(
  answer: Answer = () => ({ status: 204 }),
): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  const load = { now: 0, max: 0 };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    load.now++;
    load.max = Math.max(load.max, load.now);
    response.on('close', () => load.now--);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = {
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      const index = received.push(entry) - 1;
      for (const waiter of waiters.filter((w) => received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const { status, headers = {}, delayMs = 0 } = answer(index, entry);
      setTimeout(() => {
        if (response.destroyed) return;
        response.writeHead(status, headers).end();
      }, delayMs);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    maxInFlight: () => load.max,
    waitFor(count, timeoutMs = 10_000) {
      if (received.length >= count) return Promise.resolve(received.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          reject(
            new Error(`received ${received.length} of ${count} deliveries in ${timeoutMs} ms`),
          );
        }, timeoutMs);
        waiters.push({
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve(received.slice());
          },
        });
      });
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Verifies a received request with the Standard Webhooks reference library; returns the payload. */
export function verify(secret: string, request: Received): unknown {
  const headers = Object.fromEntries(
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((name) => [
      name,
      String(request.headers[name] ?? ''),
    ]),
  );
  return new Webhook(secret).verify(request.body, headers);
}
