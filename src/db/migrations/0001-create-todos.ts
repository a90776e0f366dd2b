import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('todos')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('owner_id', 'text', (col) => col.notNull())
    .addColumn('title', 'text', (col) => col.notNull())
    .addColumn('description', 'text')
    .addColumn('status', 'text', (col) =>
      col
        .notNull()
        .check(
          sql`status in ('open', 'in_progress', 'blocked', 'deferred', 'completed', 'cancelled')`,
        ),
    )
    .addColumn('priority', 'text', (col) =>
      col.notNull().check(sql`priority in ('none', 'low', 'normal', 'high', 'urgent')`),
    )
    .addColumn('position', 'double precision', (col) => col.notNull())
    .addColumn('labels', 'text', (col) => col.notNull())
    .addColumn('due_date', 'text')
    .addColumn('due_at', 'text')
    .addColumn('metadata', 'text', (col) => col.notNull())
    .addColumn('version', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('completed_at', 'text')
    .addColumn('created_at', 'text', (col) => col.notNull())
    .addColumn('updated_at', 'text', (col) => col.notNull())
    .addCheckConstraint('todos_one_due', sql`due_date is null or due_at is null`)
    .execute();

  // The default list order, and the same order within one status (the `status` filter).
  await db.schema
    .createIndex('todos_owner_order')
    .on('todos')
    .columns(['owner_id', 'position', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('todos_owner_status_order')
    .on('todos')
    .columns(['owner_id', 'status', 'position', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('todos').execute();
}
