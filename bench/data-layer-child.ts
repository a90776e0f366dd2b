/**
 * The child of `measureDataLayer` (`data-layer.ts`, which says what it measures): runs the mode
 * the environment names on `DATABASE_URL` and prints one JSON line, a `DataLayerResult`.
 */
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { v7 as uuidv7 } from 'uuid';
import { ANONYMOUS_OWNER_ID } from '../src/auth/owner.js';
import { createDatabase } from '../src/db/create-database.js';
import type { Database, Db } from '../src/db/database.js';
import { createCursorCodec } from '../src/todos/todo-cursor.js';
import { ftsQuery } from '../src/todos/todo-search.js';
import type { TodoPatch, TodoWrite } from '../src/todos/todo.schemas.js';
import { createTodosService, type RequestContext } from '../src/todos/todos.service.js';
import {
  DATA_LAYER_ENV,
  type DataLayerRead,
  type DataLayerReadKey,
  type DataLayerResult,
  type DataLayerWrite,
  type DataLayerWriteKey,
} from './data-layer.js';
import { SEARCH_WORD } from './data.js';
import { createScenarios, type RequestSpec } from './scenarios.js';

type Scenarios = ReturnType<typeof createScenarios>;

const CONTEXT: RequestContext = { ownerId: ANONYMOUS_OWNER_ID, baseUrl: 'http://127.0.0.1:3000' };

const service = createTodosService({
  cursors: createCursorCodec('bench-data-layer-secret-0123456789abcdef'),
  now: () => new Date(),
  newId: uuidv7,
  todoQuota: Number.MAX_SAFE_INTEGER,
});

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

function median(values: readonly number[]): number {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** The id a scenario's request addresses: the last segment of `/api/todos/{id}`. */
const idOf = (spec: RequestSpec): string => spec.path.slice(spec.path.lastIndexOf('/') + 1);

async function measureWrites(
  database: Database,
  scenarios: Scenarios,
  options: { duration: number; repetitions: number; inFlight: number },
): Promise<DataLayerWrite[]> {
  // What each route calls once the request is parsed and validated.
  const write: Record<DataLayerWriteKey, (trx: Db, id: string, body: unknown) => Promise<unknown>> =
    {
      post: (trx, _id, body) => service.create(trx, CONTEXT, body as TodoWrite),
      patch: (trx, id, body) => service.patch(trx, CONTEXT, id, body as TodoPatch, undefined),
      put: (trx, id, body) => service.replace(trx, CONTEXT, id, body as TodoWrite, undefined),
    };

  const results: DataLayerWrite[] = [];
  for (const key of ['post', 'patch', 'put'] as const) {
    const rates: number[] = [];
    const latencies: number[] = [];
    // One unmeasured second first, as the HTTP scenarios have their warm-up.
    for (let repetition = -1; repetition < options.repetitions; repetition++) {
      const measured = repetition >= 0;
      const deadline = performance.now() + (measured ? options.duration : 1) * 1000;
      let done = 0;
      const started = performance.now();
      const worker = async () => {
        while (performance.now() < deadline) {
          const spec = scenarios[key].next();
          const before = performance.now();
          await database.writeTransaction((trx) =>
            write[key](trx, idOf(spec), JSON.parse(spec.body ?? '{}')),
          );
          if (measured) latencies.push(performance.now() - before);
          done++;
        }
      };
      await Promise.all(Array.from({ length: options.inFlight }, worker));
      if (measured) rates.push(done / ((performance.now() - started) / 1000));
    }
    latencies.sort((a, b) => a - b);
    results.push({
      key,
      writesPerSecond: median(rates),
      writesPerSecondMin: Math.min(...rates),
      writesPerSecondMax: Math.max(...rates),
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
    });
  }
  return results;
}

/** Calls `call` one at a time for `seconds` (after as long again unmeasured); the median call. */
async function timeCalls(
  key: DataLayerReadKey,
  seconds: number,
  call: () => Promise<unknown>,
): Promise<DataLayerRead> {
  const times: number[] = [];
  for (const measured of [false, true]) {
    const deadline = performance.now() + seconds * 1000;
    while (performance.now() < deadline) {
      const before = performance.now();
      await call();
      if (measured) times.push((performance.now() - before) * 1000);
    }
  }
  return { key, microseconds: median(times), calls: times.length };
}

async function measureReads(
  database: Database,
  scenarios: Scenarios,
  seconds: number,
): Promise<DataLayerRead[]> {
  const reads = [
    await timeCalls('get', seconds, () =>
      service.get(database.db, CONTEXT, idOf(scenarios.get.next())),
    ),
    await timeCalls('search', seconds, () =>
      service.list(database.db, CONTEXT, { q: SEARCH_WORD, limit: 50 }, { count: false }),
    ),
  ];
  const match = ftsQuery(SEARCH_WORD);
  if (database.dialect === 'sqlite' && match !== undefined) {
    const matches = sql`select count(*) from todos_fts where todos_fts match ${match}`;
    reads.push(await timeCalls('search-matches', seconds, () => matches.execute(database.db)));
  }
  return reads;
}

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const mode = env(DATA_LAYER_ENV.mode);
const ids = JSON.parse(readFileSync(env(DATA_LAYER_ENV.ids), 'utf8')) as string[];
const duration = Number(env(DATA_LAYER_ENV.duration));
// Another seed than the HTTP run's: the same kinds of requests, not the same todos again.
const scenarios = createScenarios({ ids, takeDeleteId: () => undefined }, ids.length + 1);
const database = createDatabase(env('DATABASE_URL'));
try {
  const result: DataLayerResult =
    mode === 'reads'
      ? { writes: [], reads: await measureReads(database, scenarios, duration) }
      : {
          writes: await measureWrites(database, scenarios, {
            duration,
            repetitions: Number(env(DATA_LAYER_ENV.repetitions)),
            inFlight: Number(env(DATA_LAYER_ENV.inFlight)),
          }),
          reads: [],
        };
  console.log(JSON.stringify(result));
} finally {
  await database.close();
}
