import { AppError } from '../http/app-error.js';
import type { Scope } from './scopes.js';

const REALM = 'todo-api';

/** RFC 6750 §3 challenge values. */
function challenge(params: Readonly<Record<string, string>>): string {
  const rendered = Object.entries(params).map(([name, value]) => `${name}="${value}"`);
  return ['Bearer', [`realm="${REALM}"`, ...rendered].join(', ')].join(' ');
}

/** No credentials at all: the challenge carries no error code (RFC 6750 §3.1). */
export function missingToken(): AppError {
  return new AppError(
    'unauthenticated',
    'This request needs a token: send Authorization: Bearer <token>.',
    { headers: { 'www-authenticate': challenge({}) } },
  );
}

/**
 * A token that cannot be used. The detail says why only in terms that help an honest client
 * (expired, revoked, malformed); an unknown token and a wrong secret read the same.
 */
export function invalidToken(detail: string): AppError {
  return new AppError('unauthenticated', detail, {
    headers: {
      'www-authenticate': challenge({ error: 'invalid_token', error_description: detail }),
    },
  });
}

/** A request that passes credentials some other way than the Authorization header. */
export function invalidRequest(detail: string): AppError {
  return new AppError('unauthenticated', detail, {
    headers: {
      'www-authenticate': challenge({ error: 'invalid_request', error_description: detail }),
    },
  });
}

export function insufficientScope(scope: Scope): AppError {
  return new AppError('insufficient-scope', `This operation needs a token with scope ${scope}.`, {
    extensions: { required_scope: scope },
    headers: {
      'www-authenticate': challenge({ error: 'insufficient_scope', scope }),
    },
  });
}
