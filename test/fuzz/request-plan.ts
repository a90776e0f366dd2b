/**
 * A generated request, before and after it meets the service's state. Generation is pure (same
 * seed, same plans); values that only exist at run time — ids of todos that exist, their current
 * ETag, the cursor of a `Link: rel="next"` — are references, resolved when the request is sent.
 */

/** A value seen under `name` in an earlier response (`pick` counts back from the newest). */
export interface Learned {
  readonly learned: string;
  readonly pick: number;
  /** Sent when nothing has been learned under that name yet. */
  readonly fallback: string;
}

/** The current ETag of the resource the request's path names, optionally made weak. */
export interface CurrentEtag {
  readonly currentEtag: 'strong' | 'weak';
  readonly fallback: string;
}

export type ParameterValue = string | Learned | CurrentEtag;

export interface PathValue {
  readonly value: ParameterValue;
  /** Put into the URL as it is (bad escapes, dot segments) instead of percent-encoded. */
  readonly raw: boolean;
}

export type BodyPlan =
  | { readonly kind: 'none' }
  | { readonly kind: 'json'; readonly value: unknown; readonly contentType: string | undefined }
  | { readonly kind: 'text'; readonly text: string; readonly contentType: string | undefined }
  /** The last representation seen of the resource the path names, with these members set. */
  | {
      readonly kind: 'echo';
      readonly overrides: Readonly<Record<string, unknown>>;
      readonly contentType: string | undefined;
    };

export interface RequestPlan {
  /** The operation (from the document) this request was generated for. */
  readonly operation: string;
  /** Which part was made invalid: `none`, `path`, `query`, `headers`, `body`, `method`, `all`. */
  readonly mutation: string;
  readonly method: string;
  readonly pathTemplate: string;
  readonly path: Readonly<Record<string, PathValue>>;
  readonly query: readonly (readonly [string, ParameterValue])[];
  /** Appended to the query string as it is: repeated, undecodable or over-long parameters. */
  readonly rawQuery: string;
  /** When set and a `rel="next"` link was learned for this path, request that link instead. */
  readonly followLink: number | undefined;
  readonly headers: Readonly<Record<string, ParameterValue>>;
  readonly body: BodyPlan;
}

/** What was actually sent. */
export interface SentRequest {
  readonly operation: string;
  readonly pathTemplate: string;
  readonly method: string;
  readonly url: string;
  /** The path parameters as sent (decoded), by name. */
  readonly pathValues: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  readonly payload: string | undefined;
}

/** What the fuzzer remembers of earlier responses (see response-memory.ts). */
export interface Recall {
  learned(name: string, pick: number): string | undefined;
  etagOf(id: string): string | undefined;
  representationOf(id: string): Readonly<Record<string, unknown>> | undefined;
  nextLink(pathTemplate: string, pick: number): string | undefined;
}

/**
 * Percent-encodes like a client: a lone surrogate cannot be UTF-8 encoded, so it goes out as
 * U+FFFD (raw invalid escapes are generated separately).
 */
function encode(text: string): string {
  return encodeURIComponent(text.toWellFormed());
}

function resolve(value: ParameterValue, recall: Recall, ids: readonly string[]): string {
  if (typeof value === 'string') return value;
  if ('learned' in value) return recall.learned(value.learned, value.pick) ?? value.fallback;
  const etag = ids.map((id) => recall.etagOf(id)).find((tag) => tag !== undefined);
  if (etag === undefined) return value.fallback;
  return value.currentEtag === 'weak' ? `W/${etag}` : etag;
}

/**
 * Header values as an HTTP/1.1 client could send them: characters beyond latin1 and control
 * characters other than tab cannot cross the wire, so they become `?`.
 */
function asHeaderValue(text: string): string {
  return text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '?');
}

function payloadOf(plan: RequestPlan, recall: Recall, ids: readonly string[]) {
  const { body } = plan;
  switch (body.kind) {
    case 'none':
      return { payload: undefined, contentType: undefined };
    case 'json':
      return {
        payload: JSON.stringify(body.value) as string | undefined,
        contentType: body.contentType,
      };
    case 'text':
      return { payload: body.text, contentType: body.contentType };
    case 'echo': {
      const current = ids.map((id) => recall.representationOf(id)).find(Boolean);
      return {
        payload: JSON.stringify({ ...current, ...body.overrides }),
        contentType: body.contentType,
      };
    }
  }
}

/**
 * Turns a plan into the request to send, resolving references against what was learned.
 * `extraHeaders` are added to every request and win over generated ones (authentication).
 */
export function materialize(
  plan: RequestPlan,
  recall: Recall,
  extraHeaders: Readonly<Record<string, string>>,
): SentRequest {
  const pathValues: Record<string, string> = {};
  let path = plan.pathTemplate;
  for (const [name, { value, raw }] of Object.entries(plan.path)) {
    const text = resolve(value, recall, []);
    pathValues[name] = text;
    path = path.replace(`{${name}}`, raw ? text : encode(text));
  }
  const ids = Object.values(pathValues);
  const query = plan.query
    .map(([name, value]) => `${encode(name)}=${encode(resolve(value, recall, ids))}`)
    .join('&');
  const search = `${query}${plan.rawQuery}`.replace(/^&/, '');
  const link =
    plan.followLink === undefined ? undefined : recall.nextLink(plan.pathTemplate, plan.followLink);
  const url = link ?? (search === '' ? path : `${path}?${search}`);

  const { payload, contentType } = payloadOf(plan, recall, ids);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(plan.headers)) {
    headers[name.toLowerCase()] = asHeaderValue(resolve(value, recall, ids));
  }
  if (contentType !== undefined) headers['content-type'] = asHeaderValue(contentType);
  for (const [name, value] of Object.entries(extraHeaders)) headers[name.toLowerCase()] = value;

  return {
    operation: plan.operation,
    pathTemplate: plan.pathTemplate,
    method: plan.method,
    url,
    pathValues,
    headers,
    payload,
  };
}
