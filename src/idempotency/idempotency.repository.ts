import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import type { IdempotencyKeyTable } from './idempotency-key.table.js';

/** Identifies one key: keys are scoped per owner, method and path. */
export interface IdempotencyScope {
  readonly ownerId: string;
  readonly method: string;
  readonly path: string;
  readonly key: string;
}

export type IdempotencyRecord = Selectable<IdempotencyKeyTable>;

function whereScope(scope: IdempotencyScope) {
  return {
    owner_id: scope.ownerId,
    method: scope.method,
    path: scope.path,
    key: scope.key,
  } as const;
}

export const idempotencyRepository = {
  find(db: Db, scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    return db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where((eb) => eb.and(whereScope(scope)))
      .executeTakeFirst();
  },

  /** Claims the key for a request that is starting, replacing an expired or abandoned record. */
  async claim(
    db: Db,
    scope: IdempotencyScope,
    claim: { fingerprint: string; lockedUntil: string; createdAt: string; expiresAt: string },
  ): Promise<void> {
    await db
      .insertInto('idempotency_keys')
      .values({
        ...whereScope(scope),
        fingerprint: claim.fingerprint,
        status_code: null,
        headers: null,
        body: null,
        locked_until: claim.lockedUntil,
        created_at: claim.createdAt,
        expires_at: claim.expiresAt,
      })
      .onConflict((oc) =>
        oc.columns(['owner_id', 'method', 'path', 'key']).doUpdateSet({
          fingerprint: claim.fingerprint,
          status_code: null,
          headers: null,
          body: null,
          locked_until: claim.lockedUntil,
          created_at: claim.createdAt,
          expires_at: claim.expiresAt,
        }),
      )
      .execute();
  },

  async complete(
    db: Db,
    scope: IdempotencyScope,
    response: { statusCode: number; headers: string; body: string },
  ): Promise<void> {
    await db
      .updateTable('idempotency_keys')
      .set({
        status_code: response.statusCode,
        headers: response.headers,
        body: response.body,
        locked_until: null,
      })
      .where((eb) => eb.and(whereScope(scope)))
      .execute();
  },

  async release(db: Db, scope: IdempotencyScope): Promise<void> {
    await db
      .deleteFrom('idempotency_keys')
      .where((eb) => eb.and(whereScope(scope)))
      .where('status_code', 'is', null)
      .execute();
  },

  async deleteExpired(db: Db, now: string): Promise<number> {
    const result = await db
      .deleteFrom('idempotency_keys')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
