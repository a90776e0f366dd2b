import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../test/helpers/test-database.js';
import { createDatabase } from './create-database.js';
import { migrateToLatest } from './migrator.js';

/**
 * Kysely's migrator finds its own tables through the dialect's introspector, whose stock
 * PostgreSQL version lists the tables of every schema and fails when another schema is dropped
 * meanwhile. Test runs, and services sharing a database, drop schemas at any time; migrating
 * must not care (src/db/current-schema-introspector.ts).
 */
describe('migrations on PostgreSQL while other schemas come and go', () => {
  it('all succeed', async () => {
    const churned = await createTestDatabase();
    const churn = createDatabase(churned.url);
    const churning = { on: true };
    let dropped = 0;
    const churner = (async () => {
      for (let i = 0; churning.on && i < 5000; i++) {
        const schema = sql.id(`t_churn_${process.pid}_${i}`);
        await sql`create schema ${schema}`.execute(churn.db);
        await sql`create table ${schema}.a (id serial primary key, body text)`.execute(churn.db);
        await sql`drop schema ${schema} cascade`.execute(churn.db);
        dropped++;
      }
    })();

    const migrated: number[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        const target = await createTestDatabase();
        const database = createDatabase(target.url);
        try {
          migrated.push((await migrateToLatest(database.db)).length);
        } finally {
          await database.close();
          await target.drop();
        }
      }
    } finally {
      churning.on = false;
      await churner;
      await churn.close();
      await churned.drop();
    }

    const allMigrations = migrated[0] ?? 0;
    expect(allMigrations).toBeGreaterThan(0);
    expect(migrated).toEqual(migrated.map(() => allMigrations));
    // The churn really overlapped the migrations (it is what used to break them).
    expect(dropped).toBeGreaterThan(12);
  }, 60_000);
});
