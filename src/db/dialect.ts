import { PostgresAdapter, type Kysely, type Transaction } from 'kysely';

/** The two databases the service runs on: embedded SQLite, or PostgreSQL for several instances. */
export type Dialect = 'sqlite' | 'postgres';

/** Which database a Kysely handle (database, transaction or connection) talks to. */
export function dialectOf(db: Pick<Kysely<never>, 'getExecutor'>): Dialect {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/**
 * Runs migration steps in one transaction. Kysely's migrator already wraps each migration in a
 * transaction where DDL is transactional (PostgreSQL) and not on SQLite, where the migration
 * opens its own.
 */
export async function inTransaction<DB>(
  db: Kysely<DB>,
  steps: (trx: Kysely<DB> | Transaction<DB>) => Promise<void>,
): Promise<void> {
  if (db.isTransaction) await steps(db);
  else await db.transaction().execute(steps);
}
