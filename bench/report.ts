/**
 * The benchmark's report: the targets of the issue evaluated against one run, and the Markdown
 * tables that are printed and written next to the JSON.
 */
import type { DataLayerRead, DataLayerResult, DataLayerWrite } from './data-layer.js';
import { DATABASE_TITLES, type DatabaseKind } from './databases.js';
import type { SyncRate } from './fsync-rate.js';
import type { LoadOptions, ScenarioResult } from './load.js';

/** One database size measured on one set-up (database and number of service instances). */
export interface SizeRun {
  readonly database: DatabaseKind;
  /** Service processes sharing the database; the load's connections are split between them. */
  readonly instances: number;
  readonly rows: number;
  readonly seed: {
    readonly seconds: number;
    readonly rowsPerSecond: number;
    readonly fileBytes: number;
    readonly ftsRows: number | undefined;
    readonly derivedTables: readonly string[];
    readonly path: string;
  };
  readonly scenarios: readonly ScenarioResult[];
  /** VmHWM of the service process at the end of the run (the larger instance's), bytes. */
  readonly peakRssBytes: number;
  /** The last migration applied to the database when the service stopped. */
  readonly schema: string;
  readonly deletePool: {
    readonly size: number;
    readonly used: number;
    readonly exhausted: boolean;
  };
  /** The same work without HTTP (`data-layer.ts`): what the service cannot beat over HTTP. */
  readonly dataLayer: DataLayerResult;
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly node: string;
  readonly platform: string;
  readonly pinning: string;
  readonly pinned: boolean;
  readonly autocannon: string;
  /** `version()` of the PostgreSQL server, when a run used it. */
  readonly postgres?: string;
}

export interface Target {
  readonly target: string;
  readonly scope: string;
  readonly measured: string;
  /** undefined: could not be evaluated in this run (e.g. only one size). */
  readonly pass: boolean | undefined;
}

export interface BenchReport {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly command: string;
  readonly machine: Machine;
  readonly options: LoadOptions;
  readonly fsync: SyncRate;
  readonly ceiling: ScenarioResult;
  readonly sizes: readonly SizeRun[];
  readonly targets: readonly Target[];
  /** SHA-256 of the service's sources (src/, tests excluded) at the start and at the end. */
  readonly sources: { readonly atStart: string; readonly atEnd: string };
}

const MB = 1024 * 1024;

export function formatInt(value: number): string {
  return Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '—';
}

function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

function rowsLabel(rows: number): string {
  if (rows >= 1_000_000 && rows % 1_000_000 === 0) return `${rows / 1_000_000}M`;
  if (rows >= 1000 && rows % 1000 === 0) return `${rows / 1000}k`;
  return String(rows);
}

function scenario(size: SizeRun, key: string): ScenarioResult | undefined {
  return size.scenarios.find((s) => s.key === key);
}

function dataLayerWrite(size: SizeRun, key: string): DataLayerWrite | undefined {
  return size.dataLayer.writes.find((w) => w.key === key);
}

function dataLayerRead(size: SizeRun, key: string): DataLayerRead | undefined {
  return size.dataLayer.reads.find((r) => r.key === key);
}

/** "SQLite", "PostgreSQL ×1", "PostgreSQL ×2": the set-up a run measured. */
export function setupLabel(run: Pick<SizeRun, 'database' | 'instances'>): string {
  const title = DATABASE_TITLES[run.database];
  return run.database === 'sqlite' && run.instances === 1 ? title : `${title} ×${run.instances}`;
}

/** Runs grouped by set-up, in the order they were measured. */
function bySetup(sizes: readonly SizeRun[]): SizeRun[][] {
  const groups = new Map<string, SizeRun[]>();
  for (const size of sizes) {
    const key = setupLabel(size);
    groups.set(key, [...(groups.get(key) ?? []), size]);
  }
  return [...groups.values()];
}

/** The smallest and the largest size of one set-up, when it has two. */
function extremes(group: readonly SizeRun[]): [SizeRun, SizeRun] | undefined {
  const sorted = [...group].sort((a, b) => a.rows - b.rows);
  const small = sorted[0];
  const large = sorted.at(-1);
  return small && large && small !== large ? [small, large] : undefined;
}

/**
 * The same comparison without HTTP, when the data layer measured it; for search also the match
 * list alone at the larger size against the whole search at the smaller one.
 */
function withoutHttpScaling(small: SizeRun, large: SizeRun, key: string): string {
  const a = dataLayerRead(small, key);
  const b = dataLayerRead(large, key);
  if (!a || !b) return '';
  const parts = [
    `without HTTP ${fixed(b.microseconds, 1)} / ${fixed(a.microseconds, 1)} µs = ${fixed(b.microseconds / a.microseconds)} ×`,
  ];
  const matches = dataLayerRead(large, `${key}-matches`);
  if (matches) {
    parts.push(
      `reading the match list alone at ${rowsLabel(large.rows)}: ${fixed(matches.microseconds, 0)} µs = ${fixed(matches.microseconds / a.microseconds)} × the whole search at ${rowsLabel(small.rows)}`,
    );
  }
  return `; ${parts.join('; ')}`;
}

/** Evaluates every target of the issue that this run has the data for. */
export function evaluateTargets(
  sizes: readonly SizeRun[],
  ceiling: ScenarioResult,
  fsync: SyncRate,
): Target[] {
  const targets: Target[] = [];
  const ceilingRate = ceiling.requestsPerSecond;
  const fsyncRate = fsync.fsyncPerSecond;

  for (const size of sizes) {
    const scope = `${setupLabel(size)}, ${rowsLabel(size.rows)} rows`;
    const throughput = (
      key: string,
      label: string,
      base: number,
      baseName: string,
      factor: number,
    ) => {
      const s = scenario(size, key);
      if (!s) return;
      const ratio = s.requestsPerSecond / base;
      const alone = dataLayerWrite(size, key);
      const withoutHttp = alone
        ? `; without HTTP ${formatInt(alone.writesPerSecond)}/s = ${fixed(alone.writesPerSecond / base)} ×`
        : '';
      targets.push({
        target: `${label} ≥ ${factor} × ${baseName}`,
        scope,
        measured: s.skipped
          ? `not measured: ${s.skipped}`
          : `${formatInt(s.requestsPerSecond)} req/s = ${fixed(ratio)} × ${baseName}${withoutHttp}`,
        pass: !s.skipped && ratio >= factor,
      });
    };
    const p99 = (key: string, label: string, limit: number) => {
      const s = scenario(size, key);
      if (!s) return;
      targets.push({
        target: `${label} p99 ≤ ${limit} ms`,
        scope,
        measured: s.skipped ? `not measured: ${s.skipped}` : `${fixed(s.p99)} ms`,
        pass: !s.skipped && s.p99 <= limit,
      });
    };
    throughput('get', 'GET one', ceilingRate, 'ceiling', 0.45);
    p99('get', 'GET one', 15);
    throughput('list', 'list 50 items', ceilingRate, 'ceiling', 0.12);
    p99('list', 'list 50 items', 40);
    throughput('post', 'POST (durable)', fsyncRate, 'fsync rate', 1.5);
    p99('post', 'POST', 50);
    throughput('patch', 'PATCH', fsyncRate, 'fsync rate', 1.2);
    p99('patch', 'PATCH', 50);
    throughput('put', 'PUT', fsyncRate, 'fsync rate', 1.2);
    p99('put', 'PUT', 50);
    const failing = size.scenarios.filter((s) => s.errors > 0 || s.timeouts > 0);
    targets.push({
      target: '0 non-2xx and 0 timeouts in every scenario',
      scope,
      measured:
        failing.length === 0
          ? 'none'
          : failing
              .map((s) =>
                s.skipped
                  ? `${s.key}: ${s.skipped}`
                  : `${s.key}: ${formatInt(s.errors)} errors (${formatInt(s.timeouts)} timeouts)`,
              )
              .join('; '),
      pass: failing.length === 0,
    });
  }

  const groups = bySetup(sizes);
  const pairs = groups.map(extremes).filter((pair) => pair !== undefined);
  const scaling = (key: string, label: string, factor: number) => {
    const target = `${label}: p50 at the larger size ≤ ${factor} × at the smaller`;
    if (pairs.length === 0) {
      targets.push({
        target,
        scope: 'two sizes',
        measured: 'needs --rows with two sizes',
        pass: undefined,
      });
      return;
    }
    for (const [small, large] of pairs) {
      const a = scenario(small, key);
      const b = scenario(large, key);
      const scope = `${setupLabel(small)}, ${rowsLabel(large.rows)} vs ${rowsLabel(small.rows)}`;
      if (!a || !b) continue;
      if (a.skipped || b.skipped) {
        targets.push({
          target,
          scope,
          measured: `not measured: ${a.skipped ?? b.skipped ?? ''}`,
          pass: false,
        });
        continue;
      }
      const ratio = b.p50 / a.p50;
      targets.push({
        target,
        scope,
        measured: `${fixed(b.p50)} / ${fixed(a.p50)} ms = ${fixed(ratio)} ×${withoutHttpScaling(small, large, key)}`,
        pass: ratio <= factor,
      });
    }
  };
  scaling('list-filtered', 'list filtered + sorted', 1.25);
  scaling('search', 'search q', 1.25);
  scaling('get', 'GET one', 1.1);

  for (const size of sizes.filter((s) => s.rows >= 1_000_000)) {
    const allowed = (120 * size.rows) / 1_000_000;
    targets.push({
      target: `seeding takes < ${fixed(allowed, 0)} s (2 min per 1M rows)`,
      scope: `${setupLabel(size)}, ${rowsLabel(size.rows)} rows`,
      measured: `${fixed(size.seed.seconds, 1)} s`,
      pass: size.seed.seconds < allowed,
    });
  }

  for (const group of groups) {
    const million =
      group.find((s) => s.rows === 1_000_000) ?? [...group].sort((a, b) => a.rows - b.rows).at(-1);
    if (!million) continue;
    targets.push({
      target: 'peak RSS of the service ≤ 250 MB',
      scope: `${setupLabel(million)}, ${rowsLabel(million.rows)} rows run`,
      measured: `${fixed(million.peakRssBytes / MB, 1)} MB`,
      pass: million.peakRssBytes <= 250 * MB,
    });
  }
  return targets;
}

function verdict(pass: boolean | undefined): string {
  if (pass === undefined) return 'n/a';
  return pass ? 'PASS' : '**MISS**';
}

function cpuCell(s: ScenarioResult): string {
  const db = s.databaseCpu === undefined ? '—' : fixed(s.databaseCpu);
  return `${fixed(s.serverCpu)} / ${db} / ${fixed(s.loadgenCpu)} / ${fixed(s.foreignCpu)}`;
}

function scenarioRow(s: ScenarioResult, ceilingRate: number, fsyncRate: number): string {
  if (s.skipped) {
    return `| ${s.title} | — | — | — | — | — | — | not run: ${s.skipped} | ${fixed(s.peakRssBytes / MB, 0)} | — |`;
  }
  const cells = [
    s.title,
    formatInt(s.requestsPerSecond),
    `${formatInt(s.requestsPerSecondMin)}–${formatInt(s.requestsPerSecondMax)}`,
    fixed(s.requestsPerSecond / ceilingRate),
    fixed(s.requestsPerSecond / fsyncRate),
    fixed(s.p50),
    fixed(s.p99),
    s.errors === 0 ? '0' : `${formatInt(s.errors)} (${formatInt(s.timeouts)} t/o)`,
    fixed(s.peakRssBytes / MB, 0),
    cpuCell(s),
  ];
  return `| ${cells.join(' | ')} |`;
}

const DATA_LAYER_READS: Readonly<Record<DataLayerRead['key'], string>> = {
  get: 'GET one todo (`service.get`)',
  search: 'search q (`service.list`, 50 items)',
  'search-matches': 'of which: reading the match list from the full-text index',
};

const DATA_LAYER_WRITES: Readonly<Record<DataLayerWrite['key'], string>> = {
  post: 'POST (`service.create`)',
  patch: 'PATCH (`service.patch`)',
  put: 'PUT (`service.replace`)',
};

/** The size's data-layer figures (`data-layer.ts`), when it measured any. */
function dataLayerLines(size: SizeRun, fsyncRate: number): string[] {
  const { reads, writes } = size.dataLayer;
  if (reads.length === 0 && writes.length === 0) return [];
  const lines = [
    `### ${setupLabel(size)}, ${formatInt(size.rows)} rows: the same work without HTTP`,
    '',
    "The service's own code from `todos.service` down, called in-process on the server core with the service's Node options (`bench/data-layer.ts`): reads one call at a time before the service started, writes with as many in flight as the load has connections, through the same group commit, after the scenarios. Over HTTP the service cannot be faster than this.",
    '',
  ];
  if (reads.length > 0) {
    lines.push('| read | µs per call (median) | calls |', '| --- | ---: | ---: |');
    for (const r of reads) {
      lines.push(
        `| ${DATA_LAYER_READS[r.key]} | ${fixed(r.microseconds, 1)} | ${formatInt(r.calls)} |`,
      );
    }
    lines.push('');
  }
  if (writes.length > 0) {
    lines.push(
      '| write | writes/s (median) | min–max | × fsync | p50 ms | p99 ms |',
      '| --- | ---: | ---: | ---: | ---: | ---: |',
    );
    for (const w of writes) {
      lines.push(
        `| ${DATA_LAYER_WRITES[w.key]} | ${formatInt(w.writesPerSecond)} | ${formatInt(w.writesPerSecondMin)}–${formatInt(w.writesPerSecondMax)} | ${fixed(w.writesPerSecond / fsyncRate)} | ${fixed(w.p50)} | ${fixed(w.p99)} |`,
      );
    }
    lines.push('');
  }
  return lines;
}

const SCENARIO_HEADER = [
  '| scenario | req/s (median) | min–max | × ceiling | × fsync | p50 ms | p99 ms | errors | peak RSS MB | CPU server / db / loadgen / other |',
  '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
];

/**
 * For each size measured on several set-ups, one table with their figures side by side, each
 * with its ratio to the same ceiling.
 */
function sideBySide(report: BenchReport): string[] {
  const lines: string[] = [];
  const ceilingRate = report.ceiling.requestsPerSecond;
  const sizes = [...new Set(report.sizes.map((s) => s.rows))];
  for (const rows of sizes) {
    const runs = report.sizes.filter((s) => s.rows === rows);
    if (runs.length < 2) continue;
    lines.push(`## Side by side, ${formatInt(rows)} rows`, '');
    lines.push(
      `| scenario | ${runs.map((r) => `${setupLabel(r)} req/s | × ceiling | p50 / p99 ms`).join(' | ')} |`,
    );
    lines.push(`| --- | ${runs.map(() => '---: | ---: | ---:').join(' | ')} |`);
    const keys = [...new Set(runs.flatMap((r) => r.scenarios.map((s) => s.key)))];
    for (const key of keys) {
      const title = runs.map((r) => scenario(r, key)?.title).find((t) => t !== undefined) ?? key;
      const cells = runs.map((r) => {
        const s = scenario(r, key);
        if (!s || s.skipped) return '— | — | —';
        const errors = s.errors > 0 ? ` (${formatInt(s.errors)} errors)` : '';
        return `${formatInt(s.requestsPerSecond)}${errors} | ${fixed(s.requestsPerSecond / ceilingRate)} | ${fixed(s.p50, 1)} / ${fixed(s.p99, 1)}`;
      });
      lines.push(`| ${title} | ${cells.join(' | ')} |`);
    }
    lines.push('');
  }
  return lines;
}

export function renderMarkdown(report: BenchReport): string {
  const { machine, options, fsync, ceiling } = report;
  const ceilingRate = ceiling.requestsPerSecond;
  const fsyncRate = fsync.fsyncPerSecond;
  const lines: string[] = [];
  lines.push(`# todo-api benchmark, ${report.startedAt}`, '');
  lines.push(`- Command: \`${report.command}\``);
  lines.push(
    `- Machine: ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.platform}; pinning: ${machine.pinning}`,
  );
  lines.push(
    `- Load: autocannon ${machine.autocannon}, ${options.connections} connections, ${options.duration} s × ${options.repetitions} repetitions per scenario (after ${options.warmup} s warm-up); figures are medians of the repetitions, min–max is the spread of req/s`,
  );
  lines.push(
    '- Latencies are of every response (autocannon `response` events, full resolution); errors = non-2xx + connection errors (timeouts included); CPU = cores used by the service, by PostgreSQL (— on SQLite), by the load generator and by other processes on the machine during the measured repetitions (other > 0.2 means something else competed for the cores and the row is skewed)',
  );
  if (report.sources.atStart !== report.sources.atEnd) {
    lines.push(
      `- **src/ changed during the run** (sources ${report.sources.atStart.slice(0, 12)} → ${report.sources.atEnd.slice(0, 12)}): sizes may have been measured against different versions of the service; see each size's schema line`,
    );
  } else {
    lines.push(`- Sources: src/ ${report.sources.atStart.slice(0, 12)} (unchanged during the run)`);
  }
  const databases = new Set(report.sizes.map((s) => s.database));
  if (databases.has('sqlite')) {
    lines.push(
      '- SQLite: a freshly seeded file in a temporary directory, opened by the service process (pinned with it)',
    );
  }
  if (databases.has('postgres')) {
    lines.push(
      `- PostgreSQL: ${machine.postgres ?? 'unknown version'}, a system service on this machine, **not pinned**: its processes run on any core, the load generator's included, and it is shared with other users of the machine. Each set-up seeds a schema \`bench_<hex>\` of its own, dropped afterwards. Its CPU (every \`postgres\` process, other clients' included) is the "db" share of the CPU column, apart from "other".`,
    );
  }
  if (report.sizes.some((s) => s.instances > 1)) {
    lines.push(
      `- ×2: two service processes on the same schema, ${machine.pinned ? 'both pinned to the server core (the CPU budget of one)' : 'unpinned'}; the connections are split between two autocannon instances run in parallel, whose requests are summed and latencies merged; peak RSS is the larger instance's`,
    );
  }
  lines.push('');
  lines.push('## Baselines', '');
  lines.push(
    '| baseline | req/s or syncs/s | min–max | p50 ms | p99 ms | errors | CPU server / loadgen / other |',
  );
  lines.push('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  lines.push(
    `| ceiling: bare node:http, same todo JSON (GET /api/todos/{id}) | ${formatInt(ceilingRate)} | ${formatInt(ceiling.requestsPerSecondMin)}–${formatInt(ceiling.requestsPerSecondMax)} | ${fixed(ceiling.p50)} | ${fixed(ceiling.p99)} | ${formatInt(ceiling.errors)} | ${fixed(ceiling.serverCpu)} / ${fixed(ceiling.loadgenCpu)} / ${fixed(ceiling.foreignCpu)} |`,
  );
  lines.push(
    `| serial fsync (4 KiB write + fsync, DB directory) | ${formatInt(fsyncRate)} | — | ${fixed(fsync.fsyncMedianMs)} | — | — | — |`,
  );
  lines.push(
    `| serial fdatasync (for reference) | ${formatInt(fsync.fdatasyncPerSecond)} | — | — | — | — | — |`,
  );
  lines.push('');

  for (const size of report.sizes) {
    const search =
      size.seed.ftsRows === undefined
        ? 'no search index'
        : `${size.database === 'postgres' ? 'search_vector on' : 'todos_fts'} ${formatInt(size.seed.ftsRows)} rows`;
    lines.push(`## ${setupLabel(size)}, ${formatInt(size.rows)} rows`, '');
    lines.push(
      `Seeded in ${fixed(size.seed.seconds, 1)} s (${formatInt(size.seed.rowsPerSecond)} rows/s, ${size.seed.path} path; ${size.database === 'postgres' ? 'schema' : 'DB'} ${fixed(size.seed.fileBytes / MB, 0)} MB; ${search}; schema up to ${size.schema}). Service peak RSS (VmHWM${size.instances > 1 ? ', larger instance' : ''}) ${fixed(size.peakRssBytes / MB, 1)} MB. Delete pool ${formatInt(size.deletePool.size)}, used ${formatInt(size.deletePool.used)}${size.deletePool.exhausted ? ' (EXHAUSTED)' : ''}.`,
      '',
    );
    lines.push(...SCENARIO_HEADER);
    for (const s of size.scenarios) lines.push(scenarioRow(s, ceilingRate, fsyncRate));
    lines.push('');
    lines.push(...dataLayerLines(size, fsyncRate));
  }

  lines.push(...sideBySide(report));

  for (const pair of bySetup(report.sizes).map(extremes)) {
    if (!pair) continue;
    const [small, large] = pair;
    lines.push(
      `## ${setupLabel(small)}: ${rowsLabel(large.rows)} vs ${rowsLabel(small.rows)} rows`,
      '',
    );
    lines.push(
      `| scenario | p50 ${rowsLabel(small.rows)} | p50 ${rowsLabel(large.rows)} | p50 ratio | req/s ${rowsLabel(small.rows)} | req/s ${rowsLabel(large.rows)} |`,
    );
    lines.push('| --- | ---: | ---: | ---: | ---: | ---: |');
    for (const a of small.scenarios) {
      const b = scenario(large, a.key);
      if (!b) continue;
      lines.push(
        `| ${a.title} | ${fixed(a.p50)} | ${fixed(b.p50)} | ${fixed(b.p50 / a.p50)} | ${formatInt(a.requestsPerSecond)} | ${formatInt(b.requestsPerSecond)} |`,
      );
    }
    lines.push('');
  }

  lines.push('## Targets', '');
  lines.push('| target | scope | measured | result |');
  lines.push('| --- | --- | --- | --- |');
  for (const t of report.targets) {
    lines.push(
      `| ${t.target} | ${t.scope} | ${t.measured.replaceAll('|', '\\|')} | ${verdict(t.pass)} |`,
    );
  }
  lines.push('');
  return lines.join('\n');
}
