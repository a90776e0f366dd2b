/**
 * The closed set of problem codes the service can answer with (RFC 9457 `code` extension).
 * Each entry is also the documentation served at `/problems/{code}`.
 */
export const PROBLEM_CODES = {
  'malformed-json': {
    status: 400,
    title: 'Malformed JSON',
    description:
      'The body is not valid JSON: a syntax error, invalid UTF-8, nesting deeper than 32 levels, or a forbidden key (`__proto__`, `constructor`). Fix the body and retry.',
  },
  'malformed-request': {
    status: 400,
    title: 'Malformed request',
    description:
      'The HTTP request itself could not be read: a bad percent-escape in the URL, conflicting framing headers, or another protocol error.',
  },
  'unknown-parameter': {
    status: 400,
    title: 'Unknown query parameter',
    description:
      'The query string has a parameter this endpoint does not define. Typos never pass silently; `errors[].pointer` names the parameter.',
  },
  'invalid-parameter': {
    status: 400,
    title: 'Invalid query parameter',
    description:
      'A query parameter or request header has a value outside its documented range or format (for example `limit=0`, `limit=Infinity`, `completed=yes`). `errors[].pointer` names it.',
  },
  'invalid-cursor': {
    status: 400,
    title: 'Invalid cursor',
    description:
      'The `cursor` was altered, comes from another server secret or an older version, or was issued for different filters, `q` or `sort`. Start again from the first page with the query you want.',
  },
  'invalid-idempotency-key': {
    status: 400,
    title: 'Invalid Idempotency-Key',
    description:
      'The `Idempotency-Key` header must be 1–255 visible ASCII characters, optionally as a quoted structured-field string.',
  },
  unauthenticated: {
    status: 401,
    title: 'Authentication required',
    description:
      'The request has no usable credentials: the `Authorization: Bearer <token>` header is missing, malformed, or its token is unknown, expired or revoked. `WWW-Authenticate` says which. Tokens are accepted only in that header, never in the URL.',
  },
  'insufficient-scope': {
    status: 403,
    title: 'Insufficient scope',
    description:
      'The token is valid but lacks the scope this operation needs (`todos:read`, `todos:write` or `webhooks:manage`); `required_scope` names it. Create a token with that scope.',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    description:
      'Nothing is at this address: the route does not exist, or the todo id is unknown, deleted, malformed or not yours. These cases are deliberately indistinguishable.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    description:
      'The path exists but not with this method; the `Allow` header lists the methods it has.',
  },
  'not-acceptable': {
    status: 406,
    title: 'Not acceptable',
    description:
      'The `Accept` header excludes every media type this endpoint produces (`application/json`, and `application/problem+json` for errors).',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    description:
      'The client did not send the whole request (head or body) in time. The connection is closed; retry with a faster upload.',
  },
  'invalid-transition': {
    status: 409,
    title: 'Invalid status transition',
    description:
      'The todo cannot move from its current status to the requested one. `current_status` and `allowed_transitions` say where it can go; closed todos (completed, cancelled) can only be reopened.',
  },
  'endpoint-disabled': {
    status: 409,
    title: 'Webhook endpoint disabled',
    description:
      'The webhook endpoint is disabled (by you, or by the service after the receiver answered 410 Gone), so nothing is sent to it. Enable it with `PATCH {"enabled": true}` first.',
  },
  'not-deleted': {
    status: 409,
    title: 'Todo not deleted',
    description:
      'Only a deleted todo can be restored, and this one is not deleted. Nothing was changed.',
  },
  'idempotency-in-flight': {
    status: 409,
    title: 'Request with this Idempotency-Key still in flight',
    description:
      'A request with the same `Idempotency-Key` is still being processed. Retry after a moment to receive its stored response.',
  },
  'sync-token-expired': {
    status: 410,
    title: 'Sync token expired',
    description:
      'The changes since this `since` token are no longer kept (events are kept for 24 hours by default). List the todos again, then sync from a new token (`GET /api/todos/changes` without `since`).',
  },
  'precondition-failed': {
    status: 412,
    title: 'Precondition failed',
    description:
      'The `If-Match` header does not match the current `ETag`: someone changed the todo since you read it. GET it again, re-apply your change, and retry.',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    description: 'The request body exceeds the configured limit (64 KiB by default).',
  },
  'uri-too-long': {
    status: 414,
    title: 'URI too long',
    description: 'The request target exceeds the configured limit (8 KiB by default).',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    description:
      'Request bodies must be `application/json` (PATCH also accepts `application/merge-patch+json`) in UTF-8.',
  },
  'validation-error': {
    status: 422,
    title: 'Validation failed',
    description:
      'The JSON body is well-formed but breaks a field rule. `errors[]` lists each problem with a JSON Pointer to the field, a machine-readable `code` and a message.',
  },
  'unknown-field': {
    status: 422,
    title: 'Unknown field',
    description:
      'The body has a field the todo resource does not define. Typos never pass silently; `errors[].pointer` names the field.',
  },
  'quota-exceeded': {
    status: 422,
    title: 'Quota exceeded',
    description:
      'The owner already keeps the most todos (100,000 by default) or webhook endpoints (10) allowed; `limit` gives the quota. Delete some before creating more.',
  },
  'idempotency-key-reused': {
    status: 422,
    title: 'Idempotency-Key reused with a different request',
    description:
      'This `Idempotency-Key` was already used for a request with a different body. Use a new key for a new request.',
  },
  'too-many-streams': {
    status: 429,
    title: 'Too many event streams',
    description:
      'The owner already holds the most event streams allowed on this instance (`SSE_MAX_STREAMS`, 5 by default). Close one, or retry after `Retry-After` seconds.',
  },
  'rate-limited': {
    status: 429,
    title: 'Too many requests',
    description:
      'The owner (or, without a token, the client address) sent more requests than its rate limit allows. `Retry-After` says how many seconds to wait; `RateLimit-Policy` and `RateLimit` on every response show the budget.',
  },
  'headers-too-large': {
    status: 431,
    title: 'Request headers too large',
    description: 'The request head exceeds the configured limit (16 KiB by default).',
  },
  internal: {
    status: 500,
    title: 'Internal server error',
    description:
      'The server failed unexpectedly. Nothing about the cause is disclosed; quote `request_id` when reporting it.',
  },
  unavailable: {
    status: 503,
    title: 'Service unavailable',
    description:
      'The service is shutting down or its database is busy or unreachable. Retry after the `Retry-After` delay.',
  },
  'insufficient-storage': {
    status: 507,
    title: 'Insufficient storage',
    description:
      'The database has no room left to store the change; nothing was written. Reads keep working. Retry after the `Retry-After` delay; the operator has been alerted by the logs.',
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

export type ProblemCode = keyof typeof PROBLEM_CODES;

export function isProblemCode(value: string): value is ProblemCode {
  return Object.hasOwn(PROBLEM_CODES, value);
}
