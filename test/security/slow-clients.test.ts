import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultHeaderLines, withDefaults } from './defaults.js';
import { expectRawProblem, rawClient, type RawClient, type RawResponse } from './raw-http.js';
import { startServer, type ServerUnderAttack } from './server-process.js';

/**
 * RELIABILITY.md §5 row 12 (slowloris): clients that trickle their headers or body get a 408
 * problem and are disconnected once the configured timeout has passed, while a normal client on
 * another connection is served as if nothing happened. Short timeouts keep the run to seconds.
 */

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
const KEEP_ALIVE_TIMEOUT_MS = 1000;
/** Node checks the timeouts every 500 ms: a connection may outlive its timeout by that, plus noise. */
const CLOSE_SLACK_MS = 1000;
/** A client is never cut off before its timeout, give or take timer granularity. */
const EARLY_MS = 100;
/**
 * Node 20 keeps an idle keep-alive connection 1 s past `keepAliveTimeout` (measured), so that a
 * client reusing it right at the advertised `Keep-Alive: timeout` does not race the close.
 */
const NODE_KEEP_ALIVE_BUFFER_MS = 1000;

const SLOW_HEADER_SOCKETS = 60;
const SLOW_BODY_SOCKETS = 60;
const SILENT_SOCKETS = 20;
const IDLE_KEEP_ALIVE_SOCKETS = 20;
/** Each slow client sends one byte this often, and gives up after 10 s at the latest. */
const DRIP_EVERY_MS = 200;
const DRIP_TIMES = 50;

/** The probe: a normal client sending 50 requests a second over its own keep-alive connections. */
const PROBE_EVERY_MS = 20;
const PROBE_MIN_REQUESTS = 80;
const PROBE_P99_MS = 100;
/**
 * The p99 bound is for a machine that is otherwise idle. A twin server that nobody attacks is
 * probed at the same time; on a machine so busy (other processes) that even the twin's p99
 * exceeds half the bound, the attacked server's p99 may be at most twice the twin's instead.
 */
const CONTROL_FACTOR = 2;
/** Requests that warm the server up (JIT, first-use compilation) before anything is measured. */
const WARM_UP_REQUESTS = 30;
/** The whole crowd is over by then, whatever happens. */
const CROWD_DEADLINE_MS = REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS + 3000;

interface ProbeResult {
  readonly latenciesMs: readonly number[];
  readonly errors: readonly string[];
}

interface CrowdResult {
  readonly slowHeaders: readonly RawResponse[];
  readonly slowBodies: readonly RawResponse[];
  readonly silent: readonly RawResponse[];
  readonly idleKeepAlive: readonly RawResponse[];
  readonly probe: ProbeResult;
  /** The same probe against the unattacked twin, at the same time. */
  readonly control: ProbeResult;
}

/** Sends GET /api/todos every `PROBE_EVERY_MS` (open loop) until `stop` is called. */
function startProbe(port: number): { stop(): Promise<ProbeResult> } {
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  const latenciesMs: number[] = [];
  const errors: string[] = [];
  const pending = new Set<Promise<void>>();

  const once = () =>
    new Promise<void>((resolve) => {
      const started = performance.now();
      const req = request(
        { host: '127.0.0.1', port, path: '/api/todos', agent, headers: withDefaults() },
        (response) => {
          response.resume();
          response.on('end', () => {
            if (response.statusCode === 200) latenciesMs.push(performance.now() - started);
            else errors.push(`status ${response.statusCode ?? 0}`);
            resolve();
          });
        },
      );
      req.setTimeout(5000, () => req.destroy(new Error('probe request timed out')));
      req.on('error', (error) => {
        errors.push(error.message);
        resolve();
      });
      req.end();
    });

  const timer = setInterval(() => {
    const sent = once();
    pending.add(sent);
    void sent.then(() => pending.delete(sent));
  }, PROBE_EVERY_MS);

  return {
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      agent.destroy();
      return { latenciesMs, errors };
    },
  };
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

describe('slow clients against the real server (row 12)', () => {
  let server: ServerUnderAttack;
  let twin: ServerUnderAttack | undefined;
  let raw: RawClient;
  let crowd: CrowdResult;

  beforeAll(async () => {
    const env = {
      HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
      KEEP_ALIVE_TIMEOUT_MS: String(KEEP_ALIVE_TIMEOUT_MS),
    };
    const started = await Promise.allSettled([startServer(env), startServer(env)]);
    const running = started.flatMap((result) =>
      result.status === 'fulfilled' ? [result.value] : [],
    );
    if (running.length < 2) {
      await Promise.all(running.map((one) => one.stop()));
      const failure = started.find((result) => result.status === 'rejected');
      throw new Error('could not start both servers', { cause: failure?.reason });
    }
    [server, twin] = running as [ServerUnderAttack, ServerUnderAttack];
    raw = rawClient(server.port);
    for (const target of [server, twin]) {
      for (let i = 0; i < WARM_UP_REQUESTS; i++) {
        const response = await fetch(`${target.baseUrl}/api/todos`, { headers: withDefaults() });
        expect(response.status).toBe(200);
      }
    }
    const times = (count: number) => Array.from({ length: count });

    const control = startProbe(twin.port);
    const probe = startProbe(server.port);
    const slowHeaders = times(SLOW_HEADER_SOCKETS).map(() =>
      raw.exchange((socket) => {
        socket.write(`GET /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}X-Slow: `);
        raw.drip(socket, 'a', DRIP_EVERY_MS, DRIP_TIMES);
      }, CROWD_DEADLINE_MS),
    );
    const slowBodies = times(SLOW_BODY_SOCKETS).map(() =>
      raw.exchange((socket) => {
        socket.write(
          `POST /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}` +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"title":"slow',
        );
        raw.drip(socket, 'w', DRIP_EVERY_MS, DRIP_TIMES);
      }, CROWD_DEADLINE_MS),
    );
    const silent = times(SILENT_SOCKETS).map(() =>
      raw.exchange(() => {
        // Connects and never sends a byte.
      }, CROWD_DEADLINE_MS),
    );
    const idleKeepAlive = times(IDLE_KEEP_ALIVE_SOCKETS).map(() =>
      raw.exchange((socket) => {
        socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}\r\n`);
      }, CROWD_DEADLINE_MS),
    );

    const [headersDone, bodiesDone, silentDone, idleDone] = await Promise.all([
      Promise.all(slowHeaders),
      Promise.all(slowBodies),
      Promise.all(silent),
      Promise.all(idleKeepAlive),
    ]);
    crowd = {
      slowHeaders: headersDone,
      slowBodies: bodiesDone,
      silent: silentDone,
      idleKeepAlive: idleDone,
      probe: await probe.stop(),
      control: await control.stop(),
    };
  }, 30_000);

  afterAll(async () => {
    raw.close();
    await Promise.all([server.stop(), twin?.stop()]);
  });

  it(`answers ${SLOW_HEADER_SOCKETS} clients that trickle their headers with 408 and closes them within the headers timeout + 1 s`, () => {
    for (const response of crowd.slowHeaders) {
      expectRawProblem(response, 'request-timeout');
      expect(response.closedByServer).toBe(true);
      expect(response.elapsedMs).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - EARLY_MS);
      expect(response.elapsedMs).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + CLOSE_SLACK_MS);
    }
  });

  it(`answers ${SLOW_BODY_SOCKETS} clients that trickle their body with 408 and closes them within the request timeout + 1 s`, () => {
    for (const response of crowd.slowBodies) {
      expectRawProblem(response, 'request-timeout');
      expect(response.closedByServer).toBe(true);
      expect(response.elapsedMs).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - EARLY_MS);
      expect(response.elapsedMs).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS + CLOSE_SLACK_MS);
    }
  });

  it('stores nothing from a body that timed out', async () => {
    expect(await server.todoCount()).toBe(0);
  });

  it(`answers ${SILENT_SOCKETS} connections that never send a byte with 408 and closes them within the headers timeout + 1 s`, () => {
    for (const response of crowd.silent) {
      expect(response.closedByServer).toBe(true);
      expect(response.elapsedMs).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + CLOSE_SLACK_MS);
      expectRawProblem(response, 'request-timeout');
    }
  });

  it(`closes ${IDLE_KEEP_ALIVE_SOCKETS} idle keep-alive connections within the keep-alive timeout (+ Node's 1 s) + 1 s`, () => {
    for (const response of crowd.idleKeepAlive) {
      expect(response.status).toBe(200);
      expect(response.responses).toBe(1);
      expect(response.closedByServer).toBe(true);
      expect(response.elapsedMs).toBeGreaterThanOrEqual(KEEP_ALIVE_TIMEOUT_MS - EARLY_MS);
      expect(response.elapsedMs).toBeLessThanOrEqual(
        KEEP_ALIVE_TIMEOUT_MS + NODE_KEEP_ALIVE_BUFFER_MS + CLOSE_SLACK_MS,
      );
    }
  });

  it(`serves a 50 req/s probe meanwhile with 0 errors and p99 < ${PROBE_P99_MS} ms (or < ${CONTROL_FACTOR} × an unattacked twin's on a busy machine)`, () => {
    const { latenciesMs, errors } = crowd.probe;
    expect(crowd.control.errors).toEqual([]);
    expect(errors).toEqual([]);
    expect(latenciesMs.length).toBeGreaterThanOrEqual(PROBE_MIN_REQUESTS);
    const twinP99 = percentile(crowd.control.latenciesMs, 99);
    const p99 = percentile(latenciesMs, 99);
    const figures = `p99 ${p99.toFixed(1)} ms over ${latenciesMs.length} requests; twin ${twinP99.toFixed(1)} ms`;
    expect(p99, figures).toBeLessThan(Math.max(PROBE_P99_MS, CONTROL_FACTOR * twinP99));
  });
});
