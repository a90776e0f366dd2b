/**
 * Runs one scenario against a server with autocannon: a probe request, an optional warm-up,
 * then N measured repetitions, sampling the server's RSS and CPU time throughout. Against
 * several instances of the service, one autocannon per instance runs in parallel, the
 * connections (and an open-loop rate) split between them, and their figures are summed.
 */
import autocannon from 'autocannon';
import {
  cpuSecondsOfAll,
  startForeignCpuMeter,
  startRssSampler,
  waitForIdle,
} from './processes.js';
import type { RequestSpec, Scenario } from './scenarios.js';

/** The service under load: one or more instances, all serving the same database. */
export interface LoadTarget {
  readonly baseUrls: readonly string[];
  /** The instances' processes: their CPU and RSS are the service's. */
  readonly pids: readonly number[];
  /** PostgreSQL serves them: its processes' CPU is reported apart from other processes'. */
  readonly database: boolean;
}

export interface LoadOptions {
  readonly connections: number;
  readonly duration: number;
  readonly repetitions: number;
  readonly warmup: number;
  /** Before each repetition, wait up to this many seconds for other processes to go quiet. */
  readonly idleWait: number;
}

export interface Repetition {
  readonly requestsPerSecond: number;
  readonly requests: number;
  /** Latency percentiles of every response (2xx or not), in ms. */
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly non2xx: number;
  /** Connection errors, timeouts included. */
  readonly errors: number;
  readonly timeouts: number;
  readonly statusCodes: Record<string, number>;
  readonly seconds: number;
  /** Cores used by other processes on the machine during the repetition. */
  readonly foreignCpu?: number;
  /** Cores used by PostgreSQL during the repetition, when it serves the service. */
  readonly databaseCpu?: number;
  /** CPU steal time (the hypervisor running something else) per second. */
  readonly steal?: number;
}

export interface Probe {
  readonly status: number;
  /** The problem's code and detail, for a non-2xx answer. */
  readonly problem?: string;
}

export interface ScenarioResult {
  readonly key: string;
  readonly title: string;
  readonly request: string;
  readonly probe: Probe;
  /** Why no load was applied (the probe failed), when it was not. */
  readonly skipped?: string;
  readonly repetitions: readonly Repetition[];
  /** Median over the repetitions. */
  readonly requestsPerSecond: number;
  readonly requestsPerSecondMin: number;
  readonly requestsPerSecondMax: number;
  /** Medians over the repetitions, ms. */
  readonly p50: number;
  readonly p99: number;
  /** Non-2xx answers plus connection errors and timeouts, over all repetitions. */
  readonly errors: number;
  readonly timeouts: number;
  /** Largest RSS of one server instance seen while the scenario ran (every 200 ms), bytes. */
  readonly peakRssBytes: number;
  /** CPU time of the server (all instances) per second of load (1 = one core busy). */
  readonly serverCpu: number;
  /** Cores used by PostgreSQL's processes during the repetitions (mean); absent on SQLite. */
  readonly databaseCpu?: number;
  /** CPU time of the load generator (this process) per second of load. */
  readonly loadgenCpu: number;
  /** Cores used by other processes during the repetitions (mean); > 0.2 skews the figures. */
  readonly foreignCpu: number;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

function toRequest(spec: RequestSpec): autocannon.Request {
  return {
    method: spec.method,
    path: spec.path,
    headers: { ...spec.headers },
    ...(spec.body === undefined ? {} : { body: spec.body }),
  };
}

/** `total` split into `parts` whole shares that differ by at most one, e.g. 51 → 26 + 25. */
export function splitEvenly(total: number, parts: number): number[] {
  return Array.from(
    { length: parts },
    (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0),
  );
}

/**
 * One autocannon run of `seconds` per base URL, in parallel, `connections` split between them;
 * with `overallRate` (requests/s in all), open-loop at that rate instead of as fast as the
 * server answers. Latencies are kept at full resolution (autocannon's own histogram has 1 ms
 * steps and leaves out non-2xx answers) and merged.
 */
export async function runLoad(
  baseUrls: string | readonly string[],
  scenario: Pick<Scenario, 'fixed' | 'next'>,
  connections: number,
  seconds: number,
  overallRate?: number,
): Promise<Repetition> {
  const urls = typeof baseUrls === 'string' ? [baseUrls] : baseUrls;
  if (connections < urls.length) throw new Error('fewer connections than instances');
  const request: autocannon.Request = scenario.fixed
    ? toRequest(scenario.fixed)
    : {
        method: 'GET',
        path: '/',
        setupRequest: (base) => ({ ...base, ...toRequest(scenario.next()) }),
      };
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const shares = splitEvenly(connections, urls.length);
  const results = await Promise.all(
    urls.map(
      (url, i) =>
        new Promise<autocannon.Result>((resolve, reject) => {
          const share = shares[i] ?? 1;
          const instance = autocannon(
            {
              url,
              connections: share,
              duration: seconds,
              timeout: 10,
              requests: [request],
              ...(overallRate === undefined
                ? {}
                : { overallRate: Math.max(1, Math.round((overallRate * share) / connections)) }),
            },
            (error, output) => {
              if (error) reject(error instanceof Error ? error : new Error(String(error)));
              else resolve(output);
            },
          );
          instance.on('response', (_client, _status, _bytes, responseTime) => {
            if (count === latencies.length) {
              const grown = new Float64Array(latencies.length * 2);
              grown.set(latencies);
              latencies = grown;
            }
            latencies[count++] = responseTime;
          });
        }),
    ),
  );
  const sorted = latencies.subarray(0, count).sort();
  const statusCodes: Record<string, number> = {};
  for (const result of results) {
    for (const [code, stats] of Object.entries(result.statusCodeStats ?? {})) {
      statusCodes[code] = (statusCodes[code] ?? 0) + (stats.count ?? 0);
    }
  }
  const sum = (pick: (result: autocannon.Result) => number) =>
    results.reduce((total, result) => total + pick(result), 0);
  const duration = Math.max(...results.map((result) => result.duration));
  return {
    requestsPerSecond: count / duration,
    requests: count,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
    non2xx: sum((result) => result.non2xx),
    errors: sum((result) => result.errors),
    timeouts: sum((result) => result.timeouts),
    statusCodes,
    seconds: duration,
  };
}

/** Sends one request of the scenario and reports its status (and problem code if any). */
export async function probe(baseUrl: string, spec: RequestSpec): Promise<Probe> {
  const response = await fetch(`${baseUrl}${spec.path}`, {
    method: spec.method,
    ...(spec.headers ? { headers: spec.headers } : {}),
    ...(spec.body === undefined ? {} : { body: spec.body }),
  });
  const text = await response.text();
  if (response.ok) return { status: response.status };
  let problem = text.slice(0, 300);
  try {
    const parsed = JSON.parse(text) as { code?: string; detail?: string };
    problem = `${parsed.code ?? '?'}: ${parsed.detail ?? ''}`;
  } catch {
    // not JSON: keep the raw text
  }
  return { status: response.status, problem };
}

/** Probe, warm-up, then the measured repetitions of one scenario against `target`. */
export async function runScenario(
  target: LoadTarget,
  scenario: Scenario,
  options: LoadOptions,
  log: (line: string) => void,
): Promise<ScenarioResult> {
  const { baseUrls, pids } = target;
  const sampler = startRssSampler(pids);
  // One probe per instance: each must serve the scenario.
  let first: Probe = { status: 200 };
  for (const baseUrl of baseUrls) {
    first = await probe(baseUrl, scenario.next());
    if (first.status < 200 || first.status > 299) break;
  }
  const base = { key: scenario.key, title: scenario.title, request: scenario.request };
  if (first.status < 200 || first.status > 299) {
    const peak = sampler.stop();
    log(`  ${scenario.key}: probe answered ${first.status} ${first.problem ?? ''}; no load`);
    return {
      ...base,
      probe: first,
      skipped: `the service answers ${first.status} (${first.problem ?? 'no detail'})`,
      repetitions: [],
      requestsPerSecond: 0,
      requestsPerSecondMin: 0,
      requestsPerSecondMax: 0,
      p50: Number.NaN,
      p99: Number.NaN,
      errors: 1,
      timeouts: 0,
      peakRssBytes: peak,
      serverCpu: Number.NaN,
      loadgenCpu: Number.NaN,
      foreignCpu: Number.NaN,
    };
  }
  if (options.warmup > 0) await runLoad(baseUrls, scenario, options.connections, options.warmup);

  const repetitions: Repetition[] = [];
  let wall = 0;
  let serverSeconds = 0;
  let selfSeconds = 0;
  for (let i = 0; i < options.repetitions; i++) {
    if (options.idleWait > 0) await waitForIdle(pids, options.idleWait, 0.15, log, target.database);
    const cpuBefore = cpuSecondsOfAll(pids);
    const selfBefore = process.cpuUsage();
    const meter = startForeignCpuMeter(pids, target.database);
    const started = performance.now();
    const load = await runLoad(baseUrls, scenario, options.connections, options.duration);
    const { foreign, steal, database } = meter.read();
    wall += (performance.now() - started) / 1000;
    serverSeconds += cpuSecondsOfAll(pids) - cpuBefore;
    const self = process.cpuUsage(selfBefore);
    selfSeconds += (self.user + self.system) / 1e6;
    const rep: Repetition = {
      ...load,
      foreignCpu: foreign,
      steal,
      ...(target.database ? { databaseCpu: database } : {}),
    };
    repetitions.push(rep);
    log(
      `  ${scenario.key} #${i + 1}: ${rep.requestsPerSecond.toFixed(0)} req/s, p50 ${rep.p50.toFixed(2)} ms, p99 ${rep.p99.toFixed(2)} ms, non-2xx ${rep.non2xx}, errors ${rep.errors}${target.database ? `, PostgreSQL CPU ${database.toFixed(2)}` : ''}, other CPU ${foreign.toFixed(2)}`,
    );
  }
  const serverCpu = serverSeconds / wall;
  const loadgenCpu = selfSeconds / wall;
  const peakRssBytes = Math.max(sampler.stop(), 0);
  const rates = repetitions.map((r) => r.requestsPerSecond);
  return {
    ...base,
    probe: first,
    repetitions,
    requestsPerSecond: median(rates),
    requestsPerSecondMin: Math.min(...rates),
    requestsPerSecondMax: Math.max(...rates),
    p50: median(repetitions.map((r) => r.p50)),
    p99: median(repetitions.map((r) => r.p99)),
    errors: repetitions.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
    timeouts: repetitions.reduce((sum, r) => sum + r.timeouts, 0),
    peakRssBytes,
    serverCpu,
    ...(target.database
      ? {
          databaseCpu:
            repetitions.reduce((sum, r) => sum + (r.databaseCpu ?? 0), 0) / repetitions.length,
        }
      : {}),
    loadgenCpu,
    foreignCpu: repetitions.reduce((sum, r) => sum + (r.foreignCpu ?? 0), 0) / repetitions.length,
  };
}
