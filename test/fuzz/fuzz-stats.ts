/** Counts of what a fuzz run sent and got back, and their report. */

export interface FuzzStats {
  readonly startedAt: number;
  /** Generated requests (seeding excluded). */
  requests: number;
  /** Requests that created the first todos, not generated. */
  setupRequests: number;
  readonly byOperation: Map<string, Map<number, number>>;
  readonly byMutation: Map<string, number>;
  /** The `code` of every problem document received: shows how deep the requests got. */
  readonly byProblemCode: Map<string, number>;
  readonly knownFindings: Map<string, number>;
}

export function createFuzzStats(operations: readonly string[]): FuzzStats {
  return {
    startedAt: Date.now(),
    requests: 0,
    setupRequests: 0,
    byOperation: new Map(operations.map((operation) => [operation, new Map<number, number>()])),
    byMutation: new Map(),
    byProblemCode: new Map(),
    knownFindings: new Map(),
  };
}

function increment<K>(counts: Map<K, number>, key: K): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

export function recordExchange(
  stats: FuzzStats,
  exchange: {
    readonly operation: string;
    readonly mutation: string;
    readonly statusCode: number;
    readonly problemCode: string | undefined;
    readonly knownFinding: string | undefined;
  },
): void {
  stats.requests++;
  let statuses = stats.byOperation.get(exchange.operation);
  if (!statuses) {
    statuses = new Map();
    stats.byOperation.set(exchange.operation, statuses);
  }
  increment(statuses, exchange.statusCode);
  increment(stats.byMutation, exchange.mutation);
  if (exchange.problemCode !== undefined) increment(stats.byProblemCode, exchange.problemCode);
  if (exchange.knownFinding !== undefined) increment(stats.knownFindings, exchange.knownFinding);
}

/** Operations the run never sent a request to. */
export function unsentOperations(stats: FuzzStats): string[] {
  return [...stats.byOperation]
    .filter(([, statuses]) => [...statuses.values()].every((count) => count === 0))
    .map(([operation]) => operation);
}

function statusHistogram(stats: FuzzStats): Map<number, number> {
  const histogram = new Map<number, number>();
  for (const statuses of stats.byOperation.values()) {
    for (const [status, count] of statuses)
      histogram.set(status, (histogram.get(status) ?? 0) + count);
  }
  return new Map([...histogram].sort(([a], [b]) => a - b));
}

const number = (value: number) => value.toLocaleString('en-US');

function counts<K>(map: ReadonlyMap<K, number>): string {
  return [...map].map(([key, count]) => `${String(key)}×${number(count)}`).join(' ');
}

/** One line: requests, rate, statuses by class. */
export function summaryLine(stats: FuzzStats, seed: number | undefined): string {
  const seconds = (Date.now() - stats.startedAt) / 1000;
  const byClass = new Map<string, number>();
  for (const [status, count] of statusHistogram(stats)) {
    const key = `${String(status).charAt(0)}xx`;
    byClass.set(key, (byClass.get(key) ?? 0) + count);
  }
  const known =
    stats.knownFindings.size > 0 ? `; known findings ${counts(stats.knownFindings)}` : '';
  return (
    `openapi fuzz: ${number(stats.requests)} requests (+${stats.setupRequests} setup) to ` +
    `${stats.byOperation.size} operations in ${seconds.toFixed(1)} s ` +
    `(${number(Math.round(stats.requests / Math.max(seconds, 0.001)))}/s); ${counts(byClass)}${known}` +
    (seed === undefined ? '' : `; seed ${seed}`)
  );
}

/** The long report: per-operation counts with their statuses, the status histogram, mutations. */
export function fullReport(stats: FuzzStats, seed: number | undefined): string {
  const width = Math.max(...[...stats.byOperation.keys()].map((operation) => operation.length));
  const lines = [summaryLine(stats, seed), '', 'per operation:'];
  for (const [operation, statuses] of stats.byOperation) {
    const total = [...statuses.values()].reduce((sum, count) => sum + count, 0);
    const sorted = new Map([...statuses].sort(([a], [b]) => a - b));
    lines.push(`  ${operation.padEnd(width)}  ${number(total).padStart(8)}   ${counts(sorted)}`);
  }
  lines.push('', `statuses: ${counts(statusHistogram(stats))}`);
  lines.push(`mutated part: ${counts(stats.byMutation)}`);
  const codes = new Map([...stats.byProblemCode].sort(([, a], [, b]) => b - a));
  lines.push(`problem codes: ${counts(codes)}`);
  if (stats.knownFindings.size > 0) lines.push(`known findings: ${counts(stats.knownFindings)}`);
  return lines.join('\n');
}
