/**
 * PostgreSQL going away under a running service (RELIABILITY.md §5 rows 3 and 4): while the
 * database is unreachable every request fails fast with 503 `unavailable` + `Retry-After` (never
 * hangs, never a 500, never takes the process down), `/readyz` says 503 while `/healthz` stays
 * 200, and the service recovers by itself once PostgreSQL accepts connections again.
 *
 * The outage has two halves: the port refuses connections (postmaster gone), then a silent
 * listener takes the port and never answers (a hung server), which only the pool's 2 s connect
 * timeout ends. A clean restart (`-m fast`) while the pool holds idle connections must cost
 * nothing: the pool drops them and the next request works.
 */
import { once } from 'node:events';
import { createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnServer, type ServerProcess } from '../helpers/spawn-server.js';
import {
  createThrowawayCluster,
  ownClusterSkipReason,
  type ThrowawayCluster,
} from './throwaway-cluster.js';
import { failureName, sleep, within } from './write-ledger.js';

const WORKERS = 8;
/** Steady load before the crash: at least this long and this many answers, at most the max. */
const STEADY_MS = 1000;
const STEADY_MIN_ANSWERS = 40;
const STEADY_MAX_MS = 5000;
/** First the port refuses connections (the postmaster is gone), then it accepts and is silent. */
const REFUSED_MS = 1000;
const SILENT_MS = 2500;
/** The pool's connect timeout (2 s) plus slack for a loaded machine. */
const OUTAGE_LATENCY_BOUND_MS = 3000;
/** A silent server's answer must come from the connect timeout, not from something faster. */
const CONNECT_TIMEOUT_MS = 2000;
/** From PostgreSQL accepting connections again to the first 2xx of a request that needs it. */
const RECOVERY_BOUND_MS = 2000;
const AFTER_RECOVERY_MS = 2500;
const PROBE_INTERVAL_MS = 100;
/** Client timeout: well above every bound, so that a slow answer is measured, not cut off. */
const REQUEST_TIMEOUT_MS = 8000;
/** A client honouring `Retry-After`, scaled down so that the outage still sees steady traffic. */
const BACKOFF_MS = 100;
const DATABASE = 'todo';
const POOL_WARNING = 'an idle database connection failed; the pool replaces it';

type Kind = 'create' | 'list' | 'read' | 'update' | 'readyz' | 'healthz';
const DATABASE_KINDS: readonly Kind[] = ['create', 'list', 'read', 'update'];

/** One request: when it started and ended (performance.now()), and what came back. */
interface Sample {
  readonly kind: Kind;
  readonly start: number;
  readonly end: number;
  /** `503 unavailable`, `201`, or a transport failure such as `ECONNREFUSED`. */
  readonly outcome: string;
  readonly status: number | undefined;
  readonly retryAfter: string | null;
  readonly problemType: string | null;
  readonly body: unknown;
}

const ok = (sample: Sample) => sample.status !== undefined && sample.status < 300;
const latency = (sample: Sample) => sample.end - sample.start;
const isUnavailableProblem = (sample: Sample) =>
  sample.status === 503 &&
  sample.outcome === '503 unavailable' &&
  sample.problemType === 'application/problem+json' &&
  sample.retryAfter !== null &&
  /^\d+$/.test(sample.retryAfter);

async function request(
  baseUrl: string,
  kind: Kind,
  path: string,
  init: RequestInit = {},
): Promise<Sample> {
  const start = performance.now();
  try {
    const response = await fetch(`${baseUrl}${path}`, {
      ...init,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    const body = text === '' ? undefined : (JSON.parse(text) as unknown);
    const code = (body as { code?: unknown } | undefined)?.code;
    return {
      kind,
      start,
      end: performance.now(),
      outcome: `${response.status}${response.status >= 400 && typeof code === 'string' ? ` ${code}` : ''}`,
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      problemType: response.headers.get('content-type')?.split(';')[0] ?? null,
      body,
    };
  } catch (error) {
    return {
      kind,
      start,
      end: performance.now(),
      outcome: failureName(error),
      status: undefined,
      retryAfter: null,
      problemType: null,
      body: undefined,
    };
  }
}

/** Outcome counts and the slowest request of a set of samples, for the log. */
function describeSamples(samples: readonly Sample[]): string {
  if (samples.length === 0) return 'none';
  const counts = new Map<string, number>();
  for (const sample of samples) counts.set(sample.outcome, (counts.get(sample.outcome) ?? 0) + 1);
  const max = Math.max(...samples.map(latency));
  return `${[...counts].map(([outcome, n]) => `${outcome}×${n}`).join(' ')} (max ${Math.round(max)} ms)`;
}

/**
 * Readers and writers against the service until stopped: creates, lists, reads and updates of
 * the todos they created, plus `/readyz` and `/healthz` probes every 100 ms.
 */
function startTraffic(baseUrl: string) {
  const samples: Sample[] = [];
  const control = { stopped: false };
  const ids: string[] = [];

  async function worker(index: number): Promise<void> {
    for (let n = 0; !control.stopped; n++) {
      const id = ids[(index * 7 + n) % Math.max(ids.length, 1)];
      const turn = n % 4;
      let sample: Sample;
      if (turn === 0 || id === undefined) {
        sample = await request(baseUrl, 'create', '/api/todos', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title: `outage w${index} n${n}` }),
        });
        const created = sample.body as { id?: unknown } | undefined;
        if (sample.status === 201 && typeof created?.id === 'string') ids.push(created.id);
      } else if (turn === 1) {
        sample = await request(baseUrl, 'list', '/api/todos?limit=5');
      } else if (turn === 2) {
        sample = await request(baseUrl, 'read', `/api/todos/${id}`);
      } else {
        sample = await request(baseUrl, 'update', `/api/todos/${id}`, {
          method: 'PATCH',
          headers: { 'content-type': 'application/merge-patch+json' },
          body: JSON.stringify({ description: `w${index} n${n}` }),
        });
      }
      samples.push(sample);
      if (!ok(sample)) await sleep(BACKOFF_MS);
    }
  }

  async function probe(): Promise<void> {
    while (!control.stopped) {
      const [ready, health] = await Promise.all([
        request(baseUrl, 'readyz', '/readyz'),
        request(baseUrl, 'healthz', '/healthz'),
      ]);
      samples.push(ready, health);
      await sleep(PROBE_INTERVAL_MS);
    }
  }

  const done = Promise.all([
    ...Array.from({ length: WORKERS }, (_unused, index) => worker(index)),
    probe(),
  ]);
  return {
    samples,
    async stop() {
      control.stopped = true;
      await within(done, REQUEST_TIMEOUT_MS + 2000, 'the traffic stopping');
    },
  };
}

/**
 * A "hung" PostgreSQL on `port`: the kernel completes every TCP connection and nothing ever
 * answers. Only a connect timeout gets a client out of it.
 */
async function listenSilently(port: number) {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  return {
    get accepted() {
      return accepted;
    },
    async close() {
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/** `performance.now()` when `cluster` first runs a query (not merely listens: recovery ends). */
async function whenAccepting(cluster: ThrowawayCluster, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    try {
      await cluster.query('select 1');
      return performance.now();
    } catch (error) {
      if (performance.now() > deadline) throw error;
      await sleep(20);
    }
  }
}

const unavailable = ownClusterSkipReason();
const children: ServerProcess[] = [];
let cluster: ThrowawayCluster | undefined;

const isAlive = (server: ServerProcess) =>
  server.child.exitCode === null && server.child.signalCode === null;
const tail = (server: ServerProcess) => server.output().split('\n').slice(-30).join('\n');

afterAll(async () => {
  for (const child of children.splice(0)) {
    if (isAlive(child)) {
      child.child.kill('SIGKILL');
      await within(child.exited, 5000, 'killing the server').catch(() => undefined);
    }
  }
  await cluster?.destroy();
});

describe.skipIf(unavailable !== undefined)(
  `PostgreSQL outage${unavailable ? ` (skipped: ${unavailable})` : ''}`,
  () => {
    beforeAll(async () => {
      cluster = await createThrowawayCluster('todo-api-pg-outage-');
      await cluster.createDatabase(DATABASE);
    });

    /** The service of the previous test if it is still up, else a new one. */
    async function service(pgCluster: ThrowawayCluster): Promise<ServerProcess> {
      if (!pgCluster.running) await pgCluster.start();
      let server = children.at(-1);
      if (server === undefined || !isAlive(server)) {
        // LOG_LEVEL=warn: the pool's warning about a dropped idle connection is evidence below.
        server = await spawnServer({ DATABASE_URL: pgCluster.url(DATABASE), LOG_LEVEL: 'warn' });
        children.push(server);
      }
      const ready = await request(server.baseUrl, 'readyz', '/readyz');
      expect(ready.status, JSON.stringify(ready.body)).toBe(200);
      return server;
    }

    it('when PostgreSQL crashes under load, then requests fail fast with 503 + Retry-After and recover by themselves', async () => {
      const pgCluster = cluster;
      if (pgCluster === undefined) throw new Error('no cluster');
      const server = await service(pgCluster);
      const traffic = startTraffic(server.baseUrl);

      const steadyBegan = performance.now();
      await sleep(STEADY_MS);
      while (
        traffic.samples.filter((s) => DATABASE_KINDS.includes(s.kind) && ok(s)).length <
          STEADY_MIN_ANSWERS &&
        performance.now() - steadyBegan < STEADY_MAX_MS
      ) {
        await sleep(50);
      }
      const crashBegan = performance.now();
      await pgCluster.stop('immediate');
      const downAt = performance.now();
      await sleep(REFUSED_MS);
      const silent = await listenSilently(pgCluster.port);
      const silentAt = performance.now();
      await sleep(SILENT_MS);
      const silentEnd = performance.now();
      await silent.close();
      const aliveThroughOutage = isAlive(server);
      const upBegan = performance.now();
      const accepting = whenAccepting(pgCluster, 30_000);
      await pgCluster.start();
      const upAt = await accepting;
      await sleep(AFTER_RECOVERY_MS);
      await traffic.stop();
      const aliveAtEnd = isAlive(server);

      const { samples } = traffic;
      const database = samples.filter((s) => DATABASE_KINDS.includes(s.kind));
      const before = database.filter((s) => s.end < crashBegan);
      const caught = database.filter((s) => s.start < downAt && s.end >= crashBegan);
      const outage = samples.filter((s) => s.start >= downAt && s.end <= upBegan);
      const outageDatabase = outage.filter((s) => DATABASE_KINDS.includes(s.kind));
      const outageReady = outage.filter((s) => s.kind === 'readyz');
      const outageHealth = outage.filter((s) => s.kind === 'healthz');
      const hung = outage.filter((s) => s.start >= silentAt && s.end <= silentEnd);
      const hungDatabase = hung.filter(
        (s) => DATABASE_KINDS.includes(s.kind) || s.kind === 'readyz',
      );
      const restarting = database.filter((s) => s.start >= downAt && s.end > upBegan);
      const firstOk = database
        .filter((s) => s.start >= upBegan && ok(s))
        .sort((a, b) => a.end - b.end)[0];
      const firstReady = samples
        .filter((s) => s.kind === 'readyz' && s.start >= upBegan && s.status === 200)
        .sort((a, b) => a.end - b.end)[0];
      const settled = database.filter((s) => s.start >= upAt + RECOVERY_BOUND_MS);
      const recoveryMs = firstOk === undefined ? undefined : Math.round(firstOk.end - upAt);
      const readyMs = firstReady === undefined ? undefined : Math.round(firstReady.end - upAt);
      const maxOutageLatency = Math.round(Math.max(0, ...outage.map(latency)));

      console.log(
        `[postgres outage] before: ${describeSamples(before)}` +
          ` | in flight at the crash: ${describeSamples(caught)}` +
          ` | outage (${Math.round(upBegan - downAt)} ms): ${describeSamples(outageDatabase)}` +
          `; /readyz ${describeSamples(outageReady)}; /healthz ${describeSamples(outageHealth)}` +
          ` | of which against a silent server (${silent.accepted} connections): ${describeSamples(hungDatabase)}` +
          ` | PostgreSQL start to accepting ${Math.round(upAt - upBegan)} ms, during it: ${describeSamples(restarting.filter((s) => s.start < upAt))}` +
          ` | first 2xx ${recoveryMs ?? '-'} ms and /readyz 200 ${readyMs ?? '-'} ms after PostgreSQL accepted connections` +
          ` | after ${RECOVERY_BOUND_MS} ms: ${describeSamples(settled)}` +
          ` | service alive: outage=${aliveThroughOutage} end=${aliveAtEnd}`,
      );

      // Never crash: no transport failure anywhere means the process answered every request.
      expect(aliveThroughOutage && aliveAtEnd, `the service died:\n${tail(server)}`).toBe(true);
      expect(samples.filter((s) => s.status === undefined).map((s) => s.outcome)).toEqual([]);
      // Never a 500: a database failure is a 503 `unavailable` with Retry-After, else 2xx.
      const badFailures = database.filter((s) => !ok(s) && !isUnavailableProblem(s));
      expect(badFailures.map((s) => `${s.kind} ${s.outcome}`)).toEqual([]);
      expect(before.length).toBeGreaterThan(0);
      expect(before.every(ok)).toBe(true);

      // Fail fast: every request of the outage answered within the bound, as a 503 problem.
      expect(outageDatabase.length).toBeGreaterThan(WORKERS);
      expect(maxOutageLatency).toBeLessThanOrEqual(OUTAGE_LATENCY_BOUND_MS);
      expect(outageDatabase.filter((s) => !ok(s) && !isUnavailableProblem(s))).toEqual([]);
      expect(outageDatabase.filter((s) => isUnavailableProblem(s)).length).toBeGreaterThan(0);
      // Against a server that never answers, requests end by the pool's connect timeout: the
      // phase did hold them that long (it was real), and not longer (the bound above).
      expect(silent.accepted).toBeGreaterThan(0);
      expect(hungDatabase.length).toBeGreaterThan(0);
      expect(Math.max(...hungDatabase.map(latency))).toBeGreaterThanOrEqual(
        CONNECT_TIMEOUT_MS * 0.9,
      );
      // Readiness follows the database; liveness does not.
      expect(outageReady.length).toBeGreaterThan(0);
      expect(outageReady.filter((s) => !isUnavailableProblem(s)).map((s) => s.outcome)).toEqual([]);
      expect(outageHealth.length).toBeGreaterThan(0);
      expect(outageHealth.filter((s) => s.status !== 200).map((s) => s.outcome)).toEqual([]);

      // Recovery without a restart of the service.
      expect(recoveryMs).toBeDefined();
      expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_BOUND_MS);
      expect(readyMs).toBeDefined();
      expect(readyMs).toBeLessThanOrEqual(RECOVERY_BOUND_MS + PROBE_INTERVAL_MS);
      expect(settled.length).toBeGreaterThan(0);
      expect(settled.filter((s) => !ok(s)).map((s) => s.outcome)).toEqual([]);
    }, 30_000);

    it('when PostgreSQL restarts cleanly while the pool holds idle connections, then the next request works', async () => {
      const pgCluster = cluster;
      if (pgCluster === undefined) throw new Error('no cluster');
      const server = await service(pgCluster);
      const before = server.output().split(POOL_WARNING).length - 1;

      // Concurrent reads open several pooled connections, which then sit idle.
      const warm = await Promise.all(
        Array.from({ length: 8 }, () => request(server.baseUrl, 'list', '/api/todos?limit=5')),
      );
      expect(warm.map((s) => s.status)).toEqual(warm.map(() => 200));
      await sleep(300);

      const restartBegan = performance.now();
      await pgCluster.restart('fast');
      const upAt = performance.now();
      const after: Sample[] = [];
      for (let n = 0; n < 5; n++) {
        after.push(await request(server.baseUrl, 'list', '/api/todos?limit=5'));
      }
      after.push(
        await request(server.baseUrl, 'create', '/api/todos', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title: 'after a clean restart' }),
        }),
      );
      const ready = await request(server.baseUrl, 'readyz', '/readyz');
      await sleep(200);
      const dropped = server.output().split(POOL_WARNING).length - 1 - before;

      console.log(
        `[postgres fast restart] restart ${Math.round(upAt - restartBegan)} ms` +
          ` | idle connections dropped by the pool: ${dropped}` +
          ` | next requests: ${describeSamples(after)}; /readyz ${ready.outcome}` +
          ` | service alive: ${isAlive(server)}`,
      );

      expect(isAlive(server), `the service died:\n${tail(server)}`).toBe(true);
      // The idle connections were there and were dropped (not handed to the next request).
      expect(dropped).toBeGreaterThan(0);
      expect(after.map((s) => s.outcome)).toEqual([200, 200, 200, 200, 200, 201].map(String));
      expect(ready.status).toBe(200);
    }, 30_000);
  },
);
