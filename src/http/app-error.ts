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

export function notFound(): AppError {
  return new AppError('not-found', 'No todo exists at this address.');
}

export function validationError(errors: readonly FieldError[]): AppError {
  const first = errors[0];
  const detail =
    errors.length === 1 && first
      ? `${first.pointer}: ${first.detail}`
      : `The body has ${errors.length} invalid fields; see errors[].`;
  return new AppError('validation-error', detail, { errors });
}
