/**
 * `npm run bench:events -- [--seconds 10] [--connections 20] [--rate N] [--database-url URL]`
 *
 * Event throughput and end-to-end latency under write load: the real service (pinned to the
 * server core) with one event stream open and one webhook endpoint registered (a receiver in
 * this process, on loopback); `--connections` writers create todos in a closed loop for
 * `--seconds` (at most `--rate` creates a second in all, when given). For every acknowledged create, the latency is measured from its 201 to the
 * arrival of its `todo.created` event on the stream and at the webhook receiver. Prints the
 * figures; events that never arrive are reported as lost.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildService } from '../test/helpers/start-command.js';
import { pinSelf, SERVICE_NODE_ARGS, SERVICE_SCRIPT, startNodeServer } from './processes.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '20' },
    rate: { type: 'string' },
    'database-url': { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(args.seconds);
const CONNECTIONS = Number(args.connections);
/** Each writer's pause between creates, for `--rate` in all; 0: as fast as answered. */
const PACE_MS = args.rate === undefined ? 0 : (CONNECTIONS * 1000) / Number(args.rate);
/** How long to wait for the last events after the writers stop. */
const DRAIN_MS = 10_000;

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};
const describe = (values: readonly number[]) =>
  values.length === 0
    ? 'none'
    : `p50 ${percentile(values, 50).toFixed(1)} ms, p95 ${percentile(values, 95).toFixed(1)} ms, p99 ${percentile(values, 99).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;

const pinning = pinSelf(!args['no-pin']);
const directory = mkdtempSync(join(tmpdir(), 'todo-api-bench-events-'));
const databaseUrl = args['database-url'] ?? `sqlite:${join(directory, 'events.db')}`;
await buildService();
const server = await startNodeServer({
  script: SERVICE_SCRIPT,
  nodeArgs: SERVICE_NODE_ARGS,
  env: {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_MAX: '0',
    TODO_QUOTA: '100000000',
    WEBHOOK_ALLOW_LOOPBACK: 'true',
    WEBHOOK_ALLOW_HTTP: 'true',
  },
  pin: pinning.used,
  readyPath: '/readyz',
});

const acked = new Map<string, number>();
const viaStream = new Map<string, number>();
const viaWebhook = new Map<string, number>();

// The webhook receiver: answers 204 at once and notes when each todo's creation arrived.
const receiver = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const event = JSON.parse(Buffer.concat(chunks).toString()) as {
      type: string;
      data: { todo: { id: string } };
    };
    if (event.type === 'todo.created') viaWebhook.set(event.data.todo.id, performance.now());
    response.writeHead(204).end();
  });
});
receiver.listen(0, '127.0.0.1');
await once(receiver, 'listening');
const hook = await fetch(`${server.baseUrl}/api/webhooks`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({
    url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    event_types: ['todo.created'],
  }),
});
if (hook.status !== 201)
  throw new Error(`webhook not created: ${hook.status} ${await hook.text()}`);

// The stream: every `todo.created` message, by todo id.
const abort = new AbortController();
const stream = await fetch(`${server.baseUrl}/api/todos/events`, {
  headers: { accept: 'text/event-stream' },
  signal: abort.signal,
});
const streamed = (async () => {
  if (!stream.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for await (const chunk of stream.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (block.includes('event: todo.created') && data !== undefined) {
          const event = JSON.parse(data) as { data: { todo: { id: string } } };
          viaStream.set(event.data.todo.id, performance.now());
        }
      }
    }
  } catch {
    // aborted at the end
  }
})();

// The writers: closed loops of creates.
const until = performance.now() + SECONDS * 1000;
let failed = 0;
await Promise.all(
  Array.from({ length: CONNECTIONS }, async (_, writer) => {
    for (let i = 0; performance.now() < until; i++) {
      const next = performance.now() + PACE_MS;
      const response = await fetch(`${server.baseUrl}/api/todos`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: `writer ${writer} todo ${i}` }),
      });
      const at = performance.now();
      if (response.status !== 201) {
        failed++;
        await response.arrayBuffer();
        continue;
      }
      acked.set(((await response.json()) as { id: string }).id, at);
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }),
);
const drainUntil = performance.now() + DRAIN_MS;
while (
  performance.now() < drainUntil &&
  (viaStream.size < acked.size || viaWebhook.size < acked.size)
) {
  await new Promise((resolve) => setTimeout(resolve, 50));
}
abort.abort();
await streamed;
receiver.close();
await server.stop();
rmSync(directory, { recursive: true, force: true });

const latencies = (arrivals: Map<string, number>) =>
  [...acked].flatMap(([id, at]) => {
    const arrived = arrivals.get(id);
    return arrived === undefined ? [] : [arrived - at];
  });
const lost = (arrivals: Map<string, number>) => [...acked.keys()].filter((id) => !arrivals.has(id));
console.log(
  `events bench: ${pinning.detail}; ${CONNECTIONS} writers for ${SECONDS} s on ${databaseUrl.split(':')[0]}`,
);
console.log(
  `  creates acknowledged: ${acked.size} (${(acked.size / SECONDS).toFixed(0)}/s), failed ${failed}`,
);
console.log(
  `  stream:  ${viaStream.size} todo.created received, lost ${lost(viaStream).length}; 201 → event ${describe(latencies(viaStream))}`,
);
console.log(
  `  webhook: ${viaWebhook.size} todo.created received, lost ${lost(viaWebhook).length}; 201 → delivery ${describe(latencies(viaWebhook))}`,
);
