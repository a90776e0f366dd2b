import { Type, type TSchema } from 'typebox';
import { PROBLEM_CODES, type ProblemCode } from './problem-codes.js';
import { PROBLEM_MEDIA_TYPE, ProblemSchema } from './problem.js';

/**
 * Builders for route response schemas, so that every route documents its headers and every
 * problem code it can answer with, in the same shape.
 */

type HeaderDocs = Readonly<Record<string, { type: 'string'; description: string }>>;

const header = (description: string) => ({ type: 'string', description }) as const;

export const HEADERS = {
  etag: header('Strong entity tag of the todo: its version in quotes.'),
  location: header('Absolute URL of the created todo.'),
  webhookLocation: header('Absolute URL of the created webhook endpoint.'),
  link: header('RFC 8288 pagination: `<…>; rel="next"` while more pages follow.'),
  totalCount: header(
    'Number of todos matching the filters, ignoring paging. Only when the request sent `Prefer: count=exact`.',
  ),
  preferenceApplied: header('`count=exact` when `X-Total-Count` answers `Prefer: count=exact`.'),
  varyPrefer: header('Includes `Prefer`: the answer depends on `Prefer: count=exact`.'),
  replayed: header(
    '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
  ),
  requestId: header('The request id, echoed or generated; quote it when reporting a problem.'),
} as const;

/** A JSON success response with its documented headers. */
export function jsonResponse(schema: TSchema, description: string, headers: HeaderDocs = {}) {
  return { ...schema, description, headers: { 'X-Request-Id': HEADERS.requestId, ...headers } };
}

/** A response without a body (204, 304). */
export function emptyResponse(description: string, headers: HeaderDocs = {}) {
  return {
    type: 'null',
    description,
    headers: { 'X-Request-Id': HEADERS.requestId, ...headers },
  } as const;
}

/** Problems every route can produce, whatever it does. */
export const COMMON_PROBLEMS: readonly ProblemCode[] = [
  'malformed-request',
  'uri-too-long',
  'headers-too-large',
  'request-timeout',
  'rate-limited',
  'internal',
  'unavailable',
  'insufficient-storage',
];

/** Problems of routes that serve an owner's data (every route whose scope is not public). */
export const AUTH_PROBLEMS: readonly ProblemCode[] = ['unauthenticated', 'insufficient-scope'];

/**
 * Problems of routes that take no body but may be sent one anyway (DELETE): it is still read
 * under the same rules before being ignored.
 */
export const UNEXPECTED_BODY_PROBLEMS: readonly ProblemCode[] = [
  'malformed-json',
  'payload-too-large',
  'unsupported-media-type',
];

/** Problems of routes that read a JSON body. */
export const BODY_PROBLEMS: readonly ProblemCode[] = [
  'malformed-json',
  'payload-too-large',
  'unsupported-media-type',
  'validation-error',
  'unknown-field',
];

/** One documented response per status, listing the problem codes it carries. */
export function problemResponses(codes: readonly ProblemCode[]) {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of new Set([...codes, ...COMMON_PROBLEMS])) {
    const status = PROBLEM_CODES[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: Record<number, unknown> = {};
  for (const [status, statusCodes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: `Problem (RFC 9457). Codes: ${statusCodes.map((code) => `\`${code}\``).join(', ')}; each is documented at /problems/{code}.`,
      ...(status === 405 ? { headers: { Allow: header('Methods this path supports.') } } : {}),
      ...(status === 503 || status === 507 || status === 409 || status === 429
        ? { headers: { 'Retry-After': header('Seconds to wait before retrying.') } }
        : {}),
      ...(status === 401 || status === 403
        ? { headers: { 'WWW-Authenticate': header('RFC 6750 Bearer challenge.') } }
        : {}),
      content: { [PROBLEM_MEDIA_TYPE]: { schema: ProblemSchema } },
    };
  }
  return responses;
}

export const NoContent = Type.Null();
