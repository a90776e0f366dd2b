import type { FastifyRequest } from 'fastify';
import { invalidRequest, invalidToken, missingToken } from './auth-errors.js';
import type { Principal, TokenVerifier } from './principal.js';
import { SCOPES } from './scopes.js';
import { ANONYMOUS_OWNER_ID } from './owner.js';

export interface AuthenticatorDeps {
  readonly apiKeys: TokenVerifier;
  /** Present only when a JWKS is configured. */
  readonly jwt: TokenVerifier | undefined;
  /** Whether a request without credentials acts as the one anonymous owner. */
  readonly anonymous: boolean;
}

export interface Authenticator {
  /** The principal behind a request, or a 401 `unauthenticated` AppError. */
  authenticate(request: FastifyRequest): Promise<Principal>;
}

const ANONYMOUS: Principal = {
  ownerId: ANONYMOUS_OWNER_ID,
  scopes: new Set(SCOPES),
  credential: { kind: 'anonymous' },
};

const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** Query parameters clients use to smuggle tokens into URLs, which end up in logs and history. */
export const TOKEN_QUERY_PARAMETERS: readonly string[] = ['access_token', 'token', 'api_key'];

function authorizationHeaders(request: FastifyRequest): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === 'authorization') count++;
  return count;
}

/**
 * Bearer tokens from the Authorization header only: `tdk_…` API keys, else JWTs when a JWKS is
 * configured. A presented token is always checked, even in anonymous mode, so that a client
 * never silently acts as someone else because its token was mistyped.
 */
export function createAuthenticator(deps: AuthenticatorDeps): Authenticator {
  return {
    async authenticate(request) {
      const query = request.query as Record<string, unknown> | undefined;
      if (query && TOKEN_QUERY_PARAMETERS.some((name) => Object.hasOwn(query, name))) {
        throw invalidRequest('Tokens are accepted only in the Authorization header.');
      }
      const header = request.headers.authorization;
      if (header === undefined) {
        if (deps.anonymous) return ANONYMOUS;
        throw missingToken();
      }
      // Node keeps only the first of repeated Authorization headers; refuse the ambiguity.
      if (authorizationHeaders(request) > 1) {
        throw invalidRequest('Send exactly one Authorization header.');
      }
      const token = BEARER.exec(header)?.[1];
      if (token === undefined) {
        throw invalidToken('The Authorization header must be Bearer followed by a token.');
      }
      if (token.startsWith('tdk_')) return deps.apiKeys.verify(token);
      if (deps.jwt) return deps.jwt.verify(token);
      throw invalidToken('The token is not valid.');
    },
  };
}
