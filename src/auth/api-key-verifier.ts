import type { FastifyBaseLogger } from 'fastify';
import type { Database } from '../db/database.js';
import { parseApiKeyToken, secretMatches } from './api-key-token.js';
import { apiKeysRepository } from './api-keys.repository.js';
import { invalidToken } from './auth-errors.js';
import type { Principal, TokenVerifier } from './principal.js';
import { isScope } from './scopes.js';

/** `last_used_at` is written at most this often per key: a write per request would cost a commit. */
const LAST_USED_RESOLUTION_MS = 60_000;

/** A random hash compared against when the id is unknown, so both failures take one path. */
const UNKNOWN_KEY_HASH = '0'.repeat(64);

export interface ApiKeyVerifierDeps {
  readonly database: Database;
  readonly now: () => Date;
  readonly log: Pick<FastifyBaseLogger, 'warn'>;
}

/**
 * Checks `tdk_` tokens against the `api_keys` table on every request — no cache, so a
 * revocation takes effect on the next request. An unknown id and a wrong secret are
 * indistinguishable; only the holder of the right secret learns that a key expired or was revoked.
 */
export function createApiKeyVerifier(deps: ApiKeyVerifierDeps): TokenVerifier {
  const { database, now, log } = deps;
  const lastTouched = new Map<string, number>();

  async function recordUse(id: string, at: Date): Promise<void> {
    const previous = lastTouched.get(id);
    if (previous !== undefined && at.getTime() - previous < LAST_USED_RESOLUTION_MS) return;
    lastTouched.set(id, at.getTime());
    try {
      await database.writeTransaction((trx) => apiKeysRepository.touch(trx, id, at.toISOString()));
    } catch (error) {
      // Bookkeeping only: a full or read-only disk must not fail the request it describes.
      log.warn({ err: error, apiKeyId: id }, 'recording API key use failed');
    }
  }

  return {
    async verify(token): Promise<Principal> {
      const parsed = parseApiKeyToken(token);
      if (!parsed) throw invalidToken('The token is not valid.');
      const row = await apiKeysRepository.findById(database.db, parsed.id);
      const matches = secretMatches(parsed.secret, row?.secret_hash ?? UNKNOWN_KEY_HASH);
      if (!row || !matches) throw invalidToken('The token is not valid.');
      const at = now();
      if (row.revoked_at !== null) throw invalidToken('The token has been revoked.');
      if (row.expires_at !== null && row.expires_at <= at.toISOString()) {
        throw invalidToken('The token has expired.');
      }
      await recordUse(row.id, at);
      return {
        ownerId: row.owner_id,
        scopes: new Set(row.scopes.split(' ').filter(isScope)),
        credential: { kind: 'api-key', id: row.id },
      };
    },
  };
}
