import type { Database } from './database.js';

/**
 * Returns the stored value of `key`, storing `create()` first if there is none. Safe when
 * several processes start at once: the first insert wins and everyone reads it back.
 */
export async function getOrCreateSetting(
  database: Database,
  key: string,
  create: () => string,
): Promise<string> {
  return database.writeTransaction(async (trx) => {
    await trx
      .insertInto('settings')
      .values({ key, value: create() })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    const row = await trx
      .selectFrom('settings')
      .select('value')
      .where('key', '=', key)
      .executeTakeFirstOrThrow();
    return row.value;
  });
}
