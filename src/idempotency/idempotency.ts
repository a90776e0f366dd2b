import { createHash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { Database, Db } from '../db/database.js';
import { AppError } from '../http/app-error.js';
import {
  idempotencyRepository as repository,
  type IdempotencyScope,
} from './idempotency.repository.js';

/** A response as a write route produces it, and as a replay reproduces it. */
export interface WriteResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: unknown;
}

export interface IdempotentOutcome {
  readonly response: WriteResponse;
  readonly replayed: boolean;
}

/** How long a first request may hold its key before another attempt may take it over. */
const CLAIM_LEASE_MS = 60_000;

/**
 * Parses the `Idempotency-Key` header: a structured-field string (`"abc"`) or, leniently, the
 * bare token. 1–255 visible ASCII characters.
 */
export function parseIdempotencyKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const quoted = /^"(.*)"$/.exec(header);
  const key = quoted ? (quoted[1] ?? '') : header;
  if (!/^[\x21-\x7e]{1,255}$/.test(key) || (quoted && key.includes('"'))) {
    throw new AppError(
      'invalid-idempotency-key',
      'Idempotency-Key must be 1–255 visible ASCII characters.',
      { errors: [{ pointer: 'Idempotency-Key', code: 'format', detail: 'is malformed' }] },
    );
  }
  return key;
}

function fingerprintOf(body: unknown): string {
  return createHash('sha256')
    .update(stringify(body ?? null))
    .digest('hex');
}

/**
 * Runs write requests at most once per `Idempotency-Key` (IETF httpapi draft). Without a key
 * the work simply runs in one transaction. With a key, a first attempt claims it in its own
 * short transaction, then does the work and stores the response in a second one, so the change
 * and its replayable response commit together or not at all. Only successful responses are
 * stored: after a failure the key is released and the client may retry it.
 */
export function createIdempotency(deps: {
  readonly database: Database;
  readonly now: () => Date;
  readonly ttlHours: number;
}) {
  const { database, now, ttlHours } = deps;

  async function claimOrReplay(
    scope: IdempotencyScope,
    fingerprint: string,
  ): Promise<WriteResponse | undefined> {
    return database.writeTransaction(async (trx) => {
      const at = now();
      const claim = {
        fingerprint,
        lockedUntil: new Date(at.getTime() + CLAIM_LEASE_MS).toISOString(),
        createdAt: at.toISOString(),
        expiresAt: new Date(at.getTime() + ttlHours * 3_600_000).toISOString(),
      };
      if (await repository.claimNew(trx, scope, claim)) return undefined;
      const existing = await repository.findLocked(trx, scope);
      const live = existing && existing.expires_at > at.toISOString() ? existing : undefined;
      if (live) {
        if (live.fingerprint !== fingerprint) {
          throw new AppError(
            'idempotency-key-reused',
            'This Idempotency-Key was used for a request with a different body.',
          );
        }
        if (live.status_code !== null) {
          return {
            statusCode: live.status_code,
            headers: JSON.parse(live.headers ?? '{}') as Record<string, string>,
            body: JSON.parse(live.body ?? 'null') as unknown,
          };
        }
        if (live.locked_until !== null && live.locked_until > at.toISOString()) {
          throw new AppError(
            'idempotency-in-flight',
            'A request with this Idempotency-Key is still being processed; retry shortly.',
            { headers: { 'retry-after': '1' } },
          );
        }
      }
      await repository.reclaim(trx, scope, claim);
      return undefined;
    });
  }

  return {
    async run(
      scope: IdempotencyScope | undefined,
      body: unknown,
      work: (trx: Db) => Promise<WriteResponse>,
    ): Promise<IdempotentOutcome> {
      if (!scope) return { response: await database.writeTransaction(work), replayed: false };

      const fingerprint = fingerprintOf(body);
      const stored = await claimOrReplay(scope, fingerprint);
      if (stored) return { response: stored, replayed: true };
      try {
        const response = await database.writeTransaction(async (trx) => {
          const result = await work(trx);
          await repository.complete(trx, scope, {
            statusCode: result.statusCode,
            headers: JSON.stringify(result.headers),
            body: JSON.stringify(result.body),
          });
          return result;
        });
        return { response, replayed: false };
      } catch (error) {
        // Let the client retry the key; if even this fails, the claim's lease runs out.
        await database
          .writeTransaction((trx) => repository.release(trx, scope))
          .catch(() => undefined);
        throw error;
      }
    },

    /** Forgets keys past their retention; returns how many were removed. */
    purgeExpired(): Promise<number> {
      return database.writeTransaction((trx) => repository.deleteExpired(trx, now().toISOString()));
    },
  };
}

export type Idempotency = ReturnType<typeof createIdempotency>;
