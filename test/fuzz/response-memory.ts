import type { Recall, SentRequest } from './request-plan.js';

/**
 * What the fuzzer learns from responses, so that later requests reach past "not found": values
 * of top-level string members by name (`id`, `code`, `status`), each resource's last
 * representation and ETag (by its `id`), and the `rel="next"` links of each path.
 */

export interface ObservedResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, unknown>>;
  readonly body: string;
}

export interface ResponseMemory extends Recall {
  learn(request: SentRequest, response: ObservedResponse): void;
  /** How many values are known under `name`. */
  count(name: string): number;
}

/** Values kept per name; older ones are forgotten first. */
const KEPT_PER_NAME = 64;
const KEPT_RESOURCES = 512;
/** Longest value worth remembering: larger ones are bodies, not identifiers. */
const LONGEST_VALUE = 4096;

function pickFromNewest<T>(values: readonly T[], pick: number): T | undefined {
  if (values.length === 0) return undefined;
  return values[values.length - 1 - (pick % values.length)];
}

function remember(values: string[], value: string): void {
  const index = values.indexOf(value);
  if (index !== -1) values.splice(index, 1);
  values.push(value);
  if (values.length > KEPT_PER_NAME) values.shift();
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `<url>; rel="next"` → the URL's path and query. */
function nextLinkOf(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(header);
  if (!match?.[1]) return undefined;
  const url = new URL(match[1], 'http://fuzz.invalid');
  return `${url.pathname}${url.search}`;
}

export function createResponseMemory(): ResponseMemory {
  const learned = new Map<string, string[]>();
  const representations = new Map<string, Readonly<Record<string, unknown>>>();
  const etags = new Map<string, string>();
  const links = new Map<string, string[]>();

  const valuesOf = (name: string): string[] => {
    let values = learned.get(name);
    if (!values) {
      values = [];
      learned.set(name, values);
    }
    return values;
  };

  function learnObject(object: Record<string, unknown>, etag: unknown): void {
    for (const [name, value] of Object.entries(object)) {
      if (typeof value === 'string' && value.length <= LONGEST_VALUE)
        remember(valuesOf(name), value);
    }
    const id = object.id;
    if (typeof id !== 'string') return;
    representations.delete(id);
    representations.set(id, object);
    if (typeof etag === 'string') etags.set(id, etag);
    if (representations.size > KEPT_RESOURCES) {
      const oldest = representations.keys().next().value;
      if (oldest !== undefined) {
        representations.delete(oldest);
        etags.delete(oldest);
      }
    }
  }

  function forgetResource(id: string): void {
    representations.delete(id);
    etags.delete(id);
    for (const values of learned.values()) {
      const index = values.indexOf(id);
      if (index !== -1) values.splice(index, 1);
    }
  }

  return {
    learned: (name, pick) => pickFromNewest(learned.get(name) ?? [], pick),
    etagOf: (id) => etags.get(id),
    representationOf: (id) => representations.get(id),
    nextLink: (pathTemplate, pick) => pickFromNewest(links.get(pathTemplate) ?? [], pick),

    count: (name) => learned.get(name)?.length ?? 0,

    learn(request, response) {
      const success = response.statusCode >= 200 && response.statusCode < 300;
      // What was deleted, or turns out not to exist (deleted by a filter, never created), is
      // no longer worth asking for.
      const gone = (success && request.method === 'DELETE') || response.statusCode === 404;
      const names = Object.values(request.pathValues);
      if (gone && names.length > 0) {
        names.forEach(forgetResource);
        return;
      }
      // A DELETE on a collection may have removed any of its resources.
      if (gone) {
        for (const id of [...representations.keys()]) forgetResource(id);
        links.clear();
        return;
      }
      const link = nextLinkOf(response.headers.link);
      if (link !== undefined) {
        const known = links.get(request.pathTemplate) ?? [];
        remember(known, link);
        links.set(request.pathTemplate, known);
        for (const [name, value] of new URL(link, 'http://fuzz.invalid').searchParams) {
          remember(valuesOf(name), value);
        }
      }
      const contentType = response.headers['content-type'];
      if (typeof contentType !== 'string' || !contentType.includes('json')) return;
      const body = parseJson(response.body);
      const objects = Array.isArray(body) ? body.filter(isRecord) : isRecord(body) ? [body] : [];
      // Only a single resource's answer carries its ETag.
      const etag = objects.length === 1 && success ? response.headers.etag : undefined;
      for (const object of objects) learnObject(object, etag);
    },
  };
}
