/**
 * A small closed-loop HTTP load for fault tests: each worker keeps one keep-alive connection
 * (its own `http.Agent`, one socket) and sends one request at a time. Every request is recorded
 * with how it ended — answered, refused at connect, dropped before an answer, cut mid-answer or
 * timed out — so that a test can judge each one against the moment it injected a fault.
 */
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';

export interface LoadRequest {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * How a request ended. `refused`: the connection was never made (ECONNREFUSED); `dropped`: the
 * connection failed or closed before any byte of an answer; `cut`: the answer began but did not
 * arrive whole.
 */
export type OutcomeKind = 'answered' | 'refused' | 'dropped' | 'cut' | 'timeout';

export interface Outcome {
  readonly id: number;
  readonly worker: number;
  readonly request: LoadRequest;
  /** `performance.now()` when the request was started and when its outcome was known. */
  readonly startedAt: number;
  readonly endedAt: number;
  /** The request went out on a connection an earlier request had already used. */
  readonly reusedSocket: boolean;
  readonly kind: OutcomeKind;
  readonly status?: number;
  readonly headers?: IncomingHttpHeaders;
  readonly body?: string;
  /** The socket error's code (`ECONNRESET`, …) for outcomes other than `answered`. */
  readonly error?: string;
}

export interface LoadOptions {
  readonly baseUrl: string;
  readonly workers: number;
  /** The `seq`-th request (from 0) of worker `worker`; it may depend on earlier outcomes. */
  readonly next: (worker: number, seq: number) => LoadRequest;
  /** Every worker stops after this many requests… */
  readonly maxRequestsPerWorker: number;
  /** …or once this returns true, checked before each request. */
  readonly shouldStop: () => boolean;
  readonly requestTimeoutMs: number;
  /** Pause after a refused connection, so that a dead server is not hammered in a tight loop. */
  readonly refusedPauseMs?: number;
  readonly onOutcome?: (outcome: Outcome) => void;
}

export interface Load {
  /** Settles once every worker has stopped, with every outcome in completion order. */
  readonly done: Promise<readonly Outcome[]>;
  /** Ids of the requests started and not yet ended, at the moment of the call. */
  inFlight(): ReadonlySet<number>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function errorCode(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (typeof code === 'string') return code;
    if (typeof message === 'string') return message;
  }
  return String(error);
}

/** Sends one request over `agent` and reports how it ended; never rejects. */
function send(
  agent: Agent,
  baseUrl: string,
  load: LoadRequest,
  timeoutMs: number,
): Promise<Omit<Outcome, 'id' | 'worker' | 'request' | 'startedAt'>> {
  return new Promise((resolve) => {
    const payload = load.body === undefined ? undefined : JSON.stringify(load.body);
    const headers: Record<string, string> = { accept: 'application/json', ...load.headers };
    if (payload !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = String(Buffer.byteLength(payload));
    }
    let settled = false;
    const request = httpRequest(new URL(load.path, baseUrl), {
      method: load.method,
      agent,
      headers,
    });
    const finish = (
      outcome: Omit<
        Outcome,
        'id' | 'worker' | 'request' | 'startedAt' | 'endedAt' | 'reusedSocket'
      >,
    ) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...outcome, endedAt: performance.now(), reusedSocket: request.reusedSocket });
    };
    const timer = setTimeout(() => {
      finish({ kind: 'timeout', error: 'timeout' });
      request.destroy();
    }, timeoutMs);
    request.on('error', (error) => {
      const code = errorCode(error);
      finish({ kind: code === 'ECONNREFUSED' ? 'refused' : 'dropped', error: code });
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', (error) => {
        finish({ kind: 'cut', status: response.statusCode, error: errorCode(error) });
      });
      response.on('aborted', () => {
        finish({ kind: 'cut', status: response.statusCode, error: 'aborted' });
      });
      response.on('end', () => {
        finish({
          kind: 'answered',
          status: response.statusCode,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        });
      });
    });
    request.end(payload);
  });
}

/** Starts `workers` closed-loop workers against `baseUrl`. */
export function startLoad(options: LoadOptions): Load {
  const inFlight = new Set<number>();
  const outcomes: Outcome[] = [];
  let nextId = 0;

  async function worker(index: number): Promise<void> {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let seq = 0; seq < options.maxRequestsPerWorker && !options.shouldStop(); seq++) {
        const request = options.next(index, seq);
        const id = nextId++;
        inFlight.add(id);
        const startedAt = performance.now();
        const result = await send(agent, options.baseUrl, request, options.requestTimeoutMs);
        inFlight.delete(id);
        const outcome: Outcome = { id, worker: index, request, startedAt, ...result };
        outcomes.push(outcome);
        options.onOutcome?.(outcome);
        if (outcome.kind === 'refused') await sleep(options.refusedPauseMs ?? 20);
      }
    } finally {
      agent.destroy();
    }
  }

  const done = Promise.all(Array.from({ length: options.workers }, (_unused, i) => worker(i))).then(
    () => outcomes,
  );
  return { done, inFlight: () => new Set(inFlight) };
}
