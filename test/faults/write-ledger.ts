/**
 * The bookkeeping of a "no acknowledged write lost" test (RELIABILITY.md §4.3), shared by the
 * crash harnesses: HTTP workers create (with an `Idempotency-Key`), update (PATCH with
 * `If-Match`) and delete (DELETE with `If-Match`) todos of their own, and the ledger remembers,
 * per todo, the last acknowledged state and the one write whose outcome is unknown.
 *
 * A write counts as acknowledged only when its 2xx answer arrived whole. A write whose answer
 * never came (in flight at a crash, timed out, 5xx) is "pending": afterwards either its result
 * or the last acknowledged state may be stored — nothing older, nothing else, nothing twice.
 * Titles are unique per write, so every stored row can be traced back to the write that made it.
 */

export type Op = 'create' | 'update' | 'delete';
export const OPS: readonly Op[] = ['create', 'update', 'delete'];

/** What the ledger expects of one todo: absent, or present with this content and version. */
export type State =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly title: string;
      readonly description: string;
      readonly version: number;
    };
const ABSENT: State = { present: false };

/** A todo as stored: from the API or straight from the database. */
export interface Row {
  readonly id: string;
  readonly title: string;
  readonly description: string | null;
  readonly version: number;
}

/** The stored replay record of a create (`idempotency_keys`, method POST). */
export interface KeyRow {
  readonly key: string;
  readonly status_code: number | null;
  readonly body: string | null;
}

interface TodoRecord {
  readonly label: string;
  readonly createKey: string;
  readonly createBody: { readonly title: string; readonly description: string };
  id: string | undefined;
  /** The last acknowledged state, or one observed after a recovery (then durable). */
  known: State;
  /** A write whose outcome is unknown; the worker leaves the todo alone until it is resolved. */
  pending: { readonly op: Op; readonly result: State } | undefined;
  /** The create was acknowledged (directly or by a replay): its idempotency record must exist. */
  createAcked: boolean;
  /** A replay answered 409 in-flight: the claim committed, the create itself did not. */
  claimedOnly: boolean;
  /** A create that nobody ever replays: it may or may not have landed, but at most once. */
  neverReplayed: boolean;
  /** The server contradicted our knowledge (already a violation); re-read before further use. */
  suspect: boolean;
  updates: number;
}

export interface LedgerOptions {
  /** Prefix of every title and key, unique to the run. */
  readonly run: string;
  readonly random: () => number;
  readonly requestTimeoutMs: number;
  /** Bound on one worker's operations per `load` call. */
  readonly maxOpsPerWorker: number;
  /** Pause after an unknown outcome, as a client honouring `Retry-After` (scaled down) would. */
  readonly backoffMs: number;
  readonly verifyConcurrency: number;
}

export interface LoadControl {
  stopped: boolean;
  /** `Date.now()` after which no new operation starts. */
  readonly until: number;
}

export interface Tally {
  missing: number;
  wrong: number;
  duplicates: number;
  unexplained: number;
}

type Outcome =
  | { readonly kind: 'answered'; readonly status: number; readonly headers: Headers; body: unknown }
  | { readonly kind: 'failed'; readonly error: string };

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deterministic choices (which op, which todo, crash delays) from a printed seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Rejects when `promise` has not settled within `ms`. */
export async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
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

/** Runs `task` over `items`, at most `limit` at a time. */
export async function eachLimited<T>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  });
  await Promise.all(lanes);
}

/** The transport error of a failed fetch in a few words (`ECONNREFUSED`, `TimeoutError`). */
export function failureName(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === 'string') return cause.code;
  return error instanceof Error ? error.name : String(error);
}

/** One HTTP request; any transport failure (refused, reset, timeout, cut body) is `failed`. */
async function send(
  url: string,
  method: string,
  timeoutMs: number,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Outcome> {
  try {
    const response = await fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    return {
      kind: 'answered',
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  } catch (error) {
    return { kind: 'failed', error: failureName(error) };
  }
}

export function asRow(body: unknown): Row | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { id, title, description, version } = body as Record<string, unknown>;
  if (typeof id !== 'string' || typeof title !== 'string' || typeof version !== 'number') {
    return undefined;
  }
  if (description !== null && typeof description !== 'string') return undefined;
  return { id, title, description, version };
}

function describeState(state: State): string {
  return state.present ? `"${state.title}" v${state.version}` : 'absent';
}

function describeRow(row: Row | undefined): string {
  return row ? `${row.id} "${row.title}" v${row.version}` : 'absent';
}

function describeOutcome(outcome: Outcome): string {
  if (outcome.kind === 'failed') return outcome.error;
  const code = (outcome.body as { code?: unknown } | undefined)?.code;
  return `${outcome.status}${typeof code === 'string' ? ` ${code}` : ''}`;
}

function stateOf(row: Row): State {
  return {
    present: true,
    title: row.title,
    description: row.description ?? '',
    version: row.version,
  };
}

function matches(state: State, row: Row | undefined, id: string | undefined): boolean {
  if (!state.present) return row === undefined;
  return (
    row !== undefined &&
    row.title === state.title &&
    row.description === state.description &&
    row.version === state.version &&
    (id === undefined || row.id === id)
  );
}

type Verdict = 'ok' | 'missing' | 'wrong';

/**
 * The stored todo must be the known state or, when a write is pending, that write's result.
 * Anything else is a loss: `missing` when a known todo is gone, `wrong` when the row holds any
 * other content or version (older, rejected, partial, resurrected after a delete).
 */
function judge(record: TodoRecord, row: Row | undefined): Verdict {
  if (matches(record.known, row, record.id)) return 'ok';
  if (record.pending && matches(record.pending.result, row, record.id)) return 'ok';
  return row === undefined ? 'missing' : 'wrong';
}

function expectation(record: TodoRecord): string {
  const pending = record.pending
    ? ` or (pending ${record.pending.op}) ${describeState(record.pending.result)}`
    : '';
  return `${describeState(record.known)}${pending}`;
}

function usable(record: TodoRecord): boolean {
  return (
    record.known.present &&
    record.id !== undefined &&
    record.pending === undefined &&
    !record.suspect
  );
}

const counter = (): Record<Op, number> => ({ create: 0, update: 0, delete: 0 });
const perOp = (counts: Record<Op, number>) => OPS.map((op) => `${op}=${counts[op]}`).join(' ');

/** Writes of a crash test, what was acknowledged, and the checks of what survived. */
export class WriteLedger {
  readonly stats = {
    sent: counter(),
    acked: counter(),
    unknown: counter(),
    /** Every answer and transport failure of the load, by status and problem code. */
    outcomes: new Map<string, number>(),
    /** 503 answers without `Retry-After`. */
    unavailableWithoutRetryAfter: 0,
    replays: { inFlight: 0, landed: 0, fresh: 0, claimedOnly: 0, acked: 0 },
    resolved: { landed: 0, notLanded: 0 },
    midRun: { missing: 0, wrong: 0 },
  };
  readonly violations: string[] = [];
  /** Requests sent and not yet answered, right now. */
  inFlight = 0;

  private readonly records: TodoRecord[] = [];
  private readonly byTitle = new Map<string, TodoRecord>();
  private readonly byId = new Map<string, TodoRecord>();
  private readonly workerRecords: TodoRecord[][] = [];

  constructor(
    private readonly options: LedgerOptions,
    workers: number,
  ) {
    for (let index = 0; index < workers; index++) this.workerRecords.push([]);
  }

  /** Statuses answered with a 5xx other than 503 (a crash mapped to 500 is a finding). */
  get answeredOther5xx(): number {
    let total = 0;
    for (const [key, count] of this.stats.outcomes) {
      if (/^5\d\d/.test(key) && !key.startsWith('503')) total += count;
    }
    return total;
  }

  /** Runs every worker until `control` stops them or each reached its operation bound. */
  async load(baseUrl: string, control: LoadControl): Promise<void> {
    await Promise.all(
      this.workerRecords.map((own, index) => this.runWorker(index, own, baseUrl, control)),
    );
  }

  private async runWorker(
    index: number,
    own: TodoRecord[],
    baseUrl: string,
    control: LoadControl,
  ): Promise<void> {
    for (let ops = 0; ops < this.options.maxOpsPerWorker; ops++) {
      if (control.stopped || Date.now() > control.until) return;
      const candidates = own.filter(usable);
      const roll = this.options.random();
      let settled: boolean;
      if (candidates.length < 3 || roll < 0.4) settled = await this.create(index, own, baseUrl);
      else if (roll < 0.85) settled = await this.update(baseUrl, this.pick(candidates));
      else settled = await this.remove(baseUrl, this.pick(candidates));
      if (!settled) await sleep(this.options.backoffMs);
    }
  }

  private pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.options.random() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  private shuffled<T>(items: readonly T[]): T[] {
    const copy = [...items];
    for (let i = copy.length - 1; i > 0; i--) {
      const j = Math.floor(this.options.random() * (i + 1));
      [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
    }
    return copy;
  }

  private violation(message: string): void {
    if (this.violations.length < 200) this.violations.push(message);
  }

  private send(url: string, method: string, headers?: Record<string, string>, body?: unknown) {
    return send(url, method, this.options.requestTimeoutMs, headers, body);
  }

  private async request(
    op: Op,
    url: string,
    method: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Outcome> {
    this.stats.sent[op]++;
    this.inFlight++;
    let outcome: Outcome;
    try {
      outcome = await this.send(url, method, headers, body);
    } finally {
      this.inFlight--;
    }
    const key = describeOutcome(outcome);
    this.stats.outcomes.set(key, (this.stats.outcomes.get(key) ?? 0) + 1);
    if (
      outcome.kind === 'answered' &&
      outcome.status === 503 &&
      outcome.headers.get('retry-after') === null
    ) {
      this.stats.unavailableWithoutRetryAfter++;
    }
    return outcome;
  }

  /** A write whose answer never came whole (or was a 5xx): its outcome is unknown. */
  private unknown(op: Op, outcome: Outcome): boolean {
    if (outcome.kind === 'failed' || outcome.status >= 500) {
      this.stats.unknown[op]++;
      return true;
    }
    return false;
  }

  /** Returns false when the outcome is unknown (the worker then backs off). */
  private async create(index: number, own: TodoRecord[], baseUrl: string): Promise<boolean> {
    const label = `w${index}-c${own.length}`;
    const { run } = this.options;
    const createBody = { title: `${run} ${label} created`, description: `${run} ${label} d0` };
    const record: TodoRecord = {
      label,
      createKey: `${run}-${label}`,
      createBody,
      id: undefined,
      known: ABSENT,
      pending: { op: 'create', result: { present: true, ...createBody, version: 1 } },
      createAcked: false,
      claimedOnly: false,
      neverReplayed: false,
      suspect: false,
      updates: 0,
    };
    this.records.push(record);
    own.push(record);
    this.byTitle.set(createBody.title, record);

    const outcome = await this.request(
      'create',
      `${baseUrl}/api/todos`,
      'POST',
      { 'content-type': 'application/json', 'idempotency-key': record.createKey },
      createBody,
    );
    if (this.unknown('create', outcome)) return false;
    if (outcome.kind === 'answered' && outcome.status === 201) {
      const row = asRow(outcome.body);
      if (!row || !matches({ present: true, ...createBody, version: 1 }, row, undefined)) {
        this.violation(`create ${label} acknowledged with ${describeRow(row)}`);
      }
      this.acknowledgeCreate(record, row);
      this.stats.acked.create++;
      return true;
    }
    this.violation(`create ${label}: unexpected ${describeOutcome(outcome)}`);
    record.pending = undefined; // refused: it must not exist
    return true;
  }

  private async update(baseUrl: string, record: TodoRecord): Promise<boolean> {
    const { known, id } = record;
    if (!known.present || id === undefined) return true;
    const update = record.updates++;
    const { run } = this.options;
    const content = {
      title: `${run} ${record.label} u${update}`,
      description: `${run} ${record.label} d${update + 1}`,
    };
    this.byTitle.set(content.title, record);
    const result: State = { present: true, ...content, version: known.version + 1 };
    record.pending = { op: 'update', result };

    const outcome = await this.request(
      'update',
      `${baseUrl}/api/todos/${id}`,
      'PATCH',
      { 'content-type': 'application/merge-patch+json', 'if-match': `"${known.version}"` },
      content,
    );
    if (this.unknown('update', outcome)) return false;
    record.pending = undefined;
    if (outcome.kind === 'answered' && outcome.status === 200) {
      const row = asRow(outcome.body);
      if (!matches(result, row, id)) {
        this.violation(`update ${record.label} acknowledged with ${describeRow(row)}`);
      }
      record.known = row ? stateOf(row) : result;
      this.stats.acked.update++;
      return true;
    }
    // 412/404 would mean the server lost or invented a version of a todo only we write.
    this.violation(
      `update ${record.label} v${known.version}: unexpected ${describeOutcome(outcome)}`,
    );
    record.suspect = true;
    return true;
  }

  private async remove(baseUrl: string, record: TodoRecord): Promise<boolean> {
    const { known, id } = record;
    if (!known.present || id === undefined) return true;
    record.pending = { op: 'delete', result: ABSENT };
    const outcome = await this.request('delete', `${baseUrl}/api/todos/${id}`, 'DELETE', {
      'if-match': `"${known.version}"`,
    });
    if (this.unknown('delete', outcome)) return false;
    record.pending = undefined;
    if (outcome.kind === 'answered' && outcome.status === 204) {
      record.known = ABSENT;
      this.stats.acked.delete++;
      return true;
    }
    this.violation(
      `delete ${record.label} v${known.version}: unexpected ${describeOutcome(outcome)}`,
    );
    record.suspect = true;
    return true;
  }

  private acknowledgeCreate(record: TodoRecord, row: Row | undefined): void {
    record.pending = undefined;
    record.createAcked = true;
    record.known = { present: true, ...record.createBody, version: 1 };
    if (row) {
      record.id = row.id;
      this.byId.set(row.id, record);
    }
  }

  /**
   * After a recovery: replay about half of the creates whose answer was lost, with the same key
   * and body (the rest are never replayed: they must exist at most once). A replay must return
   * the stored answer if the create committed, or create it now — never a second todo. Also
   * replay a few acknowledged creates: they must come back as replays of the same todo.
   */
  async replayCreates(baseUrl: string, ackedReplays = 4): Promise<void> {
    const lost = this.shuffled(
      this.records.filter((r) => r.pending?.op === 'create' && !r.neverReplayed),
    );
    const replayNow = new Set(lost.filter((_record, index) => index % 2 === 0));
    for (const record of lost) if (!replayNow.has(record)) record.neverReplayed = true;

    await eachLimited([...replayNow], this.options.verifyConcurrency, async (record) => {
      this.stats.replays.inFlight++;
      const outcome = await this.send(
        `${baseUrl}/api/todos`,
        'POST',
        { 'content-type': 'application/json', 'idempotency-key': record.createKey },
        record.createBody,
      );
      if (outcome.kind === 'answered' && outcome.status === 201) {
        const row = asRow(outcome.body);
        if (!row || !matches({ present: true, ...record.createBody, version: 1 }, row, undefined)) {
          this.violation(`replayed create ${record.label} answered ${describeRow(row)}`);
        }
        if (outcome.headers.get('idempotent-replayed') === 'true') this.stats.replays.landed++;
        else this.stats.replays.fresh++;
        this.acknowledgeCreate(record, row);
      } else if (
        outcome.kind === 'answered' &&
        outcome.status === 409 &&
        describeOutcome(outcome) === '409 idempotency-in-flight'
      ) {
        // The key's claim committed before the crash but its create did not (lease not expired).
        this.stats.replays.claimedOnly++;
        record.pending = undefined;
        record.claimedOnly = true;
      } else {
        this.violation(`replayed create ${record.label}: unexpected ${describeOutcome(outcome)}`);
      }
    });

    const acked = this.shuffled(this.records.filter((r) => r.createAcked && r.id !== undefined));
    for (const record of acked.slice(0, ackedReplays)) {
      this.stats.replays.acked++;
      const outcome = await this.send(
        `${baseUrl}/api/todos`,
        'POST',
        { 'content-type': 'application/json', 'idempotency-key': record.createKey },
        record.createBody,
      );
      const row = outcome.kind === 'answered' ? asRow(outcome.body) : undefined;
      if (
        outcome.kind !== 'answered' ||
        outcome.status !== 201 ||
        outcome.headers.get('idempotent-replayed') !== 'true' ||
        row?.id !== record.id
      ) {
        this.violation(
          `replay of acknowledged create ${record.label} (${record.id ?? '?'}): ${describeOutcome(outcome)} ${describeRow(row)}`,
        );
      }
    }
  }

  /**
   * After a recovery, with nothing in flight: read every todo whose last write is pending (or
   * that the server contradicted) and check it is the known state or the pending result. What
   * is read now is committed, so it becomes the new known state.
   */
  async resolvePending(baseUrl: string): Promise<void> {
    const unresolved = this.records.filter(
      (r) =>
        r.id !== undefined && (r.suspect || (r.pending !== undefined && r.pending.op !== 'create')),
    );
    await eachLimited(unresolved, this.options.verifyConcurrency, async (record) => {
      const outcome = await this.send(`${baseUrl}/api/todos/${record.id ?? ''}`, 'GET');
      if (outcome.kind !== 'answered' || (outcome.status !== 200 && outcome.status !== 404)) {
        this.violation(`re-reading ${record.label}: ${describeOutcome(outcome)}`);
        return;
      }
      const row = outcome.status === 200 ? asRow(outcome.body) : undefined;
      const verdict = judge(record, row);
      if (verdict !== 'ok') {
        this.stats.midRun[verdict]++;
        this.violation(
          `after recovery ${record.label} is ${describeRow(row)}, expected ${expectation(record)}`,
        );
      } else if (record.pending) {
        if (matches(record.pending.result, row, record.id)) this.stats.resolved.landed++;
        else this.stats.resolved.notLanded++;
      }
      record.known = row ? stateOf(row) : ABSENT;
      record.pending = undefined;
      record.suspect = false;
    });
  }

  /**
   * Checks a complete set of stored todos against every record: each record has at most one row
   * (found by id, or by any title ever sent for it: titles are unique), and that row, or its
   * absence, is what `judge` allows. Rows that belong to no record are unexplained.
   */
  verifyRows(rows: readonly Row[], where: string): Tally {
    const tally: Tally = { missing: 0, wrong: 0, duplicates: 0, unexplained: 0 };
    const rowsOf = new Map<TodoRecord, Row[]>();
    for (const row of rows) {
      const record = this.byId.get(row.id) ?? this.byTitle.get(row.title);
      if (!record) {
        tally.unexplained++;
        this.violation(`${where}: row ${describeRow(row)} was never written by the harness`);
        continue;
      }
      const list = rowsOf.get(record) ?? [];
      list.push(row);
      rowsOf.set(record, list);
    }
    for (const record of this.records) {
      const found = rowsOf.get(record) ?? [];
      if (found.length > 1) {
        tally.duplicates++;
        this.violation(
          `${where}: ${record.label} is stored ${found.length} times: ${found.map(describeRow).join(', ')}`,
        );
      }
      const verdict = judge(record, found[0]);
      if (verdict !== 'ok') {
        tally[verdict]++;
        this.violation(
          `${where}: ${record.label} is ${describeRow(found[0])}, expected ${expectation(record)}`,
        );
      }
    }
    return tally;
  }

  /** Reads every todo whose id is known, one by one, through the API. */
  async verifyById(baseUrl: string): Promise<{ missing: number; wrong: number }> {
    const tally = { missing: 0, wrong: 0 };
    const known = this.records.filter((record) => record.id !== undefined);
    await eachLimited(known, this.options.verifyConcurrency, async (record) => {
      const outcome = await this.send(`${baseUrl}/api/todos/${record.id ?? ''}`, 'GET');
      if (outcome.kind !== 'answered' || (outcome.status !== 200 && outcome.status !== 404)) {
        this.violation(`GET ${record.label}: ${describeOutcome(outcome)}`);
        return;
      }
      const row = outcome.status === 200 ? asRow(outcome.body) : undefined;
      const verdict = judge(record, row);
      if (verdict !== 'ok') {
        tally[verdict]++;
        this.violation(
          `API by id: ${record.label} is ${describeRow(row)}, expected ${expectation(record)}`,
        );
      }
    });
    return tally;
  }

  /**
   * The change and its replay record commit together: an acknowledged create has its stored
   * 201; a create nobody learned the id of exists if and only if its record does; a claim-only
   * key has no todo. Returns the number of keys that break this.
   */
  verifyIdempotencyKeys(rows: readonly Row[], keyRows: readonly KeyRow[]): number {
    const keys = new Map(keyRows.map((row) => [row.key, row]));
    const rowIds = new Set(rows.map((row) => row.id));
    const rowTitles = new Map(rows.map((row) => [row.title, row.id]));
    let problems = 0;
    for (const record of this.records) {
      const key = keys.get(record.createKey);
      const storedId =
        key?.status_code === 201 ? asRow(JSON.parse(key.body ?? 'null'))?.id : undefined;
      let problem: string | undefined;
      if (record.createAcked) {
        if (storedId === undefined || storedId !== record.id) problem = 'no stored 201 for it';
      } else if (record.claimedOnly) {
        if (key === undefined || key.status_code !== null) problem = 'its claim is gone';
        else if (rowTitles.has(record.createBody.title)) problem = 'claim only, yet created';
      } else {
        const createdId = rowTitles.get(record.createBody.title);
        if (createdId !== storedId) {
          problem = `todo ${createdId ?? 'absent'} but stored answer ${storedId ?? 'absent'}`;
        } else if (storedId !== undefined && !rowIds.has(storedId)) {
          problem = 'stored answer names a missing todo';
        }
      }
      if (problem !== undefined) {
        problems++;
        this.violation(`idempotency key of ${record.label}: ${problem}`);
      }
    }
    return problems;
  }

  /** One line of figures for the test log. */
  summary(): string {
    const { stats } = this;
    const outcomes = [...stats.outcomes]
      .sort((a, b) => b[1] - a[1])
      .map(([key, count]) => `${key}×${count}`)
      .join(', ');
    return (
      `acked ${perOp(stats.acked)} (sent ${perOp(stats.sent)}), unknown ${perOp(stats.unknown)}` +
      ` | outcomes: ${outcomes}` +
      ` | after recovery landed=${stats.resolved.landed} not=${stats.resolved.notLanded}` +
      ` | replays: lost creates=${stats.replays.inFlight} (landed=${stats.replays.landed}` +
      ` fresh=${stats.replays.fresh} claim-only=${stats.replays.claimedOnly}),` +
      ` acked creates=${stats.replays.acked}` +
      ` | mid-run missing=${stats.midRun.missing} wrong=${stats.midRun.wrong}`
    );
  }
}

/** Every todo of the owner, page by page through `Link: rel="next"`. */
export async function listAll(baseUrl: string, timeoutMs: number, maxPages = 1000): Promise<Row[]> {
  const rows: Row[] = [];
  let next: string | undefined = `${baseUrl}/api/todos?limit=200`;
  for (let page = 0; next !== undefined; page++) {
    if (page >= maxPages) throw new Error('listing did not end');
    const response: Response = await fetch(next, { signal: AbortSignal.timeout(timeoutMs) });
    if (response.status !== 200) {
      throw new Error(`listing answered ${response.status}: ${await response.text()}`);
    }
    const body = (await response.json()) as unknown[];
    for (const item of body) {
      const row = asRow(item);
      if (!row) throw new Error(`unreadable todo in the list: ${JSON.stringify(item)}`);
      rows.push(row);
    }
    next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1];
  }
  return rows;
}
