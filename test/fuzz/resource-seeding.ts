import fc from 'fast-check';
import type { ExchangeResponse } from '../helpers/openapi-contract.js';
import { validValue, type SchemaContext } from './json-schema-arbitraries.js';
import type { OperationSpec } from './openapi-operations.js';
import type { SentRequest } from './request-plan.js';
import type { ResponseMemory } from './response-memory.js';

/**
 * Keeps a few resources in existence, so that requests to `/todos/{id}` mostly name todos that
 * exist and their handlers run deep instead of answering 404. Resources are made by the
 * document's creating operation (a POST without path parameters that answers 201) from valid
 * bodies generated from its schema.
 */

export interface Seeder {
  /** Creates resources when fewer than a few ids are known; resolves to the requests sent. */
  replenish(): Promise<number>;
}

export interface SeederDeps {
  readonly operations: readonly OperationSpec[];
  readonly context: SchemaContext;
  readonly memory: ResponseMemory;
  /** Sends one request, checks its properties and learns from its response. */
  readonly exchange: (request: SentRequest) => Promise<ExchangeResponse>;
  readonly extraHeaders: Readonly<Record<string, string>>;
  /** Resources made per replenishment. */
  readonly batch: number;
}

/** Fewer known ids than this and more resources are made. */
const LOW_WATER = 3;
/** After a round that created nothing (every body refused, no credentials), calls skipped. */
const BACKOFF_CALLS = 500;

function creatingOperation(operations: readonly OperationSpec[]): OperationSpec | undefined {
  return operations.find(
    (operation) =>
      operation.method === 'POST' &&
      operation.pathParameters.length === 0 &&
      operation.body !== undefined &&
      operation.statuses.includes(201),
  );
}

/** The path parameter that names one created resource: `id` in `/todos/{id}`. */
function idParameterOf(creating: OperationSpec, operations: readonly OperationSpec[]) {
  const prefix = `${creating.pathTemplate}/{`;
  const item = operations.find((operation) => operation.pathTemplate.startsWith(prefix));
  return item?.pathTemplate.slice(prefix.length).split('}')[0];
}

export function createSeeder(deps: SeederDeps): Seeder {
  const creating = creatingOperation(deps.operations);
  const media = creating?.body?.media[0];
  const idName = creating ? idParameterOf(creating, deps.operations) : undefined;
  if (!creating || !media || idName === undefined) return { replenish: () => Promise.resolve(0) };

  /** Bodies that were created once; reused so that replenishing costs `batch` requests. */
  const goodBodies: string[] = [];
  let round = 0;
  let skipCalls = 0;

  function candidates(): string[] {
    const fresh = fc
      .sample(validValue(media?.schema ?? {}, deps.context), {
        numRuns: 8 * deps.batch,
        seed: round++,
      })
      .map((body) => JSON.stringify(body));
    return [...goodBodies, ...fresh];
  }

  return {
    async replenish() {
      if (skipCalls > 0) {
        skipCalls--;
        return 0;
      }
      if (deps.memory.count(idName) >= LOW_WATER) return 0;
      let sent = 0;
      let created = 0;
      for (const payload of candidates()) {
        if (created >= deps.batch) break;
        const response = await deps.exchange({
          operation: creating.id,
          pathTemplate: creating.pathTemplate,
          method: creating.method,
          url: creating.pathTemplate,
          pathValues: {},
          headers: { 'content-type': media.type, ...deps.extraHeaders },
          payload,
        });
        sent++;
        if (response.statusCode !== 201) continue;
        created++;
        if (!goodBodies.includes(payload)) goodBodies.push(payload);
      }
      if (created === 0) skipCalls = BACKOFF_CALLS;
      return sent;
    },
  };
}
