import { PROBLEM_CODES, type ProblemCode } from './problem-codes.js';

/** One entry of a problem's `errors[]`: where (JSON Pointer), what (code) and why (detail). */
export interface FieldError {
  readonly pointer: string;
  readonly code: string;
  readonly detail: string;
}

/** Extension members some problems carry (e.g. `current_status` on `invalid-transition`). */
export type ProblemExtensions = Readonly<Record<string, string | number | readonly string[]>>;

/**
 * The one error type the service raises on purpose. Its `code` decides the HTTP status; the
 * central error handler turns it into an RFC 9457 problem document.
 */
export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ProblemCode,
    readonly detail: string,
    readonly options: {
      readonly errors?: readonly FieldError[];
      readonly extensions?: ProblemExtensions;
      readonly headers?: Readonly<Record<string, string>>;
    } = {},
  ) {
    super(detail);
    this.name = 'AppError';
    this.status = PROBLEM_CODES[code].status;
  }
}

/**
 * What an unknown, malformed, deleted or someone else's id answers — the same words for all of
 * them, and for todos and webhook endpoints alike, so that none can be told apart.
 */
export const NOT_FOUND_DETAIL = 'Nothing of yours exists at this address.';

export function notFound(): AppError {
  return new AppError('not-found', NOT_FOUND_DETAIL);
}

export function validationError(errors: readonly FieldError[]): AppError {
  const first = errors[0];
  const detail =
    errors.length === 1 && first
      ? `${first.pointer}: ${first.detail}`
      : `The body has ${errors.length} invalid fields; see errors[].`;
  return new AppError('validation-error', detail, { errors });
}
