import type { Db } from '../db/database.js';
import type { ApiKeyTable } from './api-key.table.js';

export type ApiKeyRow = ApiKeyTable;

/** Every SQL statement about API keys. */
export const apiKeysRepository = {
  async insert(db: Db, row: ApiKeyRow): Promise<void> {
    await db.insertInto('api_keys').values(row).execute();
  },

  findById(db: Db, id: string): Promise<ApiKeyRow | undefined> {
    return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  },

  list(db: Db, ownerId?: string): Promise<ApiKeyRow[]> {
    let query = db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
    if (ownerId !== undefined) query = query.where('owner_id', '=', ownerId);
    return query.execute();
  },

  /** Marks a key revoked; false when there is no such key. Revoking twice keeps the first time. */
  async revoke(db: Db, id: string, at: string): Promise<boolean> {
    const result = await db
      .updateTable('api_keys')
      .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(at)) }))
      .where('id', '=', id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  },

  async touch(db: Db, id: string, at: string): Promise<void> {
    await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  },
};
