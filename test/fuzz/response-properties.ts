import {
  assertMatchesOpenApi,
  type ExchangeResponse,
  type OpenApiDocument,
} from '../helpers/openapi-contract.js';
import type { SentRequest } from './request-plan.js';

/**
 * The properties every response must have, whatever was asked: no 5xx; the status and body
 * documented for the operation; every 4xx an RFC 9457 problem document. A broken property throws
 * a `FuzzFailure` quoting the exact request and response.
 */

export class FuzzFailure extends Error {
  override readonly name = 'FuzzFailure';
}

const SHOWN_CHARACTERS = 600;

/** JSON with every non-ASCII character escaped: invisible ones (NEL, soft hyphen) show. */
function visible(value: unknown): string {
  return JSON.stringify(value).replace(
    /[\u007f-\uffff]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

function excerpt(text: string): string {
  return text.length <= SHOWN_CHARACTERS
    ? visible(text)
    : `${visible(text.slice(0, SHOWN_CHARACTERS))}… (${text.length} characters)`;
}

/** The request and response as a reader needs them to replay the failure with curl. */
export function describeExchange(request: SentRequest, response: ExchangeResponse): string {
  return [
    `request (${request.operation}): ${request.method} ${excerpt(request.url)}`,
    `  headers: ${visible(request.headers)}`,
    `  body: ${request.payload === undefined ? '(none)' : excerpt(request.payload)}`,
    `response: ${response.statusCode}`,
    `  headers: ${JSON.stringify(response.headers)}`,
    `  body: ${excerpt(response.body)}`,
  ].join('\n');
}

function fail(reason: string, request: SentRequest, response: ExchangeResponse): never {
  throw new FuzzFailure(`${reason}\n${describeExchange(request, response)}`);
}

function parsedBody(response: ExchangeResponse): unknown {
  try {
    return JSON.parse(response.body);
  } catch {
    return undefined;
  }
}

/** The `code` of a problem document, if the response is one. */
export function problemCodeOf(response: ExchangeResponse): string | undefined {
  if (response.statusCode < 400) return undefined;
  const problem = parsedBody(response);
  const code = (problem as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function problemViolation(response: ExchangeResponse): string | undefined {
  const contentType = response.headers['content-type'];
  if (typeof contentType !== 'string' || !contentType.startsWith('application/problem+json')) {
    return `a ${response.statusCode} must be application/problem+json, not ${String(contentType)}`;
  }
  const problem = parsedBody(response);
  if (problem === undefined) return 'the problem document is not JSON';
  if (typeof problem !== 'object' || problem === null || Array.isArray(problem)) {
    return 'the problem document is not an object';
  }
  const { type, title, status, code } = problem as Record<string, unknown>;
  if (typeof type !== 'string' || type === '') return 'the problem has no `type`';
  if (typeof title !== 'string' || title === '') return 'the problem has no `title`';
  if (typeof code !== 'string' || code === '') return 'the problem has no `code`';
  if (status !== response.statusCode) {
    return `the problem's status ${String(status)} differs from the HTTP status ${response.statusCode}`;
  }
  return undefined;
}

/**
 * A deviation already reported and not yet fixed. Matching exchanges skip the contract check
 * only (the other properties still hold); each match is counted in the report, so that the
 * entry is removed once the service is fixed and the count drops to zero.
 */
export interface KnownFinding {
  readonly id: string;
  readonly matches: (request: SentRequest, response: ExchangeResponse) => boolean;
}

/** Checks one exchange; returns the id of the known finding it matched, if any. */
export function checkExchange(
  document: OpenApiDocument,
  request: SentRequest,
  response: ExchangeResponse,
  knownFindings: readonly KnownFinding[],
): string | undefined {
  if (response.statusCode >= 500) fail('server error (5xx)', request, response);
  const known = knownFindings.find((finding) => finding.matches(request, response));
  if (!known) {
    try {
      assertMatchesOpenApi(document, request, response);
    } catch (error) {
      fail(`contract: ${(error as Error).message}`, request, response);
    }
  }
  if (response.statusCode >= 400 && request.method !== 'HEAD') {
    const violation = problemViolation(response);
    if (violation !== undefined) fail(`problem: ${violation}`, request, response);
  }
  return known?.id;
}

/** Every own key of `Object.prototype`, symbols included: polluting it adds one. */
export function prototypeKeys(): string[] {
  return Reflect.ownKeys(Object.prototype).map(String).sort();
}

export function assertPrototypeUnchanged(before: readonly string[]): void {
  const added = prototypeKeys().filter((key) => !before.includes(key));
  if (added.length > 0) {
    throw new FuzzFailure(`Object.prototype was polluted with: ${added.join(', ')}`);
  }
}
