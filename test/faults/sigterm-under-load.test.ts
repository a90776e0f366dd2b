/**
 * SIGTERM under load (RELIABILITY.md §4.4, §5 row 2): 16 keep-alive workers create and read
 * todos against a real server process, and SIGTERM arrives mid-load. Every request in flight at
 * the signal must complete with its normal status; each later one is answered normally (it
 * reached the server before the server began closing), answered 503 or refused at connect; the
 * process exits 0 within 10 s; the SQLite WAL is checkpointed; every acknowledged create is
 * stored, and no create that was refused, answered 503 or reset unanswered is.
 *
 * Tolerated, counted, and reported as a finding: a later request reset before any answer
 * because the server closed its connection (idle keep-alive, or still in the accept queue) as the
 * request arrived. The server never read it, and the test checks that it never ran.
 *
 * Runs on the database of the vitest project (SQLite; PostgreSQL in a fresh schema when
 * `TEST_DATABASE_URL` is set), through test/helpers/test-database.ts.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/create-database.js';
import { sqlitePath } from '../../src/db/sqlite-database.js';
import { spawnServer, type ServerProcess } from '../helpers/spawn-server.js';
import { createTestDatabase, TEST_DIALECT, type TestDatabase } from '../helpers/test-database.js';
import { startLoad, type LoadRequest, type Outcome } from './load-generator.js';

const WORKERS = 16;
/** Load before the signal: at least this long and this many answers (at most the maximum). */
const WARMUP_MS = 800;
const WARMUP_MIN_ANSWERS = 200;
const WARMUP_MAX_MS = 5000;
const MAX_REQUESTS_PER_WORKER = 5000;
const REQUEST_TIMEOUT_MS = 5000;
/** What the service promises: drained and exited within 10 s of SIGTERM (§4.4). */
const EXIT_BUDGET_MS = 10_000;
/** The load goes on after the signal until the process has exited, never longer than this. */
const LOAD_AFTER_SIGNAL_MAX_MS = EXIT_BUDGET_MS + 1000;
const TEST_TIMEOUT_MS = 30_000;
/** What a client may see in an error answer that would reveal the service's internals. */
const LEAK = /SQLITE|constraint|at \S+ \(|node_modules|\bpg\b|syntax error|stack/i;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects when `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} did not happen within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Resolves once nothing accepts connections on `port` any more (polls for at most 5 s). */
async function waitUntilRefused(port: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', () => {
        resolve(true);
      });
    });
    if (refused) return;
    await sleep(20);
  }
  throw new Error(`port ${port} still accepts connections`);
}

const children: ServerProcess[] = [];
const databases: TestDatabase[] = [];
const cleanups: (() => void)[] = [];

async function startServer(): Promise<{ server: ServerProcess; database: TestDatabase }> {
  const database = await createTestDatabase('todo-api-sigterm-');
  databases.push(database);
  const server = await spawnServer({ DATABASE_URL: database.url, LOG_LEVEL: 'warn' });
  children.push(server);
  return { server, database };
}

/** Every stored (not deleted) todo's title, read straight from the database, not the API. */
async function storedTitles(database: TestDatabase): Promise<string[]> {
  const opened = createDatabase(database.url);
  try {
    const { rows } = await sql<{
      title: string;
    }>`select title from todos where deleted_at is null`.execute(opened.db);
    return rows.map((row) => row.title);
  } finally {
    await opened.close();
  }
}

afterAll(async () => {
  for (const cleanup of cleanups.splice(0)) cleanup();
  for (const child of children.splice(0)) {
    if (child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill('SIGKILL');
      await within(child.exited, 5000, 'killing the server').catch(() => undefined);
    }
  }
  for (const database of databases.splice(0)) await database.drop().catch(() => undefined);
});

/** The status a request of the load gets when nothing is wrong. */
function normalStatus(request: LoadRequest): number {
  return request.method === 'POST' ? 201 : 200;
}

function isNormal(outcome: Outcome): boolean {
  return outcome.kind === 'answered' && outcome.status === normalStatus(outcome.request);
}

/**
 * The connection was reset before any byte of an answer, because the server closed it while
 * this request was on its way: an idle keep-alive connection (the request went out on a reused
 * connection just as the server closed it), or a new one still in the listener's accept queue
 * when the listener closed. The server never read the request; the request must not have run.
 */
function isResetUnanswered(outcome: Outcome): boolean {
  return outcome.kind === 'dropped' && ['ECONNRESET', 'EPIPE'].includes(outcome.error ?? '');
}

function describeOutcome(outcome: Outcome): string {
  const what = `${outcome.request.headers?.['x-request-id'] ?? '?'} ${outcome.request.method} ${outcome.request.path}`;
  if (outcome.kind === 'answered') {
    return `${what} → ${outcome.status ?? '?'} ${(outcome.body ?? '').slice(0, 200)}`;
  }
  return `${what} → ${outcome.kind} (${outcome.error ?? ''}, reused connection: ${outcome.reusedSocket})`;
}

function titleOf(request: LoadRequest): string | undefined {
  return request.method === 'POST' ? (request.body as { title: string }).title : undefined;
}

describe(`SIGTERM under load (${TEST_DIALECT})`, () => {
  it(
    'completes every request in flight, answers or refuses the later ones, exits 0 within 10 s and keeps every acknowledged create',
    async () => {
      const run = randomBytes(4).toString('hex');
      const { server, database } = await startServer();

      /** Per worker, the ids of its acknowledged creates: it reads them back. */
      const ackedIds: string[][] = Array.from({ length: WORKERS }, () => []);
      const ackedTitles = new Set<string>();
      let answers = 0;
      let exited = false;
      let signalAt = Number.POSITIVE_INFINITY;
      void server.exited.then(() => (exited = true));

      // Creates and reads, half and half; the request id lets a failure be found in the log.
      const next = (worker: number, seq: number): LoadRequest => {
        const headers = { 'x-request-id': `${run}-w${worker}-${seq}` };
        if (seq % 2 === 0) {
          const title = `${run}-w${worker}-${seq}`;
          return { method: 'POST', path: '/api/todos', body: { title }, headers };
        }
        const own = ackedIds[worker] ?? [];
        const last = own[own.length - 1];
        return seq % 4 === 1 && last !== undefined
          ? { method: 'GET', path: `/api/todos/${last}`, headers }
          : { method: 'GET', path: '/api/todos?limit=10', headers };
      };
      const load = startLoad({
        baseUrl: server.baseUrl,
        workers: WORKERS,
        next,
        maxRequestsPerWorker: MAX_REQUESTS_PER_WORKER,
        shouldStop: () => exited || performance.now() > signalAt + LOAD_AFTER_SIGNAL_MAX_MS,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        onOutcome: (outcome) => {
          if (outcome.kind === 'answered') answers++;
          if (outcome.request.method === 'POST' && isNormal(outcome)) {
            const created = JSON.parse(outcome.body ?? '{}') as { id?: string; title?: string };
            if (created.id !== undefined) ackedIds[outcome.worker]?.push(created.id);
            if (created.title !== undefined) ackedTitles.add(created.title);
          }
        },
      });

      const loadStartedAt = performance.now();
      while (
        performance.now() - loadStartedAt < WARMUP_MS ||
        (answers < WARMUP_MIN_ANSWERS && performance.now() - loadStartedAt < WARMUP_MAX_MS)
      ) {
        await sleep(20);
      }
      expect(exited, `the server died under load:\n${server.output()}`).toBe(false);

      // Every request started so far has been written to its connection (the write happens on
      // the next tick, and this runs in a later timer): the server has them before the signal.
      const inFlightAtSignal = load.inFlight();
      signalAt = performance.now();
      server.child.kill('SIGTERM');
      const exitCode = await within(server.exited, EXIT_BUDGET_MS, 'exiting after SIGTERM');
      const exitMs = performance.now() - signalAt;
      const outcomes = await within(load.done, REQUEST_TIMEOUT_MS + 2000, 'the load stopping');

      const inFlight = outcomes.filter((outcome) => inFlightAtSignal.has(outcome.id));
      const before = outcomes.filter(
        (outcome) => outcome.startedAt < signalAt && !inFlightAtSignal.has(outcome.id),
      );
      const after = outcomes.filter((outcome) => outcome.startedAt >= signalAt);
      const lateNormal = after.filter(isNormal);
      const refused = after.filter((outcome) => outcome.kind === 'refused');
      const unavailable = after.filter(
        (outcome) => outcome.kind === 'answered' && outcome.status === 503,
      );
      const resets = after.filter(isResetUnanswered);

      const failures = [
        ...before.filter((o) => !isNormal(o)).map((o) => `before: ${describeOutcome(o)}`),
        ...inFlight.filter((o) => !isNormal(o)).map((o) => `in flight: ${describeOutcome(o)}`),
        ...after
          .filter(
            (o) =>
              !isNormal(o) &&
              !refused.includes(o) &&
              !unavailable.includes(o) &&
              !resets.includes(o),
          )
          .map((o) => `after: ${describeOutcome(o)}`),
        ...outcomes
          .filter((o) => o.kind === 'answered' && (o.status ?? 0) >= 400 && LEAK.test(o.body ?? ''))
          .map((o) => `leak: ${describeOutcome(o)}`),
      ];

      // Straight from the database, once the process is gone.
      let walBytes: number | undefined;
      let integrity: unknown;
      if (database.dialect === 'sqlite') {
        const file = sqlitePath(database.url);
        const wal = `${file}-wal`;
        walBytes = existsSync(wal) ? statSync(wal).size : 0;
        const sqlite = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
        try {
          integrity = sqlite.pragma('integrity_check', { simple: true });
        } finally {
          sqlite.close();
        }
      }
      const stored = await storedTitles(database);
      const copies = new Map<string, number>();
      for (const title of stored) copies.set(title, (copies.get(title) ?? 0) + 1);
      const missing = [...ackedTitles].filter((title) => copies.get(title) !== 1);
      // A create refused, answered 503 or reset unanswered never ran.
      const ranAnyway = [...refused, ...unavailable, ...resets]
        .map((outcome) => titleOf(outcome.request))
        .filter((title) => title !== undefined && copies.has(title));

      const problems503 = unavailable.filter(
        (o) =>
          /^application\/problem\+json/.test(o.headers?.['content-type'] ?? '') &&
          o.headers?.['retry-after'] !== undefined,
      ).length;
      console.log(
        `[sigterm ${database.dialect}] requests=${outcomes.length}: before=${before.length}` +
          ` in-flight-at-signal=${inFlight.length}` +
          ` (POST=${inFlight.filter((o) => o.request.method === 'POST').length})` +
          ` after=${after.length} (normal=${lateNormal.length} 503=${unavailable.length}` +
          ` [problem documents: ${problems503}] refused=${refused.length}` +
          ` reset unanswered=${resets.length}` +
          ` [on a reused connection: ${resets.filter((o) => o.reusedSocket).length}])` +
          ` | acked creates=${ackedTitles.size} stored=${stored.length}` +
          ` | exit=${String(exitCode)} after ${Math.round(exitMs)} ms` +
          (walBytes === undefined ? '' : ` | wal=${walBytes} B integrity=${String(integrity)}`) +
          ` | failures=${failures.length}`,
      );

      expect(failures).toEqual([]);
      expect(exitCode).toBe(0);
      expect(exitMs).toBeLessThan(EXIT_BUDGET_MS);
      // The signal hit real load, and the load saw the server close.
      expect(inFlight.length).toBe(WORKERS);
      expect(refused.length + unavailable.length + resets.length).toBeGreaterThan(0);
      expect(ackedTitles.size).toBeGreaterThan(0);
      expect(missing).toEqual([]);
      expect(ranAnyway).toEqual([]);
      if (database.dialect === 'sqlite') {
        expect(walBytes).toBe(0);
        expect(integrity).toBe('ok');
      }
    },
    TEST_TIMEOUT_MS,
  );
});

/**
 * A request whose head is completed only after the server closed its listener. Its connection
 * was not idle (a request had begun), so it survives the close, and the request is answered by
 * Fastify's `return503OnClosing` path, before any hook or the error handler runs.
 */
describe(`a request arriving while the server closes (${TEST_DIALECT})`, () => {
  interface ClosingAnswer {
    readonly raw: string;
    readonly exitCode: number | null;
  }
  let answer: Promise<ClosingAnswer> | undefined;

  async function requestAfterClose(): Promise<ClosingAnswer> {
    const { server } = await startServer();
    const port = Number(new URL(server.baseUrl).port);

    const socket = connect(port, '127.0.0.1');
    cleanups.push(() => socket.destroy());
    let raw = '';
    socket.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    socket.on('error', () => {
      // judged through `raw`
    });
    const closed = once(socket, 'close');
    await within(once(socket, 'connect'), 2000, 'connecting');
    socket.write('GET /api/todos HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await sleep(200);

    server.child.kill('SIGTERM');
    await waitUntilRefused(port);
    expect(server.child.exitCode).toBeNull();
    socket.write('Accept: application/json\r\n\r\n');
    await within(closed, 5000, 'the answer to the late request');
    const exitCode = await within(server.exited, EXIT_BUDGET_MS, 'exiting');
    return { raw, exitCode };
  }

  function closingAnswer(): Promise<ClosingAnswer> {
    answer ??= requestAfterClose();
    return answer;
  }

  it(
    'answers it 503 with Connection: close, then exits 0',
    async () => {
      const { raw, exitCode } = await closingAnswer();
      expect(raw).toMatch(/^HTTP\/1\.1 503 /);
      expect(raw).toMatch(/\r\nconnection: close\r\n/i);
      expect(exitCode).toBe(0);
    },
    TEST_TIMEOUT_MS,
  );

  // The service answers requests during shutdown itself (not Fastify's return503OnClosing).
  it(
    'answers it with an `unavailable` problem document carrying Retry-After',
    async () => {
      const { raw } = await closingAnswer();
      const [head = '', body = ''] = raw.split('\r\n\r\n');
      expect(head).toMatch(/\r\ncontent-type: application\/problem\+json/i);
      expect(head).toMatch(/\r\nretry-after: \d+\r\n/i);
      expect(head).toMatch(/\r\nx-request-id: \S+/i);
      expect(head).toMatch(/\r\ncache-control: no-store\r\n/i);
      expect(JSON.parse(body)).toMatchObject({ status: 503, code: 'unavailable' });
    },
    TEST_TIMEOUT_MS,
  );
});
