/**
 * `npm run soak -- [--minutes 10] [--window 60] [--db sqlite|postgres] …`
 *
 * The nightly soak of RELIABILITY.md §6: the real service on a freshly seeded database,
 * started with `--expose-gc` and the `soak/gc-probe.ts` preload; its capacity measured with a
 * short closed-loop run of the mixed scenario; then the same mix open-loop at 60 % of that
 * capacity (autocannon `overallRate`) for N windows. After each window the probe reports the
 * heap after GC, RSS, open fds, active handles and event-loop delay. Prints a table and
 * PASS/FAIL, writes JSON and Markdown to soak/results/, and exits 0 on PASS, 1 on FAIL.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  DATABASE_TITLES,
  postgresBenchDatabase,
  sqliteBenchDatabase,
  type BenchDatabase,
  type DatabaseKind,
} from '../bench/databases.js';
import { runLoad, type Repetition } from '../bench/load.js';
import {
  cpuSecondsOf,
  pinSelf,
  ROOT,
  startForeignCpuMeter,
  startNodeServer,
  waitForServerIdle,
  type ServerChild,
} from '../bench/processes.js';
import { createScenarios } from '../bench/scenarios.js';
import type { ProbeReply, ProbeRequest, ProbeSample } from './gc-probe.js';
import { evaluateGate, renderMarkdown, type SoakReport, type Window } from './soak-report.js';

const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

const USAGE = `npm run soak -- [options]
  --minutes N         length of the open-loop phase (default 10)
  --window S          seconds per window (default 60); windows = minutes × 60 / S
  --load F            share of the measured capacity to offer (default 0.6)
  --db D              sqlite (default) or postgres
  --rows N            todos seeded before the start (default 10000)
  --connections N     autocannon connections (default 50)
  --capacity S        seconds of the closed-loop capacity run (default 10; 2 s warm-up first)
  --heap-limit MB     start the service with --max-old-space-size=MB: a leak becomes a crash
  --heap-snapshots    write heap snapshots after window 2 and the last window (pauses the
                      service, needs about twice the heap); compare them to find a leak
  --postgres-url URL  server for --db postgres (default $BENCH_POSTGRES_URL or
                      ${DEFAULT_POSTGRES_URL}); the soak seeds a schema of its own
  --no-pin            do not pin the load generator and the service to cores with taskset
  --keep              keep the database (file or schema)
  --out DIR           where to write results (default soak/results)`;

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    window: { type: 'string', default: '60' },
    load: { type: 'string', default: '0.6' },
    db: { type: 'string', default: 'sqlite' },
    rows: { type: 'string', default: '10000' },
    connections: { type: 'string', default: '50' },
    capacity: { type: 'string', default: '10' },
    'heap-limit': { type: 'string' },
    'heap-snapshots': { type: 'boolean', default: false },
    'postgres-url': { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'soak', 'results') },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  console.log(USAGE);
  process.exit(0);
}

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function positive(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    usageError(`--${name} must be a positive number (got "${raw}")`);
  }
  return value;
}

const minutes = positive('minutes', args.minutes);
const windowSeconds = positive('window', args.window);
const windows = Math.max(1, Math.round((minutes * 60) / windowSeconds));
const loadShare = positive('load', args.load);
if (loadShare > 1) usageError('--load is a share of capacity, at most 1');
const rows = Math.round(positive('rows', args.rows));
const connections = Math.round(positive('connections', args.connections));
const capacitySeconds = positive('capacity', args.capacity);
const heapLimit =
  args['heap-limit'] === undefined
    ? undefined
    : Math.round(positive('heap-limit', args['heap-limit']));
if (args.db !== 'sqlite' && args.db !== 'postgres') {
  usageError(`--db must be sqlite or postgres (got "${args.db}")`);
}
const databaseKind: DatabaseKind = args.db;
const postgresUrl = args['postgres-url'] ?? process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL;

const log = (line: string) => {
  console.error(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}`);
};

/** Asks the child's probe; rejects after `timeoutMs` or if the child is gone. */
function createProbeClient(server: ServerChild) {
  let nextId = 1;
  const pending = new Map<number, (reply: ProbeReply) => void>();
  server.child.on('message', (message: ProbeReply) => {
    pending.get(message.id)?.(message);
    pending.delete(message.id);
  });
  const ask = (request: ProbeRequest, timeoutMs = 60_000) =>
    new Promise<ProbeReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(request.id);
        reject(new Error(`the probe did not answer within ${timeoutMs} ms`));
      }, timeoutMs);
      pending.set(request.id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      if (!server.child.connected || !server.child.send(request)) {
        clearTimeout(timer);
        pending.delete(request.id);
        reject(new Error('the service has no IPC channel (exited?)'));
      }
    });
  return {
    async sample(): Promise<ProbeSample> {
      const reply = await ask({ id: nextId++, type: 'sample' });
      if (!reply.ok) throw new Error(`probe: ${reply.error}`);
      if (!reply.sample) throw new Error('probe: no sample');
      return reply.sample;
    },
    async snapshot(path: string): Promise<string> {
      const reply = await ask({ id: nextId++, type: 'snapshot', path }, 600_000);
      if (!reply.ok) throw new Error(`probe: ${reply.error}`);
      return reply.file ?? path;
    },
  };
}

/** Bytes of the SQLite WAL next to `url`'s file (undefined on PostgreSQL or without a WAL). */
function walBytes(database: BenchDatabase): number | undefined {
  if (database.kind !== 'sqlite') return undefined;
  try {
    return statSync(`${database.location}-wal`).size;
  } catch {
    return 0;
  }
}

const pinning = pinSelf(!args['no-pin']);
const startedAt = new Date().toISOString();
const stamp = startedAt.replaceAll(':', '-').replace(/\.\d+Z$/, 'Z');
const directory = mkdtempSync(join(tmpdir(), 'todo-api-soak-'));
let server: ServerChild | undefined;
let database: BenchDatabase | undefined;
let exitCode = 1;

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    server?.child.kill('SIGKILL');
    const cleanup = args.keep ? Promise.resolve() : (database?.drop() ?? Promise.resolve());
    const timeout = new Promise((resolve) => setTimeout(resolve, 5000));
    void Promise.race([cleanup, timeout]).finally(() => {
      if (!args.keep) rmSync(directory, { recursive: true, force: true });
      process.exit(130);
    });
  });
}

try {
  log(`${pinning.detail}; ${windows} × ${windowSeconds} s at ${loadShare * 100} % of capacity`);
  database =
    databaseKind === 'sqlite'
      ? sqliteBenchDatabase(directory, 'soak')
      : await postgresBenchDatabase(postgresUrl);
  log(`seeding ${rows} rows (${DATABASE_TITLES[databaseKind]}, ${database.location})…`);
  const seed = await database.seed(rows, Date.now());
  log(`seeded in ${seed.seconds.toFixed(1)} s`);

  const nodeArgs = ['--expose-gc', ...(heapLimit ? [`--max-old-space-size=${heapLimit}`] : [])];
  server = await startNodeServer({
    script: 'src/server.ts',
    env: {
      DATABASE_URL: database.url,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MAX: '0',
      TODO_QUOTA: '100000000',
    },
    pin: pinning.used,
    readyPath: '/readyz',
    nodeArgs,
    imports: ['./soak/gc-probe.ts'],
    ipc: true,
  });
  const service = server;
  const probe = createProbeClient(service);
  let exited: string | undefined;
  service.child.on('exit', (code, signal) => {
    exited = `the service exited (${signal ?? `code ${code ?? '?'}`})`;
  });
  log(`service pid ${service.pid} on ${service.baseUrl} (node ${nodeArgs.join(' ')})`);
  const atStart = await probe.sample();

  // The mix has no DELETE: every request names a seeded todo, so no 404 is expected and any
  // non-2xx answer is an error.
  const mixed = createScenarios({ ids: seed.ids, takeDeleteId: () => undefined }, rows).mixed;

  log('capacity: 2 s warm-up, then closed loop…');
  await runLoad(service.baseUrl, mixed, connections, 2);
  const capacity = await runLoad(service.baseUrl, mixed, connections, capacitySeconds);
  const rate = Math.max(1, Math.round(capacity.requestsPerSecond * loadShare));
  log(
    `capacity ${capacity.requestsPerSecond.toFixed(0)} req/s (p99 ${capacity.p99.toFixed(1)} ms, errors ${capacity.non2xx + capacity.errors}); offering ${rate} req/s`,
  );
  await waitForServerIdle(service.pid);
  const baseline = await probe.sample();

  const results: Window[] = [];
  const snapshots: string[] = [];
  for (let index = 1; index <= windows && !exited; index++) {
    const cpuBefore = cpuSecondsOf(service.pid) ?? 0;
    const meter = startForeignCpuMeter([service.pid], databaseKind === 'postgres');
    const started = performance.now();
    let load: Repetition;
    try {
      load = await runLoad(service.baseUrl, mixed, connections, windowSeconds, rate);
    } catch (error) {
      exited ??= `load failed: ${(error as Error).message}`;
      break;
    }
    const wall = (performance.now() - started) / 1000;
    const shares = meter.read();
    const serverCpu = ((cpuSecondsOf(service.pid) ?? cpuBefore) - cpuBefore) / wall;
    if (exited) break;
    const sample = await probe.sample();
    const window: Window = {
      index,
      seconds: load.seconds,
      requests: load.requests,
      requestsPerSecond: load.requestsPerSecond,
      p50: load.p50,
      p99: load.p99,
      max: load.max,
      non2xx: load.non2xx,
      errors: load.errors,
      timeouts: load.timeouts,
      statusCodes: load.statusCodes,
      sample,
      walBytes: walBytes(database),
      serverCpu,
      databaseCpu: databaseKind === 'postgres' ? shares.database : undefined,
      foreignCpu: shares.foreign,
    };
    results.push(window);
    log(
      `window ${index}/${windows}: ${window.requestsPerSecond.toFixed(0)} req/s, p50 ${window.p50.toFixed(1)} ms, p99 ${window.p99.toFixed(1)} ms, errors ${window.non2xx + window.errors}, heap ${(sample.heapUsed / 2 ** 20).toFixed(2)} MB, RSS ${(sample.rss / 2 ** 20).toFixed(0)} MB, fds ${sample.fds}, handles ${sample.activeResources}, loop p99 ${sample.eventLoopDelayP99.toFixed(1)} ms, other CPU ${shares.foreign.toFixed(2)}`,
    );
    if (args['heap-snapshots'] && (index === 2 || index === windows)) {
      mkdirSync(args.out, { recursive: true });
      const file = await probe.snapshot(join(args.out, `${stamp}-window-${index}.heapsnapshot`));
      snapshots.push(file);
      log(`  heap snapshot ${file}`);
    }
  }

  // Drain: the load generator has closed its connections; give the service time to notice.
  let drained: ProbeSample | undefined;
  if (!exited) {
    await waitForServerIdle(service.pid);
    const deadline = performance.now() + 10_000;
    for (;;) {
      drained = await probe.sample();
      const settled =
        Math.abs(drained.fds - baseline.fds) <= 5 &&
        Math.abs(drained.activeResources - baseline.activeResources) <= 5;
      if (settled || performance.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }

  const report: SoakReport = {
    startedAt,
    finishedAt: new Date().toISOString(),
    command: `npm run soak -- ${process.argv.slice(2).join(' ')}`.trim(),
    database: databaseKind,
    rows,
    pinning: pinning.detail,
    node: process.version,
    nodeArgs,
    connections,
    windowSeconds,
    loadShare,
    capacity: {
      requestsPerSecond: capacity.requestsPerSecond,
      p50: capacity.p50,
      p99: capacity.p99,
      errors: capacity.non2xx + capacity.errors,
      seconds: capacity.seconds,
    },
    offeredRate: rate,
    atStart,
    baseline,
    windows: results,
    plannedWindows: windows,
    drained,
    exited,
    snapshots,
    gate: [],
  };
  const gate = evaluateGate(report);
  const final: SoakReport = { ...report, gate };
  const markdown = renderMarkdown(final);
  mkdirSync(args.out, { recursive: true });
  const jsonPath = join(args.out, `${stamp}.json`);
  const markdownPath = join(args.out, `${stamp}.md`);
  writeFileSync(jsonPath, `${JSON.stringify(final, null, 2)}\n`);
  writeFileSync(markdownPath, markdown);
  console.log(markdown);
  log(`wrote ${jsonPath} and ${markdownPath}`);
  const failed = gate.filter((check) => check.pass === false);
  exitCode = failed.length === 0 ? 0 : 1;
  log(exitCode === 0 ? 'PASS' : `FAIL: ${failed.map((check) => check.name).join('; ')}`);
} catch (error) {
  log(`soak failed: ${(error as Error).stack ?? String(error)}`);
  exitCode = 1;
} finally {
  if (server) {
    await server.stop();
    const output = server.output().trim();
    if (output) log(`service output (last lines):\n${output.split('\n').slice(-10).join('\n')}`);
  }
  if (database && !args.keep) await database.drop();
  else if (database) log(`kept ${database.location}`);
  if (!args.keep) rmSync(directory, { recursive: true, force: true });
}
process.exit(exitCode);
