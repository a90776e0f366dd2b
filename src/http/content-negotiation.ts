import Negotiator from 'negotiator';
import { AppError } from './app-error.js';

const JSON_TYPES = ['application/json', 'application/problem+json'];

/** Throws 406 when the `Accept` header rules out every JSON type this API produces. */
export function assertAcceptsJson(accept: string | undefined): void {
  if (accept === undefined || accept.trim() === '') return;
  const negotiator = new Negotiator({ headers: { accept } });
  if (negotiator.mediaType(JSON_TYPES) === undefined) {
    throw new AppError(
      'not-acceptable',
      'This endpoint only produces application/json (and application/problem+json for errors).',
    );
  }
}
