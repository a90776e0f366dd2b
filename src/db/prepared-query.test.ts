import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/helpers/test-database.js';
import { createDatabase } from './create-database.js';
import type { Database, Db } from './database.js';
import { migrateToLatest } from './migrator.js';
import { preparedQueries, preparedQuery } from './prepared-query.js';

describe('preparedQuery', () => {
  let testDatabase: TestDatabase;
  let database: Database;

  beforeAll(async () => {
    testDatabase = await createTestDatabase();
    database = createDatabase(testDatabase.url);
    await migrateToLatest(database.db);
    await database.db
      .insertInto('settings')
      .values([
        { key: 'alpha', value: 'one' },
        { key: 'beta', value: 'two' },
        { key: 'gamma', value: 'three' },
      ])
      .execute();
  });

  afterAll(async () => {
    await database.close();
    await testDatabase.drop();
  });

  it('runs with each call its own values, constants of the query kept', async () => {
    let builds = 0;
    const valueOf = preparedQuery(1, (db: Db, key: string) => {
      builds++;
      return db
        .selectFrom('settings')
        .select('value')
        .where('key', '=', key)
        .where('value', '!=', 'three');
    });
    expect(await valueOf(database.db, 'alpha')).toEqual([{ value: 'one' }]);
    expect(await valueOf(database.db, 'beta')).toEqual([{ value: 'two' }]);
    // The constant 'three' stays in the query: gamma is filtered out.
    expect(await valueOf(database.db, 'gamma')).toEqual([]);
    expect(await valueOf(database.db, 'missing')).toEqual([]);
    expect(builds).toBe(1);
  });

  it('fills an argument used several times, in any order, and inside transactions', async () => {
    const between = preparedQuery(2, (db: Db, high: string, low: string) =>
      db
        .selectFrom('settings')
        .select('key')
        .where('key', '>=', low)
        .where('key', '<=', high)
        .where('key', '!=', low)
        .orderBy('key'),
    );
    expect(await between(database.db, 'gamma', 'alpha')).toEqual([
      { key: 'beta' },
      { key: 'gamma' },
    ]);
    const keys = await database.writeTransaction((trx) => between(trx, 'beta', 'alpha'));
    expect(keys).toEqual([{ key: 'beta' }]);
  });

  it('writes with the values of each call', async () => {
    const rename = preparedQuery(2, (db: Db, key: string, value: string) =>
      db.updateTable('settings').set({ value }).where('key', '=', key).returning('value'),
    );
    expect(await database.writeTransaction((trx) => rename(trx, 'alpha', 'uno'))).toEqual([
      { value: 'uno' },
    ]);
    expect(await database.writeTransaction((trx) => rename(trx, 'beta', 'dos'))).toEqual([
      { value: 'dos' },
    ]);
    const stored = await database.db.selectFrom('settings').select(['key', 'value']).execute();
    expect(new Map(stored.map((row) => [row.key, row.value]))).toEqual(
      new Map([
        ['alpha', 'uno'],
        ['beta', 'dos'],
        ['gamma', 'three'],
      ]),
    );
  });

  it('keeps the most recently used shapes, up to its limit, and answers past it all the same', async () => {
    const made: string[] = [];
    const selectOf = preparedQueries(
      2,
      (columns: readonly ('key' | 'value')[]) => columns.join(),
      (columns) => {
        made.push(columns.join());
        return preparedQuery(1, (db: Db, key: string) =>
          db.selectFrom('settings').select(columns).where('key', '=', key),
        );
      },
    );
    expect(await selectOf(['value'])(database.db, 'gamma')).toEqual([{ value: 'three' }]);
    expect(await selectOf(['value'])(database.db, 'alpha')).toHaveLength(1);
    expect(await selectOf(['key'])(database.db, 'gamma')).toEqual([{ key: 'gamma' }]);
    // A third shape drops the least recently used one, `value`.
    expect(await selectOf(['key', 'value'])(database.db, 'gamma')).toEqual([
      { key: 'gamma', value: 'three' },
    ]);
    expect(await selectOf(['key'])(database.db, 'alpha')).toEqual([{ key: 'alpha' }]);
    expect(await selectOf(['value'])(database.db, 'beta')).toEqual([{ value: 'dos' }]);
    // `key` was used last but one, so `value` dropped `key,value`.
    expect(await selectOf(['key', 'value'])(database.db, 'beta')).toHaveLength(1);
    expect(made).toEqual(['value', 'key', 'key,value', 'value', 'key,value']);
  });

  it('refuses a query that does not use every argument as a value', async () => {
    const shaped = preparedQuery(2, (db: Db, key: string, _unused: string) =>
      db.selectFrom('settings').select('value').where('key', '=', key),
    );
    await expect(shaped(database.db, 'alpha', 'ignored')).rejects.toThrow(
      'a prepared query must use each of its 2 arguments as a value',
    );
  });
});
