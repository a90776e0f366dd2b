import type { Database } from '../db/database.js';
import { generateApiKeyToken, hashSecret } from './api-key-token.js';
import { apiKeysRepository, type ApiKeyRow } from './api-keys.repository.js';
import type { Scope } from './scopes.js';

export interface NewApiKey {
  readonly ownerId: string;
  readonly scopes: readonly Scope[];
  readonly expiresAt?: Date | undefined;
  readonly name?: string | undefined;
}

export interface CreatedApiKey {
  readonly row: ApiKeyRow;
  /** The whole token: returned once, never stored. */
  readonly token: string;
}

/** Owner ids are opaque but printable: they appear in logs and in `tokens list`. */
export const OWNER_ID_PATTERN = /^[A-Za-z0-9._:@|+-]{1,200}$/;

export async function createApiKey(
  database: Database,
  key: NewApiKey,
  now: Date = new Date(),
): Promise<CreatedApiKey> {
  if (!OWNER_ID_PATTERN.test(key.ownerId)) {
    throw new RangeError('owner must be 1–200 characters of letters, digits and ._:@|+-');
  }
  if (key.scopes.length === 0) throw new RangeError('a key needs at least one scope');
  const { id, secret, token } = generateApiKeyToken();
  const row: ApiKeyRow = {
    id,
    owner_id: key.ownerId,
    name: key.name ?? null,
    scopes: [...new Set(key.scopes)].join(' '),
    secret_hash: hashSecret(secret),
    created_at: now.toISOString(),
    expires_at: key.expiresAt?.toISOString() ?? null,
    revoked_at: null,
    last_used_at: null,
  };
  await database.writeTransaction((trx) => apiKeysRepository.insert(trx, row));
  return { row, token };
}

export type ApiKeyStatus = 'active' | 'expired' | 'revoked';

export function statusOf(row: ApiKeyRow, now: Date = new Date()): ApiKeyStatus {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && row.expires_at <= now.toISOString()) return 'expired';
  return 'active';
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `--expires`: a duration (`90m`, `12h`, `30d`) from now, or an ISO 8601 date-time. */
export function parseExpiry(value: string, now: Date = new Date()): Date {
  const duration = /^(\d{1,6})([mhd])$/.exec(value);
  if (duration?.[1] && duration[2]) {
    const amount = Number(duration[1]);
    if (amount === 0) throw new RangeError('expires must be in the future');
    return new Date(now.getTime() + amount * UNIT_MS[duration[2] as keyof typeof UNIT_MS]);
  }
  const date = /^\d{4}-\d{2}-\d{2}/.test(value) ? new Date(value) : new Date(Number.NaN);
  if (Number.isNaN(date.getTime())) {
    throw new RangeError(`expires must be like 30d, 12h, 90m or an ISO date (got "${value}")`);
  }
  if (date <= now) throw new RangeError('expires must be in the future');
  return date;
}
