/**
 * `npm run bench -- [--rows 10000[,1000000]] [--duration 10] [--repetitions 3] [--quick] …`
 *
 * In one run: the disk's serial fsync rate, the ceiling (a bare node:http server answering the
 * same todo JSON), then for each database size a freshly seeded database served by the real
 * service (`node --import tsx src/server.ts`) and every scenario against it. Prints a Markdown
 * report and writes it, with the raw figures as JSON, to bench/results/.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, type } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import SqliteDatabase from 'better-sqlite3';
import type { TodoRow } from '../src/todos/todo.table.js';
import { todoRowToTodo } from '../src/todos/todos.service.js';
import { measureSyncRate } from './fsync-rate.js';
import { runScenario, type LoadOptions, type ScenarioResult } from './load.js';
import {
  peakRssOf,
  pinSelf,
  ROOT,
  startNodeServer,
  waitForServerIdle,
  type ServerChild,
} from './processes.js';
import {
  evaluateTargets,
  formatInt,
  renderMarkdown,
  type BenchReport,
  type Machine,
  type SizeRun,
} from './report.js';
import { createScenarios, SCENARIO_ORDER, type ScenarioKey } from './scenarios.js';
import { deleteRows, insertRows, seedDatabase } from './seed.js';

const USAGE = `npm run bench -- [options]
  --rows N[,N…]       database sizes, one run each (default 10000), e.g. --rows 10000,1000000
  --duration S        seconds per repetition (default 10)
  --repetitions N     repetitions per scenario (default 3)
  --connections N     autocannon connections (default 50)
  --warmup S          unmeasured seconds before each scenario (default 1)
  --idle-wait S       before each repetition, wait up to S s for other processes to go quiet
                      (default 30; 0: never wait)
  --profile           run the service with --cpu-prof; profiles go to <out>/profiles-<time>/
  --quick             smoke run: 2 s × 1 repetition, 1 s warm-up (other flags still apply)
  --scenarios a,b     only these (${SCENARIO_ORDER.join(', ')})
  --no-pin            do not pin the load generator and the server to cores with taskset
  --keep              keep the temporary directory with the databases
  --out DIR           where to write results (default bench/results)`;

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    duration: { type: 'string' },
    repetitions: { type: 'string' },
    connections: { type: 'string', default: '50' },
    warmup: { type: 'string' },
    quick: { type: 'boolean', default: false },
    'idle-wait': { type: 'string', default: '30' },
    profile: { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    keep: { type: 'boolean', default: false },
    out: { type: 'string', default: join(ROOT, 'bench', 'results') },
    help: { type: 'boolean', default: false },
  },
});

if (args.help) {
  console.log(USAGE);
  process.exit(0);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`--${name} must be a positive number (got "${raw}")\n\n${USAGE}`);
    process.exit(2);
  }
  return value;
}

const options: LoadOptions = {
  duration: positive('duration', args.duration, args.quick ? 2 : 10),
  repetitions: Math.round(positive('repetitions', args.repetitions, args.quick ? 1 : 3)),
  connections: Math.round(positive('connections', args.connections, 50)),
  warmup: args.warmup === undefined ? 1 : Number(args.warmup),
  idleWait: Number(args['idle-wait']),
};
const sizes = args.rows.split(',').map((raw) => Math.round(positive('rows', raw.trim(), 10_000)));
const selected: ScenarioKey[] = args.scenarios
  ? args.scenarios.split(',').map((raw) => {
      const key = raw.trim() as ScenarioKey;
      if (!SCENARIO_ORDER.includes(key)) {
        console.error(`unknown scenario "${raw}"\n\n${USAGE}`);
        process.exit(2);
      }
      return key;
    })
  : [...SCENARIO_ORDER];

const log = (line: string) => {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
};

/** Children still running, stopped if the benchmark itself is interrupted. */
const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    process.exit(130);
  });
}

async function start(
  script: string,
  env: Record<string, string>,
  readyPath: string,
  nodeArgs: readonly string[] = [],
) {
  const server = await startNodeServer({ script, env, pin: pinning.used, readyPath, nodeArgs });
  children.add(server.child);
  return server;
}

async function stop(server: ServerChild) {
  await server.stop();
  children.delete(server.child);
}

function machineInfo(): Machine {
  const cpuinfo = (() => {
    try {
      return readFileSync('/proc/cpuinfo', 'utf8');
    } catch {
      return '';
    }
  })();
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? cpus()[0]?.model ?? 'unknown';
  const autocannonVersion = (
    JSON.parse(readFileSync(join(ROOT, 'node_modules/autocannon/package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  return {
    cpu: model.trim(),
    cores: cpus().length,
    node: process.version,
    platform: `${type()} ${release()}`,
    pinning: pinning.detail,
    pinned: pinning.used,
    autocannon: autocannonVersion,
  };
}

/** SHA-256 over the service's source files (tests excluded), to notice edits during a run. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  const files = readdirSync(join(ROOT, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
    .sort();
  for (const name of files) {
    hash.update(name);
    hash.update(readFileSync(join(ROOT, 'src', name)));
  }
  return hash.digest('hex');
}

/** The last migration applied to the database at `path`. */
function lastMigration(path: string): string {
  const sqlite = new SqliteDatabase(path, { readonly: true });
  try {
    const row = sqlite
      .prepare('select name from kysely_migration order by name desc limit 1')
      .get() as { name: string } | undefined;
    return row?.name ?? 'none';
  } catch {
    return 'unknown';
  } finally {
    sqlite.close();
  }
}

/** The todo JSON the ceiling answers with: a seeded row through the service's own mapper. */
function sampleTodoJson(path: string, id: string): string {
  const sqlite = new SqliteDatabase(path, { readonly: true });
  try {
    const row = sqlite.prepare('select * from todos where id = ?').get(id) as TodoRow | undefined;
    if (!row) throw new Error(`seeded todo ${id} not found`);
    return JSON.stringify(todoRowToTodo(row, 'http://127.0.0.1'));
  } finally {
    sqlite.close();
  }
}

const pinning = pinSelf(!args['no-pin']);
const sourcesAtStart = sourcesHash();
const startedAt = new Date().toISOString();
const machine = machineInfo();
const directory = mkdtempSync(join(tmpdir(), 'todo-api-bench-'));
const stamp = startedAt.replaceAll(':', '-').replace(/\.\d+Z$/, 'Z');
const profileDirectory = join(args.out, `profiles-${stamp}`);
log(`machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; ${machine.pinning}`);
log(`databases in ${directory}`);

log('measuring serial fsync rate (3 s fsync + 3 s fdatasync)…');
const fsync = measureSyncRate(directory, 3);
log(
  `fsync ${formatInt(fsync.fsyncPerSecond)}/s (median ${fsync.fsyncMedianMs.toFixed(2)} ms), fdatasync ${formatInt(fsync.fdatasyncPerSecond)}/s`,
);

let ceiling: ScenarioResult | undefined;
const runs: SizeRun[] = [];

try {
  for (const rows of sizes) {
    const path = join(directory, `bench-${rows}.db`);
    log(`seeding ${formatInt(rows)} rows…`);
    let nextReport = 0.1;
    const seed = await seedDatabase(path, rows, (done) => {
      if (done / rows >= nextReport) {
        log(`  ${formatInt(done)} rows`);
        nextReport += 0.1;
      }
    });
    log(
      `seeded ${formatInt(rows)} rows in ${seed.seconds.toFixed(1)} s (${formatInt(rows / seed.seconds)} rows/s${seed.ftsRows === undefined ? '' : `, todos_fts ${formatInt(seed.ftsRows)} rows`}, ${seed.path} path)`,
    );
    const ids = seed.ids;
    const firstId = ids[0];
    if (firstId === undefined) throw new Error('--rows must be at least 1');

    let pool: string[] = [];
    let poolNext = 0;
    const scenarios = createScenarios(
      {
        ids,
        takeDeleteId: () => (poolNext < pool.length ? pool[poolNext++] : undefined),
      },
      rows,
    );

    if (!ceiling) {
      const server = await start(
        'bench/ceiling-server.ts',
        { TODO_JSON: sampleTodoJson(path, firstId) },
        '/healthz',
      );
      log('ceiling: bare node:http server, GET /api/todos/{id}');
      try {
        ceiling = await runScenario(server.baseUrl, server.pid, scenarios.get, options, log);
      } finally {
        await stop(server);
      }
      ceiling = { ...ceiling, key: 'ceiling', title: 'ceiling (bare node:http)' };
    }

    const server = await start(
      'src/server.ts',
      // Rate limits and the quota off: the bench measures the service, not its guard rails.
      {
        DATABASE_URL: `sqlite:${path}`,
        LOG_LEVEL: 'warn',
        RATE_LIMIT_MAX: '0',
        TODO_QUOTA: '100000000',
      },
      '/readyz',
      args.profile
        ? ['--cpu-prof', `--cpu-prof-dir=${join(profileDirectory, `service-${rows}`)}`]
        : [],
    );
    log(`service pid ${server.pid} on ${server.baseUrl}`);
    const results: ScenarioResult[] = [];
    let deletePool = { size: 0, used: 0, exhausted: false };
    try {
      for (const key of selected) {
        if (key === 'delete') {
          const writeRates = results
            .filter((r) => ['post', 'patch', 'put'].includes(r.key))
            .map((r) => r.requestsPerSecondMax);
          const rate = Math.max(2000, ...writeRates);
          const seconds = options.warmup + options.duration * options.repetitions + 2;
          const size = Math.ceil(rate * 2 * seconds) + 1000;
          log(`  delete: creating a pool of ${formatInt(size)} todos…`);
          await waitForServerIdle(server.pid);
          pool = await insertRows(path, {
            count: size,
            seed: rows + 7,
            firstPosition: 2 ** 40,
            end: Date.now(),
            path: seed.path,
          });
          poolNext = 0;
        }
        log(`${key} (${formatInt(rows)} rows)`);
        const result = await runScenario(server.baseUrl, server.pid, scenarios[key], options, log);
        results.push(result);
        if (key === 'delete') {
          deletePool = {
            size: pool.length,
            used: poolNext,
            exhausted: poolNext >= pool.length,
          };
          if (deletePool.exhausted) log('  delete: the pool ran out; later requests were 404s');
          await waitForServerIdle(server.pid);
          deleteRows(path, pool.slice(poolNext));
          pool = [];
        }
      }
    } finally {
      const peakRssBytes = peakRssOf(server.pid) ?? Math.max(...results.map((r) => r.peakRssBytes));
      await stop(server);
      const output = server.output().trim();
      if (output) log(`service output (last lines):\n${output.split('\n').slice(-10).join('\n')}`);
      runs.push({
        rows,
        seed: {
          seconds: seed.seconds,
          rowsPerSecond: rows / seed.seconds,
          fileBytes: seed.fileBytes,
          ftsRows: seed.ftsRows,
          derivedTables: seed.derivedTables,
          path: seed.path,
        },
        scenarios: results,
        peakRssBytes,
        schema: lastMigration(path),
        deletePool,
      });
      if (!args.keep) {
        for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
      }
    }
  }
} finally {
  if (!args.keep) rmSync(directory, { recursive: true, force: true });
}

if (!ceiling) throw new Error('no ceiling measured');
const report: BenchReport = {
  startedAt,
  finishedAt: new Date().toISOString(),
  command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
  machine,
  options,
  fsync,
  ceiling,
  sizes: runs,
  targets: evaluateTargets(runs, ceiling, fsync),
  sources: { atStart: sourcesAtStart, atEnd: sourcesHash() },
};
if (report.sources.atStart !== report.sources.atEnd) {
  log('warning: src/ changed during the run; the sizes may have met different service versions');
}
const markdown = renderMarkdown(report);
mkdirSync(args.out, { recursive: true });
const jsonPath = join(args.out, `${stamp}.json`);
const markdownPath = join(args.out, `${stamp}.md`);
writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(markdownPath, markdown);
console.log(markdown);
log(`wrote ${jsonPath} and ${markdownPath}`);
if (args.profile) {
  log(
    `CPU profiles in ${profileDirectory}; summarise with: npx tsx bench/profile-summary.ts <directory or file>`,
  );
}
