/**
 * The soak's gate (RELIABILITY.md §6, "Nightly soak") evaluated over its windows, and the
 * Markdown that is printed and written next to the JSON.
 */
import type { DatabaseKind } from '../bench/databases.js';
import type { ProbeSample } from './gc-probe.js';

/** One open-loop window and the probe's sample taken right after it. */
export interface Window {
  readonly index: number;
  readonly seconds: number;
  readonly requests: number;
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Readonly<Record<string, number>>;
  readonly sample: ProbeSample;
  /** SQLite's WAL file after the window, bytes. */
  readonly walBytes: number | undefined;
  /** Cores used by the service, by PostgreSQL (when used) and by other processes. */
  readonly serverCpu: number;
  readonly databaseCpu: number | undefined;
  readonly foreignCpu: number;
}

export interface Check {
  readonly name: string;
  readonly measured: string;
  /** undefined: not enough windows to tell. */
  readonly pass: boolean | undefined;
}

export interface SoakReport {
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly command: string;
  readonly database: DatabaseKind;
  readonly rows: number;
  readonly pinning: string;
  readonly node: string;
  readonly nodeArgs: readonly string[];
  readonly connections: number;
  readonly windowSeconds: number;
  readonly loadShare: number;
  /** The closed-loop run of the mixed scenario that sets the offered rate. */
  readonly capacity: {
    readonly requestsPerSecond: number;
    readonly p50: number;
    readonly p99: number;
    readonly errors: number;
    readonly seconds: number;
  };
  readonly offeredRate: number;
  /** Probe samples: right after start, and after the capacity run once the service is idle. */
  readonly atStart: ProbeSample;
  readonly baseline: ProbeSample;
  readonly windows: readonly Window[];
  readonly plannedWindows: number;
  /** After the last window, once the service is idle again. */
  readonly drained: ProbeSample | undefined;
  /** Why the soak stopped early, if it did. */
  readonly exited: string | undefined;
  readonly snapshots: readonly string[];
  readonly gate: readonly Check[];
}

const MB = 1024 * 1024;
/** Heap growth from window 2 to the last that passes: 5 %, or 5 MB, whichever is larger. */
const HEAP_GROWTH_SHARE = 0.05;
const HEAP_GROWTH_BYTES = 5 * MB;
const THROUGHPUT_KEPT = 0.9;
const P99_GROWTH = 1.5;
const SETTLE_TOLERANCE = 5;
const LOOP_DELAY_P99_MS = 50;
const WAL_BYTES = 64 * MB;
/** Windows whose heap must not rise at every step. */
const MONOTONIC_SPAN = 5;

function fixed(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '—';
}

function mb(bytes: number, digits = 1): string {
  return fixed(bytes / MB, digits);
}

/**
 * Every check of the gate. Window 1 warms up (JIT, caches, pools) and is the reference for
 * nothing; window 2 is the reference for growth and slowdown.
 */
export function evaluateGate(report: SoakReport): Check[] {
  const checks: Check[] = [];
  const { windows } = report;
  const second = windows[1];
  const last = windows.at(-1);
  const comparable: [Window, Window] | undefined =
    second && last && last.index > second.index ? [second, last] : undefined;
  const tooShort = 'needs ≥ 3 windows';

  checks.push({
    name: `service stayed up for ${report.plannedWindows} windows`,
    measured: report.exited ?? `${windows.length} windows`,
    pass: report.exited === undefined && windows.length === report.plannedWindows,
  });

  const errors = windows.reduce((sum, w) => sum + w.non2xx + w.errors, 0);
  const timeouts = windows.reduce((sum, w) => sum + w.timeouts, 0);
  checks.push({
    name: '0 errors (non-2xx, connection errors, timeouts)',
    measured: `${errors} errors, ${timeouts} timeouts`,
    pass: errors === 0 && timeouts === 0,
  });

  if (comparable) {
    const [a, b] = comparable;
    const growth = b.sample.heapUsed - a.sample.heapUsed;
    const allowed = Math.max(HEAP_GROWTH_SHARE * a.sample.heapUsed, HEAP_GROWTH_BYTES);
    checks.push({
      name: `heapUsed after GC, window 2 → ${b.index}: growth ≤ 5 % or ≤ 5 MB`,
      measured: `${mb(a.sample.heapUsed, 2)} → ${mb(b.sample.heapUsed, 2)} MB (${growth >= 0 ? '+' : ''}${mb(growth, 2)} MB, ${fixed((growth / a.sample.heapUsed) * 100)} %)`,
      pass: growth <= allowed,
    });
    checks.push({
      name: `throughput of window ${b.index} ≥ 90 % of window 2`,
      measured: `${fixed(b.requestsPerSecond, 0)} / ${fixed(a.requestsPerSecond, 0)} req/s = ${fixed((b.requestsPerSecond / a.requestsPerSecond) * 100)} %`,
      pass: b.requestsPerSecond >= THROUGHPUT_KEPT * a.requestsPerSecond,
    });
    checks.push({
      name: `p99 of window ${b.index} ≤ 1.5 × window 2`,
      measured: `${fixed(b.p99)} / ${fixed(a.p99)} ms = ${fixed(b.p99 / a.p99, 2)} ×`,
      pass: b.p99 <= P99_GROWTH * a.p99,
    });
  } else {
    for (const name of ['heapUsed growth ≤ 5 % or ≤ 5 MB', 'throughput ≥ 90 %', 'p99 ≤ 1.5 ×']) {
      checks.push({ name: `${name} (window 2 → last)`, measured: tooShort, pass: undefined });
    }
  }

  const tail = windows.slice(1).slice(-MONOTONIC_SPAN);
  if (tail.length === MONOTONIC_SPAN) {
    const rising = tail.every(
      (w, i) => i === 0 || w.sample.heapUsed > (tail[i - 1]?.sample.heapUsed ?? Infinity),
    );
    checks.push({
      name: `heapUsed not rising at every step over the last ${MONOTONIC_SPAN} windows`,
      measured: tail.map((w) => mb(w.sample.heapUsed, 2)).join(' → ') + ' MB',
      pass: !rising,
    });
  } else {
    checks.push({
      name: `heapUsed not rising at every step over the last ${MONOTONIC_SPAN} windows`,
      measured: `needs ≥ ${MONOTONIC_SPAN + 1} windows`,
      pass: undefined,
    });
  }

  const drained = report.drained;
  checks.push({
    name: 'open fds and active handles back to the baseline ± 5 after the drain',
    measured: drained
      ? `fds ${report.baseline.fds} → ${drained.fds}, handles ${report.baseline.activeResources} → ${drained.activeResources}`
      : 'no sample after the drain',
    pass:
      drained !== undefined &&
      Math.abs(drained.fds - report.baseline.fds) <= SETTLE_TOLERANCE &&
      Math.abs(drained.activeResources - report.baseline.activeResources) <= SETTLE_TOLERANCE,
  });

  const worstDelay = Math.max(...windows.map((w) => w.sample.eventLoopDelayP99));
  checks.push({
    name: 'event-loop delay p99 ≤ 50 ms in every window',
    measured: windows.length > 0 ? `worst ${fixed(worstDelay)} ms` : 'no window',
    pass: windows.length > 0 ? worstDelay <= LOOP_DELAY_P99_MS : undefined,
  });

  if (report.database === 'sqlite') {
    const worstWal = Math.max(0, ...windows.map((w) => w.walBytes ?? 0));
    checks.push({
      name: 'WAL file < 64 MB (checkpoints keep up)',
      measured: `largest ${mb(worstWal)} MB`,
      pass: worstWal < WAL_BYTES,
    });
  }
  return checks;
}

function verdict(pass: boolean | undefined): string {
  if (pass === undefined) return 'n/a';
  return pass ? 'PASS' : '**FAIL**';
}

export function renderMarkdown(report: SoakReport): string {
  const lines: string[] = [];
  const failed = report.gate.some((check) => check.pass === false);
  const second = report.windows[1];
  lines.push(`# todo-api soak, ${report.startedAt}: ${failed ? 'FAIL' : 'PASS'}`, '');
  lines.push(`- Command: \`${report.command}\``);
  lines.push(
    `- Service: \`node ${report.nodeArgs.join(' ')} --import tsx --import ./soak/gc-probe.ts src/server.ts\` on ${report.database === 'sqlite' ? 'a fresh SQLite file' : 'a fresh PostgreSQL schema (PostgreSQL itself not pinned)'} seeded with ${report.rows.toLocaleString('en-US')} todos; Node ${report.node}; pinning: ${report.pinning}`,
  );
  lines.push(
    `- Capacity (mixed, closed loop, ${report.connections} connections, ${fixed(report.capacity.seconds, 0)} s): ${fixed(report.capacity.requestsPerSecond, 0)} req/s, p50 ${fixed(report.capacity.p50)} ms, p99 ${fixed(report.capacity.p99)} ms, ${report.capacity.errors} errors`,
  );
  lines.push(
    `- Soak: open loop at ${fixed(report.loadShare * 100, 0)} % of capacity = ${report.offeredRate} req/s (autocannon \`overallRate\`), ${report.windows.length} of ${report.plannedWindows} windows × ${report.windowSeconds} s; mix 55 % GET one, 15 % list, 20 % PATCH, 10 % POST (no DELETE, so no 404 is expected: every non-2xx is an error)`,
  );
  lines.push(
    '- After each window the probe reports the event-loop delay of the window, then runs `gc()` twice and reports the heap, RSS, open fds and active handles',
  );
  if (report.exited) lines.push(`- **Stopped early: ${report.exited}**`);
  if (report.snapshots.length > 0) {
    lines.push(`- Heap snapshots: ${report.snapshots.map((s) => `\`${s}\``).join(', ')}`);
  }
  lines.push('');
  lines.push(
    '| window | req/s | p50 ms | p99 ms | errors | heapUsed MB | Δ vs window 2 | external MB | RSS MB | fds | handles | loop p99 ms | WAL MB | CPU service / db / other |',
  );
  lines.push(
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  const sampleRow = (label: string, s: ProbeSample) =>
    `| ${label} | — | — | — | — | ${mb(s.heapUsed, 2)} | — | ${mb(s.external)} | ${mb(s.rss, 0)} | ${s.fds} | ${s.activeResources} | — | — | — |`;
  lines.push(sampleRow('start', report.atStart));
  lines.push(sampleRow('baseline', report.baseline));
  for (const w of report.windows) {
    const delta = second ? w.sample.heapUsed - second.sample.heapUsed : Number.NaN;
    const errors = w.non2xx + w.errors;
    lines.push(
      `| ${w.index} | ${fixed(w.requestsPerSecond, 0)} | ${fixed(w.p50)} | ${fixed(w.p99)} | ${errors === 0 ? '0' : `**${errors}**`} | ${mb(w.sample.heapUsed, 2)} | ${w.index < 2 ? '—' : `${delta >= 0 ? '+' : ''}${mb(delta, 2)}`} | ${mb(w.sample.external)} | ${mb(w.sample.rss, 0)} | ${w.sample.fds} | ${w.sample.activeResources} | ${fixed(w.sample.eventLoopDelayP99)} | ${w.walBytes === undefined ? '—' : mb(w.walBytes)} | ${fixed(w.serverCpu, 2)} / ${w.databaseCpu === undefined ? '—' : fixed(w.databaseCpu, 2)} / ${fixed(w.foreignCpu, 2)} |`,
    );
  }
  if (report.drained) lines.push(sampleRow('drained', report.drained));
  lines.push('');
  lines.push('## Gate', '');
  lines.push('| check | measured | result |');
  lines.push('| --- | --- | --- |');
  for (const check of report.gate) {
    lines.push(`| ${check.name} | ${check.measured} | ${verdict(check.pass)} |`);
  }
  lines.push('');
  lines.push(failed ? '**FAIL**' : 'PASS', '');
  return lines.join('\n');
}
