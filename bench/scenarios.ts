/**
 * What each scenario sends. A scenario yields request specs; a fixed spec is built once by
 * autocannon, a varying one is rebuilt for every request through `setupRequest`.
 */
import {
  createRandom,
  pick,
  randomLabels,
  randomSentence,
  randomTitle,
  SEARCH_WORD,
} from './data.js';

export interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export type ScenarioKey =
  'get' | 'list' | 'list-filtered' | 'search' | 'post' | 'patch' | 'put' | 'delete' | 'mixed';

export interface Scenario {
  readonly key: ScenarioKey;
  readonly title: string;
  /** How it appears in the report, e.g. the request it sends. */
  readonly request: string;
  /** A constant request, or undefined when every request differs. */
  readonly fixed: RequestSpec | undefined;
  readonly next: () => RequestSpec;
  /** Whether each request consumes a todo from the delete pool. */
  readonly usesDeletePool: boolean;
}

export interface ScenarioInputs {
  /** Ids of seeded todos; they are never deleted. */
  readonly ids: readonly string[];
  /** Takes an id from the delete pool; undefined when the pool is exhausted. */
  readonly takeDeleteId: () => string | undefined;
}

/** Paths of the read scenarios, exactly as the issue words them. */
export const PATHS = {
  list: '/api/todos?limit=50',
  listFiltered: '/api/todos?status=open,in_progress&sort=-priority,due_at&limit=50',
  search: `/api/todos?q=${SEARCH_WORD}&limit=50`,
} as const;

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
const MERGE_PATCH_HEADERS = { 'content-type': 'application/merge-patch+json' } as const;
/** A well-formed id no todo has: a request for it is a 404, which counts as an error. */
const MISSING_ID = '00000000-0000-7000-8000-000000000000';

export function createScenarios(inputs: ScenarioInputs, seed = 42): Record<ScenarioKey, Scenario> {
  const random = createRandom(seed);
  let counter = 0;
  const randomId = () => pick(random, inputs.ids);

  const get = (): RequestSpec => ({ method: 'GET', path: `/api/todos/${randomId()}` });
  const list: RequestSpec = { method: 'GET', path: PATHS.list };
  const post = (): RequestSpec => ({
    method: 'POST',
    path: '/api/todos',
    headers: JSON_HEADERS,
    body: JSON.stringify({
      title: `${randomTitle(random)} #${++counter}`,
      priority: pick(random, ['none', 'low', 'normal', 'high', 'urgent']),
      labels: randomLabels(random),
    }),
  });
  const patch = (): RequestSpec => ({
    method: 'PATCH',
    path: `/api/todos/${randomId()}`,
    headers: MERGE_PATCH_HEADERS,
    body: JSON.stringify({ title: `${randomTitle(random)} (renamed ${++counter})` }),
  });

  const scenarios: Scenario[] = [
    {
      key: 'get',
      title: 'GET one todo',
      request: 'GET /api/todos/{random seeded id}',
      fixed: undefined,
      next: get,
      usesDeletePool: false,
    },
    {
      key: 'list',
      title: 'list (default, 50)',
      request: `GET ${PATHS.list}`,
      fixed: list,
      next: () => list,
      usesDeletePool: false,
    },
    {
      key: 'list-filtered',
      title: 'list filtered + sorted',
      request: `GET ${PATHS.listFiltered}`,
      fixed: { method: 'GET', path: PATHS.listFiltered },
      next: () => ({ method: 'GET', path: PATHS.listFiltered }),
      usesDeletePool: false,
    },
    {
      key: 'search',
      title: 'search q',
      request: `GET ${PATHS.search}`,
      fixed: { method: 'GET', path: PATHS.search },
      next: () => ({ method: 'GET', path: PATHS.search }),
      usesDeletePool: false,
    },
    {
      key: 'post',
      title: 'POST (create)',
      request: 'POST /api/todos {title (unique), priority, labels}',
      fixed: undefined,
      next: post,
      usesDeletePool: false,
    },
    {
      key: 'patch',
      title: 'PATCH (title)',
      request: 'PATCH /api/todos/{random seeded id} {title}',
      fixed: undefined,
      next: patch,
      usesDeletePool: false,
    },
    {
      key: 'put',
      title: 'PUT (full body)',
      request: 'PUT /api/todos/{random seeded id} {every writable field}',
      fixed: undefined,
      next: () => ({
        method: 'PUT',
        path: `/api/todos/${randomId()}`,
        headers: JSON_HEADERS,
        body: JSON.stringify({
          title: `${randomTitle(random)} (replaced ${++counter})`,
          description: randomSentence(random, 12),
          status: 'open',
          priority: pick(random, ['none', 'low', 'normal', 'high', 'urgent']),
          labels: randomLabels(random),
          due_date: '2026-06-01',
          due_at: null,
          metadata: { source: 'bench' },
        }),
      }),
      usesDeletePool: false,
    },
    {
      key: 'delete',
      title: 'DELETE',
      request: 'DELETE /api/todos/{id from a pre-created pool}',
      fixed: undefined,
      next: () => ({
        method: 'DELETE',
        path: `/api/todos/${inputs.takeDeleteId() ?? MISSING_ID}`,
      }),
      usesDeletePool: true,
    },
    {
      key: 'mixed',
      title: 'mixed',
      request: '55% GET one, 15% list, 20% PATCH, 10% POST',
      fixed: undefined,
      next: () => {
        const r = random();
        if (r < 0.55) return get();
        if (r < 0.7) return list;
        if (r < 0.9) return patch();
        return post();
      },
      usesDeletePool: false,
    },
  ];
  return Object.fromEntries(scenarios.map((s) => [s.key, s])) as Record<ScenarioKey, Scenario>;
}

export const SCENARIO_ORDER: readonly ScenarioKey[] = [
  // Reads first, so that they see exactly the seeded rows.
  'get',
  'list',
  'list-filtered',
  'search',
  'post',
  'patch',
  'put',
  'delete',
  'mixed',
];
