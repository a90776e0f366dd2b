/**
 * "No acknowledged write lost" (RELIABILITY.md §4.3): 16 HTTP clients create, update and delete
 * todos against a real server process on a SQLite file on disk; the server is SIGKILLed at a
 * random moment, restarted on the same file, and the load continues; after the last restart
 * every acknowledged write is checked through the API and directly in the database file.
 *
 * The harness knows each write's identity before the answer (unique title, `Idempotency-Key` on
 * creates), and a write counts as acknowledged only when its 2xx answer arrived whole. A write
 * whose answer never came (in flight at the kill, timed out, 5xx) is "pending": either its
 * result or the last acknowledged state may survive — nothing older, nothing else.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makeDiskTempDir } from './helpers/disk-temp-dir.js';
import { spawnServer, type ServerProcess } from './helpers/spawn-server.js';

const WORKERS = 16;
const CYCLES = 4;
const KILL_AFTER_MIN_MS = 300;
const KILL_AFTER_MAX_MS = 1500;
const REQUEST_TIMEOUT_MS = 5000;
/** Bounds of one cycle's load: the kill normally ends it long before either is reached. */
const MAX_OPS_PER_WORKER_PER_CYCLE = 3000;
const MAX_LOAD_MS = 4000;
/**
 * Restart to ready. Most of it is Node and tsx loading the code (1–3 s alone); on this 2-core
 * machine with the rest of the suite running beside it, restarts were measured up to ~7 s.
 */
const RESTART_BUDGET_MS = 10_000;
/** No new cycle starts after this much time, so the whole test stays far below its timeout. */
const CYCLES_BUDGET_MS = 40_000;
const TEST_TIMEOUT_MS = 60_000;
const ACKED_CREATE_REPLAYS_PER_RESTART = 4;
const VERIFY_CONCURRENCY = 16;
const MAX_LIST_PAGES = 1000;

type Op = 'create' | 'update' | 'delete';
const OPS: readonly Op[] = ['create', 'update', 'delete'];

/** What the harness expects of one todo: absent, or present with this content and version. */
type State =
  | { readonly present: false }
  | {
      readonly present: true;
      readonly title: string;
      readonly description: string;
      readonly version: number;
    };
const ABSENT: State = { present: false };

/** A todo as stored: from the API or straight from the file. */
interface Row {
  readonly id: string;
  readonly title: string;
  readonly description: string | null;
  readonly version: number;
}

interface TodoRecord {
  readonly label: string;
  readonly createKey: string;
  readonly createBody: { readonly title: string; readonly description: string };
  id: string | undefined;
  /** The last acknowledged state, or one observed after a restart (then durable). */
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

/** Deterministic choices (which op, which todo, kill delays) from a printed seed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const SEED = Number(process.env.DURABILITY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const random = mulberry32(SEED);
const RUN = `k9-${SEED.toString(36)}`;

function pick<T>(items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}

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

/** Runs `task` over `items`, at most `limit` at a time. */
async function eachLimited<T>(
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

type Outcome =
  | { readonly kind: 'answered'; readonly status: number; readonly headers: Headers; body: unknown }
  | { readonly kind: 'failed'; readonly error: string };

/** One HTTP request; any transport failure (refused, reset, timeout, cut body) is `failed`. */
async function send(
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: unknown,
): Promise<Outcome> {
  try {
    const response = await fetch(url, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    return {
      kind: 'answered',
      status: response.status,
      headers: response.headers,
      body: text === '' ? undefined : (JSON.parse(text) as unknown),
    };
  } catch (error) {
    return { kind: 'failed', error: String(error) };
  }
}

function asRow(body: unknown): Row | undefined {
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

const counter = (): Record<Op, number> => ({ create: 0, update: 0, delete: 0 });

const stats = {
  sent: counter(),
  acked: counter(),
  unknown: counter(),
  answered5xx: 0,
  inFlightAtKill: [] as number[],
  restartMs: [] as number[],
  replays: { inFlight: 0, landed: 0, fresh: 0, claimedOnly: 0, acked: 0 },
  resolved: { landed: 0, notLanded: 0 },
  midRun: { missing: 0, wrong: 0 },
};
const violations: string[] = [];

function violation(message: string): void {
  if (violations.length < 200) violations.push(message);
}

const records: TodoRecord[] = [];
const byTitle = new Map<string, TodoRecord>();
const byId = new Map<string, TodoRecord>();
let inFlight = 0;

function usable(record: TodoRecord): boolean {
  return (
    record.known.present &&
    record.id !== undefined &&
    record.pending === undefined &&
    !record.suspect
  );
}

class Worker {
  readonly records: TodoRecord[] = [];
  private creates = 0;

  constructor(private readonly index: number) {}

  async run(baseUrl: string, control: { stopped: boolean; readonly until: number }) {
    for (let ops = 0; ops < MAX_OPS_PER_WORKER_PER_CYCLE; ops++) {
      if (control.stopped || Date.now() > control.until) return;
      const candidates = this.records.filter(usable);
      const roll = random();
      if (candidates.length < 3 || roll < 0.4) await this.create(baseUrl);
      else if (roll < 0.85) await this.update(baseUrl, pick(candidates));
      else await this.remove(baseUrl, pick(candidates));
    }
  }

  private async request(
    op: Op,
    url: string,
    method: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<Outcome> {
    stats.sent[op]++;
    inFlight++;
    try {
      return await send(url, method, headers, body);
    } finally {
      inFlight--;
    }
  }

  /** A write whose answer never came whole (or was a 5xx): its outcome is unknown. */
  private unknown(op: Op, outcome: Outcome): boolean {
    if (outcome.kind === 'failed' || outcome.status >= 500) {
      if (outcome.kind === 'answered') stats.answered5xx++;
      stats.unknown[op]++;
      return true;
    }
    return false;
  }

  private async create(baseUrl: string): Promise<void> {
    const label = `w${this.index}-c${this.creates++}`;
    const createBody = { title: `${RUN} ${label} created`, description: `${RUN} ${label} d0` };
    const record: TodoRecord = {
      label,
      createKey: `${RUN}-${label}`,
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
    records.push(record);
    this.records.push(record);
    byTitle.set(createBody.title, record);

    const outcome = await this.request(
      'create',
      `${baseUrl}/api/todos`,
      'POST',
      { 'content-type': 'application/json', 'idempotency-key': record.createKey },
      createBody,
    );
    if (this.unknown('create', outcome)) return;
    if (outcome.kind === 'answered' && outcome.status === 201) {
      const row = asRow(outcome.body);
      if (!row || !matches({ present: true, ...createBody, version: 1 }, row, undefined)) {
        violation(`create ${label} acknowledged with ${describeRow(row)}`);
      }
      acknowledgeCreate(record, row);
      stats.acked.create++;
      return;
    }
    violation(`create ${label}: unexpected ${describeOutcome(outcome)}`);
    record.pending = undefined; // refused: it must not exist
  }

  private async update(baseUrl: string, record: TodoRecord): Promise<void> {
    const { known, id } = record;
    if (!known.present || id === undefined) return;
    const update = record.updates++;
    const content = {
      title: `${RUN} ${record.label} u${update}`,
      description: `${RUN} ${record.label} d${update + 1}`,
    };
    byTitle.set(content.title, record);
    const result: State = { present: true, ...content, version: known.version + 1 };
    record.pending = { op: 'update', result };

    const outcome = await this.request(
      'update',
      `${baseUrl}/api/todos/${id}`,
      'PATCH',
      { 'content-type': 'application/merge-patch+json', 'if-match': `"${known.version}"` },
      content,
    );
    if (this.unknown('update', outcome)) return;
    record.pending = undefined;
    if (outcome.kind === 'answered' && outcome.status === 200) {
      const row = asRow(outcome.body);
      if (!matches(result, row, id)) {
        violation(`update ${record.label} acknowledged with ${describeRow(row)}`);
      }
      record.known = row ? stateOf(row) : result;
      stats.acked.update++;
      return;
    }
    // 412/404 would mean the server lost or invented a version of a todo only we write.
    violation(`update ${record.label} v${known.version}: unexpected ${describeOutcome(outcome)}`);
    record.suspect = true;
  }

  private async remove(baseUrl: string, record: TodoRecord): Promise<void> {
    const { known, id } = record;
    if (!known.present || id === undefined) return;
    record.pending = { op: 'delete', result: ABSENT };
    const outcome = await this.request('delete', `${baseUrl}/api/todos/${id}`, 'DELETE', {
      'if-match': `"${known.version}"`,
    });
    if (this.unknown('delete', outcome)) return;
    record.pending = undefined;
    if (outcome.kind === 'answered' && outcome.status === 204) {
      record.known = ABSENT;
      stats.acked.delete++;
      return;
    }
    violation(`delete ${record.label} v${known.version}: unexpected ${describeOutcome(outcome)}`);
    record.suspect = true;
  }
}

function describeOutcome(outcome: Outcome): string {
  if (outcome.kind === 'failed') return outcome.error;
  const code = (outcome.body as { code?: unknown } | undefined)?.code;
  return `${outcome.status}${typeof code === 'string' ? ` ${code}` : ''}`;
}

function acknowledgeCreate(record: TodoRecord, row: Row | undefined): void {
  record.pending = undefined;
  record.createAcked = true;
  record.known = { present: true, ...record.createBody, version: 1 };
  if (row) {
    record.id = row.id;
    byId.set(row.id, record);
  }
}

/**
 * After a restart: replay about half of the creates whose answer was lost, with the same key
 * and body (the rest are never replayed: they must exist at most once). A replay must return
 * the stored answer if the create committed, or create it now — never a second todo. Also
 * replay a few acknowledged creates: they must come back as replays of the same todo.
 */
async function replayCreates(baseUrl: string): Promise<void> {
  const lost = shuffled(records.filter((r) => r.pending?.op === 'create' && !r.neverReplayed));
  const replayNow = lost.filter((_record, index) => index % 2 === 0);
  for (const record of lost) if (!replayNow.includes(record)) record.neverReplayed = true;

  for (const record of replayNow) {
    stats.replays.inFlight++;
    const outcome = await send(
      `${baseUrl}/api/todos`,
      'POST',
      { 'content-type': 'application/json', 'idempotency-key': record.createKey },
      record.createBody,
    );
    if (outcome.kind === 'answered' && outcome.status === 201) {
      const row = asRow(outcome.body);
      if (!row || !matches({ present: true, ...record.createBody, version: 1 }, row, undefined)) {
        violation(`replayed create ${record.label} answered ${describeRow(row)}`);
      }
      if (outcome.headers.get('idempotent-replayed') === 'true') stats.replays.landed++;
      else stats.replays.fresh++;
      acknowledgeCreate(record, row);
    } else if (
      outcome.kind === 'answered' &&
      outcome.status === 409 &&
      describeOutcome(outcome) === '409 idempotency-in-flight'
    ) {
      // The key's claim committed before the kill but its create did not (lease not expired).
      stats.replays.claimedOnly++;
      record.pending = undefined;
      record.claimedOnly = true;
    } else {
      violation(`replayed create ${record.label}: unexpected ${describeOutcome(outcome)}`);
    }
  }

  const acked = shuffled(records.filter((r) => r.createAcked && r.id !== undefined));
  for (const record of acked.slice(0, ACKED_CREATE_REPLAYS_PER_RESTART)) {
    stats.replays.acked++;
    const outcome = await send(
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
      violation(
        `replay of acknowledged create ${record.label} (${record.id ?? '?'}): ${describeOutcome(outcome)} ${describeRow(row)}`,
      );
    }
  }
}

/**
 * After a restart, nothing is in flight any more: read every todo whose last write is pending
 * (or that the server contradicted) and check it is the known state or the pending result.
 * What is read now is committed, so it becomes the new known state.
 */
async function resolvePending(baseUrl: string): Promise<void> {
  const unresolved = records.filter(
    (r) =>
      r.id !== undefined && (r.suspect || (r.pending !== undefined && r.pending.op !== 'create')),
  );
  await eachLimited(unresolved, VERIFY_CONCURRENCY, async (record) => {
    const outcome = await send(`${baseUrl}/api/todos/${record.id ?? ''}`, 'GET');
    if (outcome.kind !== 'answered' || (outcome.status !== 200 && outcome.status !== 404)) {
      violation(`re-reading ${record.label}: ${describeOutcome(outcome)}`);
      return;
    }
    const row = outcome.status === 200 ? asRow(outcome.body) : undefined;
    const verdict = judge(record, row);
    if (verdict !== 'ok') {
      stats.midRun[verdict]++;
      violation(
        `after restart ${record.label} is ${describeRow(row)}, expected ${expectation(record)}`,
      );
    } else if (record.pending) {
      if (matches(record.pending.result, row, record.id)) stats.resolved.landed++;
      else stats.resolved.notLanded++;
    }
    record.known = row ? stateOf(row) : ABSENT;
    record.pending = undefined;
    record.suspect = false;
  });
}

interface Tally {
  missing: number;
  wrong: number;
  duplicates: number;
  unexplained: number;
}

/**
 * Checks a complete set of stored todos against every record: each record has at most one row
 * (found by id, or by any title ever sent for it: titles are unique), and that row, or its
 * absence, is what `judge` allows. Rows that belong to no record are unexplained.
 */
function verifyRows(rows: readonly Row[], where: string): Tally {
  const tally: Tally = { missing: 0, wrong: 0, duplicates: 0, unexplained: 0 };
  const rowsOf = new Map<TodoRecord, Row[]>();
  for (const row of rows) {
    const record = byId.get(row.id) ?? byTitle.get(row.title);
    if (!record) {
      tally.unexplained++;
      violation(`${where}: row ${describeRow(row)} was never written by the harness`);
      continue;
    }
    const list = rowsOf.get(record) ?? [];
    list.push(row);
    rowsOf.set(record, list);
  }
  for (const record of records) {
    const found = rowsOf.get(record) ?? [];
    if (found.length > 1) {
      tally.duplicates++;
      violation(
        `${where}: ${record.label} is stored ${found.length} times: ${found.map(describeRow).join(', ')}`,
      );
    }
    const verdict = judge(record, found[0]);
    if (verdict !== 'ok') {
      tally[verdict]++;
      violation(
        `${where}: ${record.label} is ${describeRow(found[0])}, expected ${expectation(record)}`,
      );
    }
  }
  return tally;
}

async function listAll(baseUrl: string): Promise<Row[]> {
  const rows: Row[] = [];
  let next: string | undefined = `${baseUrl}/api/todos?limit=200`;
  for (let page = 0; next !== undefined; page++) {
    if (page >= MAX_LIST_PAGES) throw new Error('listing did not end');
    const response: Response = await fetch(next, {
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    expect(response.status).toBe(200);
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

const children: ServerProcess[] = [];
let tempDir: string | undefined;

afterAll(async () => {
  for (const child of children.splice(0)) {
    if (child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill('SIGKILL');
      await within(child.exited, 5000, 'killing the server').catch(() => undefined);
    }
  }
  if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
});

describe('durability under kill -9', () => {
  it(
    'loses no acknowledged write across repeated SIGKILLs of the server under load',
    async () => {
      const startedAt = performance.now();
      const dir = makeDiskTempDir('todo-api-kill9-');
      tempDir = dir.path;
      const databasePath = join(dir.path, 'todos.db');
      const env = { DATABASE_URL: `sqlite:${databasePath}`, LOG_LEVEL: 'error' };

      /** Starts a server on the database file; returns it and its time to healthy. */
      async function start(): Promise<{ server: ServerProcess; ms: number }> {
        const began = performance.now();
        const started = await spawnServer(env, 15_000);
        children.push(started);
        return { server: started, ms: Math.round(performance.now() - began) };
      }

      const workers = Array.from({ length: WORKERS }, (_unused, index) => new Worker(index));
      let { server } = await start();
      let cycles = 0;

      while (cycles < CYCLES && performance.now() - startedAt < CYCLES_BUDGET_MS) {
        const control = { stopped: false, until: Date.now() + MAX_LOAD_MS };
        const baseUrl = server.baseUrl;
        const load = Promise.all(workers.map((worker) => worker.run(baseUrl, control)));
        await sleep(KILL_AFTER_MIN_MS + random() * (KILL_AFTER_MAX_MS - KILL_AFTER_MIN_MS));

        if (server.child.exitCode !== null || server.child.signalCode !== null) {
          throw new Error(`the server died before the kill:\n${server.output()}`);
        }
        stats.inFlightAtKill.push(inFlight);
        server.child.kill('SIGKILL');
        control.stopped = true;
        await within(server.exited, 5000, 'the SIGKILLed server exiting');
        expect(server.child.signalCode).toBe('SIGKILL');
        await within(load, REQUEST_TIMEOUT_MS + 5000, 'the workers stopping');
        cycles++;

        const restarted = await start();
        server = restarted.server;
        stats.restartMs.push(restarted.ms);
        await replayCreates(server.baseUrl);
        await resolvePending(server.baseUrl);
      }

      // Through the API: every page of the list, then every todo whose id we know, by id.
      const listed = await listAll(server.baseUrl);
      expect(new Set(listed.map((row) => row.id)).size).toBe(listed.length);
      const api = verifyRows(listed, 'API list');
      const byIdTally = { missing: 0, wrong: 0 };
      const known = records.filter((record) => record.id !== undefined);
      await eachLimited(known, VERIFY_CONCURRENCY, async (record) => {
        const outcome = await send(`${server.baseUrl}/api/todos/${record.id ?? ''}`, 'GET');
        if (outcome.kind !== 'answered' || (outcome.status !== 200 && outcome.status !== 404)) {
          violation(`GET ${record.label}: ${describeOutcome(outcome)}`);
          return;
        }
        const row = outcome.status === 200 ? asRow(outcome.body) : undefined;
        const verdict = judge(record, row);
        if (verdict !== 'ok') {
          byIdTally[verdict]++;
          violation(
            `API by id: ${record.label} is ${describeRow(row)}, expected ${expectation(record)}`,
          );
        }
      });

      // Directly in the file, after a clean stop of the last server.
      expect(await within(server.stop('SIGTERM'), 15_000, 'the server stopping')).toBe(0);
      const sqlite = new SqliteDatabase(databasePath, { readonly: true, fileMustExist: true });
      let file: Tally;
      let integrity: unknown;
      let foreignKeyProblems: unknown[];
      let journalMode: unknown;
      let duplicateTitles: unknown[];
      let keyProblems = 0;
      try {
        integrity = sqlite.pragma('integrity_check', { simple: true });
        foreignKeyProblems = sqlite.pragma('foreign_key_check') as unknown[];
        journalMode = sqlite.pragma('journal_mode', { simple: true });
        const rows = sqlite
          .prepare('select id, title, description, version from todos where deleted_at is null')
          .all() as Row[];
        file = verifyRows(rows, 'file');
        duplicateTitles = sqlite
          .prepare(
            'select title, count(*) as n from todos where deleted_at is null group by title having n > 1',
          )
          .all();

        // The change and its replay record commit together: an acknowledged create has its
        // record; a create nobody learned the id of exists if and only if its record does.
        const keys = new Map(
          (
            sqlite
              .prepare('select key, status_code, body from idempotency_keys where method = ?')
              .all('POST') as { key: string; status_code: number | null; body: string | null }[]
          ).map((row) => [row.key, row]),
        );
        const rowIds = new Set(rows.map((row) => row.id));
        const rowTitles = new Map(rows.map((row) => [row.title, row.id]));
        for (const record of records) {
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
            keyProblems++;
            violation(`file: idempotency key of ${record.label}: ${problem}`);
          }
        }
      } finally {
        sqlite.close();
      }

      const seconds = ((performance.now() - startedAt) / 1000).toFixed(1);
      const perOp = (counts: Record<Op, number>) =>
        OPS.map((op) => `${op}=${counts[op]}`).join(' ');
      console.log(
        `[kill-9 durability] seed=${SEED} fs=${dir.fileSystem} cycles=${cycles} workers=${WORKERS}` +
          ` | acked ${perOp(stats.acked)} (sent ${perOp(stats.sent)})` +
          ` | in flight at kills=[${stats.inFlightAtKill.join(',')}], unknown ${perOp(stats.unknown)}` +
          `, 5xx=${stats.answered5xx}; after restart landed=${stats.resolved.landed} not=${stats.resolved.notLanded}` +
          ` | replays: lost creates=${stats.replays.inFlight} (landed=${stats.replays.landed} fresh=${stats.replays.fresh} claim-only=${stats.replays.claimedOnly}), acked creates=${stats.replays.acked}` +
          ` | restart-to-healthy ms=[${stats.restartMs.join(',')}]` +
          ` | mid-run missing=${stats.midRun.missing} wrong=${stats.midRun.wrong}` +
          `; API missing=${api.missing} wrong=${api.wrong} dup=${api.duplicates} unexplained=${api.unexplained}` +
          `, by id missing=${byIdTally.missing} wrong=${byIdTally.wrong}` +
          `; file missing=${file.missing} wrong=${file.wrong} dup=${file.duplicates} key-problems=${keyProblems}` +
          ` integrity=${String(integrity)} | violations=${violations.length} | ${seconds} s`,
      );

      expect(cycles).toBeGreaterThanOrEqual(3);
      expect(violations).toEqual([]);
      for (const tally of [api, file, stats.midRun, byIdTally]) {
        expect(tally).toMatchObject({ missing: 0, wrong: 0 });
      }
      expect(api.duplicates + file.duplicates + api.unexplained + file.unexplained).toBe(0);
      expect(duplicateTitles).toEqual([]);
      expect(integrity).toBe('ok');
      expect(foreignKeyProblems).toEqual([]);
      expect(journalMode).toBe('wal');
      for (const ms of stats.restartMs) expect(ms).toBeLessThan(RESTART_BUDGET_MS);
      // The load was real: every kind of write was acknowledged, and kills hit requests in flight.
      for (const op of OPS) expect(stats.acked[op]).toBeGreaterThan(0);
      expect(stats.inFlightAtKill.reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
    },
    TEST_TIMEOUT_MS,
  );
});
