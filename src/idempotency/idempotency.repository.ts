import type { Selectable } from 'kysely';
import type { Db } from '../db/database.js';
import { dialectOf } from '../db/dialect.js';
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

export interface Claim {
  readonly fingerprint: string;
  readonly lockedUntil: string;
  readonly createdAt: string;
  readonly expiresAt: string;
}

function claimColumns(claim: Claim) {
  return {
    fingerprint: claim.fingerprint,
    status_code: null,
    headers: null,
    body: null,
    locked_until: claim.lockedUntil,
    created_at: claim.createdAt,
    expires_at: claim.expiresAt,
  };
}

export const idempotencyRepository = {
  /**
   * Claims a key nobody holds; false when a record exists. Of concurrent first attempts exactly
   * one inserts: on PostgreSQL the others wait for it to commit, then find its row.
   */
  async claimNew(db: Db, scope: IdempotencyScope, claim: Claim): Promise<boolean> {
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({ ...whereScope(scope), ...claimColumns(claim) })
      .onConflict((oc) => oc.columns(['owner_id', 'method', 'path', 'key']).doNothing())
      .returning('key')
      .executeTakeFirst();
    return inserted !== undefined;
  },

  /** The existing record, locked until the end of the transaction (serialized on SQLite). */
  findLocked(db: Db, scope: IdempotencyScope): Promise<IdempotencyRecord | undefined> {
    const query = db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where((eb) => eb.and(whereScope(scope)));
    return (dialectOf(db) === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  },

  /** Takes over an expired or abandoned record, which the caller holds locked. */
  async reclaim(db: Db, scope: IdempotencyScope, claim: Claim): Promise<void> {
    await db
      .updateTable('idempotency_keys')
      .set(claimColumns(claim))
      .where((eb) => eb.and(whereScope(scope)))
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
