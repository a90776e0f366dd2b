/**
 * Preloaded into the soak test's service child, which is started as
 * `node --expose-gc --import tsx --import ./soak/gc-probe.ts src/server.ts` with an IPC channel:
 * the service itself has no memory endpoint and needs none. On `{ type: 'sample' }` it reports
 * the event-loop delay since the previous sample, then collects garbage (twice: the second pass
 * frees what the first one's finalizers released) and reports the heap, the RSS, the open file
 * descriptors and the active handles. On `{ type: 'snapshot' }` it writes a heap snapshot.
 *
 * Without an IPC channel (a normal start) it does nothing.
 */
import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics, writeHeapSnapshot } from 'node:v8';

export type ProbeRequest =
  | { readonly id: number; readonly type: 'sample' }
  | { readonly id: number; readonly type: 'snapshot'; readonly path: string };

export interface ProbeSample {
  /** After two full collections, bytes. */
  readonly heapUsed: number;
  readonly heapTotal: number;
  readonly external: number;
  readonly arrayBuffers: number;
  readonly rss: number;
  readonly heapSizeLimit: number;
  readonly detachedContexts: number;
  /** Open file descriptors, from /proc/self/fd (the listing's own descriptor excluded). */
  readonly fds: number;
  /** `process.getActiveResourcesInfo().length`: sockets, timers, handles keeping the loop alive. */
  readonly activeResources: number;
  /** Event-loop delay since the previous sample (before this sample's GC), ms. */
  readonly eventLoopDelayP99: number;
  readonly eventLoopDelayMax: number;
  /** How long the two collections took, ms. */
  readonly gcMs: number;
}

export type ProbeReply =
  | {
      readonly id: number;
      readonly ok: true;
      readonly sample?: ProbeSample;
      readonly file?: string;
    }
  | { readonly id: number; readonly ok: false; readonly error: string };

function openFds(): number {
  try {
    return readdirSync('/proc/self/fd').length - 1;
  } catch {
    return Number.NaN;
  }
}

/** Sampling interval of the event-loop delay histogram, ms. */
const RESOLUTION_MS = 10;

function sample(delay: ReturnType<typeof monitorEventLoopDelay>): ProbeSample {
  // The histogram records the whole interval between two ticks of its timer: the delay is what
  // exceeds the interval (an idle loop reads ≈ 10 ms at a 10 ms resolution).
  const eventLoopDelayP99 = Math.max(0, delay.percentile(99) / 1e6 - RESOLUTION_MS);
  const eventLoopDelayMax = Math.max(0, delay.max / 1e6 - RESOLUTION_MS);
  const collect = globalThis.gc;
  if (!collect) throw new Error('start the service with --expose-gc');
  const started = performance.now();
  collect();
  collect();
  const gcMs = performance.now() - started;
  const memory = process.memoryUsage();
  const heap = getHeapStatistics();
  const probe: ProbeSample = {
    heapUsed: memory.heapUsed,
    heapTotal: memory.heapTotal,
    external: memory.external,
    arrayBuffers: memory.arrayBuffers,
    rss: memory.rss,
    heapSizeLimit: heap.heap_size_limit,
    detachedContexts: heap.number_of_detached_contexts,
    fds: openFds(),
    activeResources: process.getActiveResourcesInfo().length,
    eventLoopDelayP99,
    eventLoopDelayMax,
    gcMs,
  };
  // After the collections, so that their pause is not counted as the next window's delay.
  delay.reset();
  return probe;
}

function answer(
  request: ProbeRequest,
  delay: ReturnType<typeof monitorEventLoopDelay>,
): ProbeReply {
  try {
    if (request.type === 'sample') return { id: request.id, ok: true, sample: sample(delay) };
    return { id: request.id, ok: true, file: writeHeapSnapshot(request.path) };
  } catch (error) {
    return { id: request.id, ok: false, error: (error as Error).message };
  }
}

if (process.send) {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  process.on('message', (message: ProbeRequest) => {
    process.send?.(answer(message, delay));
  });
  // The channel must not keep the service alive once it has closed everything else.
  process.channel?.unref();
}
