/**
 * `npm run bench -- [--rows 10000[,1000000]] [--db sqlite|postgres|both] [--instances 1,2] …`
 *
 * In one run: the disk's serial fsync rate, the ceiling (a bare node:http server answering the
 * same todo JSON), then for each database size and each set-up (SQLite; PostgreSQL with one or
 * two service instances) a freshly seeded database served by the real service as `npm start`
 * runs it (compiled, `node … dist/server.js`) and every scenario against it. Prints a Markdown
 * report and writes it, with the raw figures as JSON, to bench/results/.
 */
import type { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, type } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildService } from '../test/helpers/start-command.js';
import {
  postgresBenchDatabase,
  sqliteBenchDatabase,
  type BenchDatabase,
  type DatabaseKind,
} from './databases.js';
import { measureDataLayer, type DataLayerResult } from './data-layer.js';
import { measureSyncRate } from './fsync-rate.js';
import { runScenario, type LoadOptions, type ScenarioResult } from './load.js';
import {
  peakRssOf,
  pinSelf,
  ROOT,
  SERVICE_NODE_ARGS,
  SERVICE_SCRIPT,
  startNodeServer,
  waitForServerIdle,
  type ServerChild,
} from './processes.js';
import {
  evaluateTargets,
  formatInt,
  renderMarkdown,
  setupLabel,
  type BenchReport,
  type Machine,
  type SizeRun,
} from './report.js';
import { createScenarios, SCENARIO_ORDER, type ScenarioKey } from './scenarios.js';
import { serverVersion } from './seed-postgres.js';

const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

const USAGE = `npm run bench -- [options]
  --rows N[,N…]       database sizes, one run each (default 10000), e.g. --rows 10000,1000000
  --db D              sqlite (default), postgres or both
  --instances N[,N…]  service processes on PostgreSQL: 1 (default), 2, or 1,2 for both;
                      with 2, autocannon's connections are split between them (SQLite: 1)
  --postgres-url URL  server for --db postgres|both, a schema bench_<random> of its own per
                      set-up, dropped afterwards (default $BENCH_POSTGRES_URL or
                      ${DEFAULT_POSTGRES_URL})
  --duration S        seconds per repetition (default 10)
  --repetitions N     repetitions per scenario (default 3)
  --connections N     autocannon connections in all (default 50)
  --warmup S          unmeasured seconds before each scenario (default 1)
  --idle-wait S       before each repetition, wait up to S s for other processes to go quiet
                      (default 30; 0: never wait)
  --profile           run the service with --cpu-prof; profiles go to <out>/profiles-<time>/
  --quick             smoke run: 2 s × 1 repetition, 1 s warm-up (other flags still apply)
  --scenarios a,b     only these (${SCENARIO_ORDER.join(', ')})
  --no-pin            do not pin the load generator and the server to cores with taskset
  --keep              keep the temporary directory with the SQLite files and the schemas
  --out DIR           where to write results (default bench/results)`;

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    db: { type: 'string', default: 'sqlite' },
    instances: { type: 'string', default: '1' },
    'postgres-url': { type: 'string' },
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

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    usageError(`--${name} must be a positive number (got "${raw}")`);
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
      if (!SCENARIO_ORDER.includes(key)) usageError(`unknown scenario "${raw}"`);
      return key;
    })
  : [...SCENARIO_ORDER];

/** What one run of the scenarios is measured on. */
interface Setup {
  readonly database: DatabaseKind;
  readonly instances: number;
}

const databases: DatabaseKind[] = (() => {
  if (args.db === 'sqlite' || args.db === 'postgres') return [args.db];
  if (args.db === 'both') return ['sqlite', 'postgres'];
  return usageError(`--db must be sqlite, postgres or both (got "${args.db}")`);
})();
const instanceCounts = [
  ...new Set(
    args.instances.split(',').map((raw) => {
      const count = Number(raw.trim());
      if (count !== 1 && count !== 2) usageError(`--instances takes 1, 2 or 1,2 (got "${raw}")`);
      return count;
    }),
  ),
].sort();
if (databases.length === 1 && databases[0] === 'sqlite' && !instanceCounts.includes(1)) {
  usageError('two instances need PostgreSQL: a SQLite file belongs to one service process');
}
if (Math.max(...instanceCounts) > options.connections) {
  usageError('--connections must be at least the number of instances');
}
const setups: Setup[] = databases.flatMap((database): Setup[] =>
  database === 'sqlite'
    ? [{ database, instances: 1 }]
    : instanceCounts.map((instances) => ({ database, instances })),
);
const postgresUrl = args['postgres-url'] ?? process.env.BENCH_POSTGRES_URL ?? DEFAULT_POSTGRES_URL;

const log = (line: string) => {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
};

/** Children still running, stopped if the benchmark itself is interrupted. */
const children = new Set<ChildProcess>();
/** Databases to drop if the benchmark is interrupted (PostgreSQL schemas outlive it). */
const openDatabases = new Set<BenchDatabase>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    for (const child of children) child.kill('SIGKILL');
    const timeout = new Promise((resolve) => setTimeout(resolve, 5000));
    const drops = args.keep ? [] : [...openDatabases].map((database) => database.drop());
    void Promise.race([Promise.allSettled(drops), timeout]).finally(() => process.exit(130));
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

/** Reads time a call at a time; a few seconds settle their median. */
const DATA_LAYER_READ_SECONDS = Math.min(options.duration, 3);

/** `measureDataLayer` on `database`, while no service has it open. */
function dataLayerOf(mode: 'reads' | 'writes', database: BenchDatabase, idsPath: string) {
  return measureDataLayer({
    mode,
    databaseUrl: database.url,
    idsPath,
    duration: mode === 'reads' ? DATA_LAYER_READ_SECONDS : options.duration,
    repetitions: options.repetitions,
    inFlight: options.connections,
    pin: pinning.used,
  });
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

const pinning = pinSelf(!args['no-pin']);
const sourcesAtStart = sourcesHash();
const startedAt = new Date().toISOString();
const machine: Machine = {
  ...machineInfo(),
  ...(databases.includes('postgres') ? { postgres: await serverVersion(postgresUrl) } : {}),
};
const directory = mkdtempSync(join(tmpdir(), 'todo-api-bench-'));
const stamp = startedAt.replaceAll(':', '-').replace(/\.\d+Z$/, 'Z');
const profileDirectory = join(args.out, `profiles-${stamp}`);
log(`machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}; ${machine.pinning}`);
log(`databases in ${directory}`);
log('compiling the service (npm run build)…');
await buildService();

log('measuring serial fsync rate (3 s fsync + 3 s fdatasync)…');
const fsync = measureSyncRate(directory, 3);
log(
  `fsync ${formatInt(fsync.fsyncPerSecond)}/s (median ${fsync.fsyncMedianMs.toFixed(2)} ms), fdatasync ${formatInt(fsync.fdatasyncPerSecond)}/s`,
);

let ceiling: ScenarioResult | undefined;
const runs: SizeRun[] = [];
/** Every database is seeded with the same rows: same seed, same creation times. */
const seedEnd = Date.now();
if (machine.postgres) log(`${machine.postgres} at ${new URL(postgresUrl).host} (not pinned)`);

/** Seeds `database`, then runs every selected scenario against `setup.instances` services. */
async function measure(setup: Setup, rows: number, database: BenchDatabase): Promise<SizeRun> {
  const label = `${setupLabel(setup)}, ${formatInt(rows)} rows`;
  log(`${label}: seeding (${database.location})…`);
  let nextReport = 0.1;
  const seed = await database.seed(rows, seedEnd, (done) => {
    if (done / rows >= nextReport) {
      log(`  ${formatInt(done)} rows`);
      nextReport += 0.1;
    }
  });
  log(
    `seeded ${formatInt(rows)} rows in ${seed.seconds.toFixed(1)} s (${formatInt(rows / seed.seconds)} rows/s${seed.ftsRows === undefined ? '' : `, search index ${formatInt(seed.ftsRows)} rows`}, ${seed.path} path)`,
  );
  const ids = seed.ids;
  const firstId = ids[0];
  if (firstId === undefined) throw new Error('--rows must be at least 1');

  const idsPath = join(directory, `ids-${setup.database}-${rows}.json`);
  writeFileSync(idsPath, JSON.stringify(ids));
  const dataLayer: DataLayerResult = { reads: [], writes: [] };
  if (selected.some((key) => key === 'get' || key === 'search')) {
    log('data layer without HTTP: reads…');
    dataLayer.reads.push(...(await dataLayerOf('reads', database, idsPath)).reads);
    log(
      `  ${dataLayer.reads.map((read) => `${read.key} ${read.microseconds.toFixed(1)} µs`).join(', ')}`,
    );
  }

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
      { TODO_JSON: await database.todoJson(firstId) },
      '/healthz',
    );
    log('ceiling: bare node:http server, GET /api/todos/{id}');
    try {
      ceiling = await runScenario(
        { baseUrls: [server.baseUrl], pids: [server.pid], database: false },
        scenarios.get,
        options,
        log,
      );
    } finally {
      await stop(server);
    }
    ceiling = { ...ceiling, key: 'ceiling', title: 'ceiling (bare node:http)' };
  }

  // One after the other: the first creates the cursor secret the others then read.
  const servers: ServerChild[] = [];
  const results: ScenarioResult[] = [];
  let deletePool = { size: 0, used: 0, exhausted: false };
  let peakRssBytes = 0;
  try {
    for (let i = 0; i < setup.instances; i++) {
      const server = await start(
        SERVICE_SCRIPT,
        // Rate limits and the quota off: the bench measures the service, not its guard rails.
        {
          DATABASE_URL: database.url,
          LOG_LEVEL: 'warn',
          RATE_LIMIT_MAX: '0',
          TODO_QUOTA: '100000000',
        },
        '/readyz',
        [
          ...SERVICE_NODE_ARGS,
          ...(args.profile
            ? [
                '--cpu-prof',
                `--cpu-prof-dir=${join(profileDirectory, `service-${setup.database}-${rows}${setup.instances > 1 ? `-${i + 1}of${setup.instances}` : ''}`)}`,
              ]
            : []),
        ],
      );
      servers.push(server);
      log(`service pid ${server.pid} on ${server.baseUrl}`);
    }
    const target = {
      baseUrls: servers.map((server) => server.baseUrl),
      pids: servers.map((server) => server.pid),
      database: setup.database === 'postgres',
    };
    const waitForServers = async () => {
      for (const server of servers) await waitForServerIdle(server.pid);
    };
    for (const key of selected) {
      if (key === 'delete') {
        const writeRates = results
          .filter((r) => ['post', 'patch', 'put'].includes(r.key))
          .map((r) => r.requestsPerSecondMax);
        const rate = Math.max(2000, ...writeRates);
        const seconds = options.warmup + options.duration * options.repetitions + 2;
        const size = Math.ceil(rate * 2 * seconds) + 1000;
        log(`  delete: creating a pool of ${formatInt(size)} todos…`);
        await waitForServers();
        pool = await database.insertRows({
          count: size,
          seed: rows + 7,
          firstPosition: 2 ** 40,
          end: Date.now(),
          path: seed.path,
        });
        poolNext = 0;
      }
      log(`${key} (${label})`);
      const result = await runScenario(target, scenarios[key], options, log);
      results.push(result);
      if (key === 'delete') {
        deletePool = {
          size: pool.length,
          used: poolNext,
          exhausted: poolNext >= pool.length,
        };
        if (deletePool.exhausted) log('  delete: the pool ran out; later requests were 404s');
        await waitForServers();
        await database.deleteRows(pool.slice(poolNext));
        pool = [];
      }
    }
  } finally {
    for (const server of servers) {
      peakRssBytes = Math.max(peakRssBytes, peakRssOf(server.pid) ?? 0);
      await stop(server);
      const output = server.output().trim();
      if (output) {
        log(
          `service ${server.pid} output (last lines):\n${output.split('\n').slice(-10).join('\n')}`,
        );
      }
    }
  }
  if (selected.some((key) => key === 'post' || key === 'patch' || key === 'put')) {
    log('data layer without HTTP: writes…');
    dataLayer.writes.push(...(await dataLayerOf('writes', database, idsPath)).writes);
    log(
      `  ${dataLayer.writes.map((write) => `${write.key} ${formatInt(write.writesPerSecond)}/s (p99 ${write.p99.toFixed(1)} ms)`).join(', ')}`,
    );
  }
  return {
    database: setup.database,
    instances: setup.instances,
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
    peakRssBytes: peakRssBytes || Math.max(0, ...results.map((r) => r.peakRssBytes)),
    schema: await database.lastMigration(),
    deletePool,
    dataLayer,
  };
}

try {
  for (const rows of sizes) {
    for (const setup of setups) {
      // Each set-up starts from its own freshly seeded copy of the same rows.
      const database =
        setup.database === 'sqlite'
          ? sqliteBenchDatabase(directory, `bench-${rows}`)
          : await postgresBenchDatabase(postgresUrl);
      openDatabases.add(database);
      try {
        runs.push(await measure(setup, rows, database));
      } finally {
        if (args.keep) {
          log(`kept ${database.location}`);
        } else {
          await database.drop();
        }
        openDatabases.delete(database);
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
