/**
 * The service without HTTP: its own code from `todos.service` down (the same functions, the same
 * group commit, the same statements), called in-process with no server, framework or JSON
 * parsing in front, by a child (`data-layer-child.ts`) on the server core with the service's
 * Node options:
 *
 * - `reads`, before the service starts (the seeded rows only): GET one todo, the search `q` of
 *   the search scenario, and of that search the part no plan can skip, reading its match list
 *   from the full-text index (SQLite);
 * - `writes`, after the scenarios: the POST, PATCH and PUT scenarios' own requests, with as many
 *   writes in flight as the load has connections.
 *
 * Over HTTP the service cannot be faster than this, so it tells whether a target is within
 * reach on the machine at all.
 */
import { runNodeScript, SERVICE_NODE_ARGS } from './processes.js';

export type DataLayerWriteKey = 'post' | 'patch' | 'put';
export type DataLayerReadKey = 'get' | 'search' | 'search-matches';

export interface DataLayerWrite {
  readonly key: DataLayerWriteKey;
  /** Median of the repetitions' writes per second, and their spread. */
  readonly writesPerSecond: number;
  readonly writesPerSecondMin: number;
  readonly writesPerSecondMax: number;
  /** From the call to its settled promise, over every write of every repetition, ms. */
  readonly p50: number;
  readonly p99: number;
}

export interface DataLayerRead {
  readonly key: DataLayerReadKey;
  /** Median time of one call, one call at a time, µs. */
  readonly microseconds: number;
  readonly calls: number;
}

export interface DataLayerResult {
  readonly writes: DataLayerWrite[];
  readonly reads: DataLayerRead[];
}

/** How `measureDataLayer` tells the child what to do. */
export const DATA_LAYER_ENV = {
  mode: 'BENCH_DATA_LAYER_MODE',
  ids: 'BENCH_DATA_LAYER_IDS',
  duration: 'BENCH_DATA_LAYER_DURATION',
  repetitions: 'BENCH_DATA_LAYER_REPETITIONS',
  inFlight: 'BENCH_DATA_LAYER_IN_FLIGHT',
} as const;

export async function measureDataLayer(options: {
  readonly mode: 'reads' | 'writes';
  readonly databaseUrl: string;
  /** A JSON array of the seeded ids, which the requests address as the scenarios' do. */
  readonly idsPath: string;
  /** Seconds per write repetition, or per read (after as long unmeasured). */
  readonly duration: number;
  readonly repetitions: number;
  readonly inFlight: number;
  readonly pin: boolean;
}): Promise<DataLayerResult> {
  const output = await runNodeScript({
    script: 'bench/data-layer-child.ts',
    pin: options.pin,
    nodeArgs: SERVICE_NODE_ARGS,
    env: {
      DATABASE_URL: options.databaseUrl,
      [DATA_LAYER_ENV.mode]: options.mode,
      [DATA_LAYER_ENV.ids]: options.idsPath,
      [DATA_LAYER_ENV.duration]: String(options.duration),
      [DATA_LAYER_ENV.repetitions]: String(options.repetitions),
      [DATA_LAYER_ENV.inFlight]: String(options.inFlight),
    },
  });
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as DataLayerResult;
}
