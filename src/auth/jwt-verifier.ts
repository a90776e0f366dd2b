import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwksCache,
  jwtVerify,
  type CryptoKey,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWKSCacheInput,
  type JWSHeaderParameters,
  type JWTPayload,
} from 'jose';

import type { JwtConfig } from '../config.js';
import type { AppError } from '../http/app-error.js';
import { invalidToken } from './auth-errors.js';
import type { Principal, TokenVerifier } from './principal.js';
import { isScope, type Scope } from './scopes.js';

/** An unknown `kid` refetches the JWKS at most this often; a failed fetch is retried no sooner. */
const REFETCH_COOLDOWN_MS = 30_000;
const FETCH_TIMEOUT_MS = 5_000;
/** While the JWKS answers, keys are refreshed this often, so removed (revoked) keys stop working. */
const CACHE_MAX_AGE_MS = 10 * 60_000;
/**
 * How long keys from the last successful fetch keep verifying while the JWKS is unreachable. An
 * issuer outage then does not log everyone out, yet a key it rotated out or revoked during the
 * outage is trusted for a bounded time only: a day covers an incident, not a decommissioning.
 */
const MAX_KEY_STALENESS_MS = 24 * 60 * 60_000;
/** OpenID Connect Core §2 caps `sub` at 255 ASCII characters; it becomes a stored owner id. */
const MAX_SUBJECT_LENGTH = 255;
/** Refused in `sub`: no database text column may hold NUL, and none belongs in an owner id. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

const NOT_VALID = 'The token is not valid.';

type KeySet = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey>;

/**
 * Verifies OIDC access tokens (RFC 9068) against the issuer's JWKS: signature with an allowed
 * algorithm, `iss`, `aud`, `exp` and `nbf` (with clock tolerance) and a `sub`, which becomes the
 * owner. Every failure rejects with `invalidToken`, whose detail never names keys or jose errors.
 */
export function createJwtVerifier(config: JwtConfig): TokenVerifier {
  const keys = createKeySet(config.jwksUrl);
  const options = {
    issuer: config.issuer,
    audience: config.audience,
    algorithms: [...config.algorithms],
    clockTolerance: config.clockToleranceSeconds,
    requiredClaims: ['sub', 'exp'],
  };

  return {
    async verify(token: string): Promise<Principal> {
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(token, keys, options));
      } catch (error) {
        throw rejection(error);
      }
      const { sub } = payload;
      if (
        typeof sub !== 'string' ||
        sub.length === 0 ||
        sub.length > MAX_SUBJECT_LENGTH ||
        CONTROL_CHARACTER.test(sub)
      ) {
        throw invalidToken(NOT_VALID);
      }
      // jose has checked that `iss` equals the configured issuer.
      return {
        ownerId: sub,
        scopes: scopesOf(payload),
        credential: { kind: 'jwt', issuer: config.issuer },
      };
    },
  };
}

/**
 * The scopes of ours a token grants: RFC 9068 puts them in `scope` (space-separated), some
 * issuers in `scp` (an array or a string). Unknown scopes are dropped, so a token meant for
 * other APIs authenticates with none.
 */
export function scopesOf(payload: JWTPayload): ReadonlySet<Scope> {
  const granted = [...scopeTokens(payload['scope']), ...scopeTokens(payload['scp'])];
  return new Set(granted.filter(isScope));
}

function scopeTokens(claim: unknown): string[] {
  if (typeof claim === 'string') return claim.split(' ');
  if (Array.isArray(claim)) return claim.filter((item): item is string => typeof item === 'string');
  return [];
}

function rejection(error: unknown): AppError {
  if (error instanceof errors.JWTExpired) return invalidToken('The token has expired.');
  if (
    error instanceof errors.JWTClaimValidationFailed &&
    error.claim === 'nbf' &&
    error.reason === 'check_failed'
  ) {
    return invalidToken('The token is not yet valid.');
  }
  return invalidToken(NOT_VALID);
}

/**
 * jose's remote key set, which caches keys and refetches for an unknown `kid` once per cooldown,
 * plus what it lacks: once its cache is older than `cacheMaxAge` it refetches before every use
 * and rejects when that fetch fails, even for keys it holds. Here a failed refresh falls back to
 * the keys of the last successful fetch (up to MAX_KEY_STALENESS_MS old), and is not retried for
 * a cooldown, so requests do not each wait on a JWKS that is down. A `kid` not among those keys
 * still fails.
 */
function createKeySet(jwksUrl: string): KeySet {
  // jose writes the JWKS and the time of every successful fetch here.
  const lastFetch: { uat?: number; jwks?: JSONWebKeySet } = {};
  const remote = createRemoteJWKSet(new URL(jwksUrl), {
    timeoutDuration: FETCH_TIMEOUT_MS,
    cooldownDuration: REFETCH_COOLDOWN_MS,
    cacheMaxAge: CACHE_MAX_AGE_MS,
    [jwksCache]: lastFetch as JWKSCacheInput,
  });
  let refreshFailedAt = Number.NEGATIVE_INFINITY;
  let fallback: { uat: number; keys: KeySet } | undefined;

  function lastFetchedKeys(): KeySet | undefined {
    const { uat, jwks } = lastFetch;
    if (uat === undefined || jwks === undefined || Date.now() - uat > MAX_KEY_STALENESS_MS) {
      return undefined;
    }
    if (fallback?.uat !== uat) fallback = { uat, keys: createLocalJWKSet(jwks) };
    return fallback.keys;
  }

  function withoutJwks(header: JWSHeaderParameters, token: FlattenedJWSInput, cause: unknown) {
    const keys = lastFetchedKeys();
    if (!keys) throw cause;
    return keys(header, token);
  }

  return async (header, token) => {
    if (Date.now() - refreshFailedAt < REFETCH_COOLDOWN_MS) {
      return withoutJwks(header, token, new errors.JOSEError('JWKS unreachable, retry pending'));
    }
    try {
      return await remote(header, token);
    } catch (error) {
      if (!isRefreshFailure(error)) throw error;
      refreshFailedAt = Date.now();
      return withoutJwks(header, token, error);
    }
  };
}

/**
 * The JWKS could not be fetched (network error, timeout, non-200 answer, not a key set), as
 * opposed to a key set that has no key for this token. Kept narrow so that no token can start
 * the retry back-off and so pause refreshes.
 */
function isRefreshFailure(error: unknown): boolean {
  if (!(error instanceof errors.JOSEError)) return true;
  return (
    error.code === errors.JOSEError.code ||
    error instanceof errors.JWKSTimeout ||
    error instanceof errors.JWKSInvalid
  );
}
