import { sql, type Kysely } from 'kysely';

/**
 * "Most urgent first, then soonest due" (`sort=-priority,due_at`, and its `priority,due_at`
 * twin) is the classic to-do order. With only the single-key indexes it walks the priority index
 * and sorts each run of equal priority by due: with five priorities, a run is a fifth of the
 * owner's todos, so the sort grew with the table (timeouts at 1,000,000 rows). These two indexes
 * serve both orders without any sort.
 */
const INDEXES = {
  todos_owner_urgent_due: sql`(owner_id, priority_rank desc, due_asc_key, id)`,
  todos_owner_priority_due: sql`(owner_id, priority_rank, due_asc_key, id)`,
};

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [name, columns] of Object.entries(INDEXES)) {
    await sql`create index ${sql.ref(name)} on todos ${columns}`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const name of Object.keys(INDEXES)) {
    await db.schema.dropIndex(name).execute();
  }
}
