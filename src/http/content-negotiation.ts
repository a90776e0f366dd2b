import Negotiator from 'negotiator';
import { AppError } from './app-error.js';

/** Throws 406 when the `Accept` header rules out every one of `produced`. */
export function assertAccepts(accept: string | undefined, produced: readonly string[]): void {
  if (accept === undefined || accept.trim() === '') return;
  const negotiator = new Negotiator({ headers: { accept } });
  if (negotiator.mediaType([...produced, 'application/problem+json']) === undefined) {
    throw new AppError(
      'not-acceptable',
      `This endpoint only produces ${produced.join(', ')} (and application/problem+json for errors).`,
    );
  }
}

/** Throws 406 when the `Accept` header rules out every JSON type this API produces. */
export function assertAcceptsJson(accept: string | undefined): void {
  assertAccepts(accept, ['application/json']);
}
