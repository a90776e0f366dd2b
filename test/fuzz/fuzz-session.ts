import fc from 'fast-check';
import type { ExchangeResponse, OpenApiDocument } from '../helpers/openapi-contract.js';
import type { TestApp } from '../helpers/test-app.js';
import { createFuzzStats, recordExchange, unsentOperations, type FuzzStats } from './fuzz-stats.js';
import type { SchemaContext } from './json-schema-arbitraries.js';
import { KNOWN_FINDINGS } from './known-findings.js';
import { operationArbitrary } from './openapi-arbitraries.js';
import {
  operationsOf,
  resolveRef,
  vocabularyOf,
  type FuzzableDocument,
  type OperationSpec,
} from './openapi-operations.js';
import { materialize, type RequestPlan, type SentRequest } from './request-plan.js';
import { createResponseMemory } from './response-memory.js';
import { createSeeder } from './resource-seeding.js';
import {
  FuzzFailure,
  assertPrototypeUnchanged,
  checkExchange,
  describeExchange,
  problemCodeOf,
  prototypeKeys,
  type KnownFinding,
} from './response-properties.js';

/**
 * A fuzzing session against one running app: reads its OpenAPI document, creates a few todos,
 * then sends generated requests and checks every response. Shared by the short run in
 * `npm test` (openapi.fuzz.test.ts) and the long one (`fuzz/run.ts`).
 */

/** Sends one request to the service under test. */
export type SendRequest = (request: SentRequest) => Promise<ExchangeResponse>;

/** Sends through a test app's `inject`; the fuzzer checks the contract itself, quoting the exchange. */
export function sendThrough(t: TestApp): SendRequest {
  return async (request) => {
    const response = await t.inject(
      {
        method: request.method,
        url: request.url,
        headers: request.headers,
        ...(request.payload === undefined ? {} : { payload: request.payload }),
      },
      { contract: false },
    );
    return { statusCode: response.statusCode, headers: response.headers, body: response.body };
  };
}

export interface FuzzSessionOptions {
  /**
   * Headers added to every request, over any generated ones: `{ authorization: 'Bearer …' }`
   * once the service requires a token. None are needed while it runs anonymous on loopback.
   */
  readonly extraHeaders?: Readonly<Record<string, string>>;
  readonly documentUrl?: string;
  /** Todos created before fuzzing, and again whenever fewer than a few are known to exist. */
  readonly seedResources?: number;
  readonly knownFindings?: readonly KnownFinding[];
}

export interface FuzzSession {
  readonly operations: readonly OperationSpec[];
  readonly stats: FuzzStats;
  /** Requests for every operation of the document. */
  readonly requests: fc.Arbitrary<RequestPlan>;
  /** Sends one plan and checks every property of its response; throws `FuzzFailure`. */
  send(plan: RequestPlan): Promise<void>;
  readonly property: fc.IAsyncPropertyWithHooks<[RequestPlan]>;
  /** Throws when some operation got no request, or `Object.prototype` gained keys. */
  assertComplete(): void;
}

/** Longest a single request may take before it counts as a failure. */
const REQUEST_TIMEOUT_MS = 10_000;

export interface FuzzRunOptions {
  readonly numRuns: number;
  readonly timeLimitMs: number;
  readonly seed: number;
  /** fast-check's replay path of a failure, printed with its seed. */
  readonly path?: string;
}

/** Bounded by runs and by time; running out of time is a pass, not a failure. */
export function fuzzParameters(options: FuzzRunOptions): fc.Parameters<unknown> {
  return {
    numRuns: options.numRuns,
    seed: options.seed,
    ...(options.path === undefined ? {} : { path: options.path }),
    // A request that hangs is a failure too.
    plugins: [fc.interruptAfterTimeLimit(options.timeLimitMs), fc.timeout(REQUEST_TIMEOUT_MS)],
  };
}

/** A seed for a new run; printed with the report so that the run can be replayed. */
export function newSeed(): number {
  return Math.floor(Math.random() * 2 ** 31);
}

async function fetchDocument(
  send: SendRequest,
  url: string,
  extraHeaders: Readonly<Record<string, string>>,
): Promise<FuzzableDocument & OpenApiDocument> {
  const response = await send({
    operation: 'document',
    pathTemplate: url,
    method: 'GET',
    url,
    pathValues: {},
    headers: { ...extraHeaders },
    payload: undefined,
  });
  if (response.statusCode !== 200) {
    throw new Error(`GET ${url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
  }
  return JSON.parse(response.body) as FuzzableDocument & OpenApiDocument;
}

export async function createFuzzSession(
  send: SendRequest,
  options: FuzzSessionOptions = {},
): Promise<FuzzSession> {
  const extraHeaders = options.extraHeaders ?? {};
  const knownFindings = options.knownFindings ?? KNOWN_FINDINGS;
  const prototypeBefore = prototypeKeys();
  const document = await fetchDocument(
    send,
    options.documentUrl ?? '/api/openapi.json',
    extraHeaders,
  );
  const operations = operationsOf(document);
  const context: SchemaContext = {
    resolve: (schema) => resolveRef(document, schema),
    vocabulary: vocabularyOf(document),
  };
  const stats = createFuzzStats(operations.map((operation) => operation.id));
  const memory = createResponseMemory();

  const perOperation = operations.map((operation): fc.WeightedArbitrary<RequestPlan> => {
    const methodsAtPath = operations
      .filter((other) => other.pathTemplate === operation.pathTemplate)
      .map((other) => other.method);
    const arbitrary = operationArbitrary(operation, context, methodsAtPath);
    // Fails now, naming the operation, if its schemas give the generators nothing to work with.
    if (fc.sample(arbitrary, { numRuns: 3, seed: 1 }).length !== 3) {
      throw new Error(`Operation ${operation.id} yields no requests`);
    }
    // A DELETE on a collection wipes the todos every other operation needs: drawn less often.
    const wipes = operation.method === 'DELETE' && operation.pathParameters.length === 0;
    return { arbitrary, weight: wipes ? 1 : 3 };
  });
  const requests = fc.oneof(...perOperation);

  /** Checks every property of one exchange, then learns from it; returns a known finding's id. */
  function checkAndLearn(request: SentRequest, response: ExchangeResponse): string | undefined {
    const known = checkExchange(document, request, response, knownFindings);
    try {
      assertPrototypeUnchanged(prototypeBefore);
    } catch (error) {
      throw new FuzzFailure(`${(error as Error).message}\n${describeExchange(request, response)}`);
    }
    memory.learn(request, response);
    return known;
  }

  const seeder = createSeeder({
    operations,
    context,
    memory,
    extraHeaders,
    batch: options.seedResources ?? 6,
    exchange: async (request) => {
      const response = await send(request);
      checkAndLearn(request, response);
      return response;
    },
  });
  stats.setupRequests += await seeder.replenish();

  async function sendPlan(plan: RequestPlan): Promise<void> {
    const request = materialize(plan, memory, extraHeaders);
    const response = await send(request);
    const { statusCode } = response;
    let knownFinding: string | undefined;
    try {
      knownFinding = checkAndLearn(request, response);
    } finally {
      recordExchange(stats, {
        operation: plan.operation,
        mutation: plan.mutation,
        statusCode,
        problemCode: problemCodeOf(response),
        knownFinding,
      });
    }
    stats.setupRequests += await seeder.replenish();
  }

  return {
    operations,
    stats,
    requests,
    send: sendPlan,
    property: fc.asyncProperty(requests, sendPlan),
    assertComplete() {
      const unsent = unsentOperations(stats);
      if (unsent.length > 0) throw new Error(`No request was sent to: ${unsent.join(', ')}`);
      assertPrototypeUnchanged(prototypeBefore);
    },
  };
}
