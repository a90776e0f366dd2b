import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresDialect,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';

/**
 * Kysely's PostgreSQL introspector — which its migrator uses to find its own tables — lists the
 * tables of every schema of the database, calling functions on each of them. A schema another
 * service (or test) drops meanwhile makes that listing fail ("schema … does not exist",
 * "relation … does not exist"), and so the migration. Ours looks at the connection's
 * `current_schema()` only, the one the service works in, and reads the catalogue tables alone.
 */
export class CurrentSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<SchemaMetadata>`
      select nspname as name from pg_catalog.pg_namespace
    `.execute(this.db);
    return rows;
  }

  async getTables(options?: DatabaseMetadataOptions): Promise<TableMetadata[]> {
    const { rows } = await sql<{
      table: string;
      schema: string;
      kind: string;
      column: string;
      type: string;
      not_null: boolean;
      has_default: boolean;
      identity: string;
      default_text: string | null;
    }>`
      select c.relname as table, n.nspname as schema, c.relkind as kind,
             a.attname as column, format_type(a.atttypid, a.atttypmod) as type,
             a.attnotnull as not_null, a.atthasdef as has_default, a.attidentity as identity,
             pg_get_expr(d.adbin, d.adrelid) as default_text
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
      left join pg_catalog.pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
      where n.nspname = current_schema() and c.relkind in ('r', 'p', 'v', 'm', 'f')
      order by c.relname, a.attnum
    `.execute(this.db);
    const internal = new Set([DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE]);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (options?.withInternalKyselyTables !== true && internal.has(row.table)) continue;
      const table = tables.get(row.table) ?? {
        name: row.table,
        schema: row.schema,
        isView: row.kind === 'v' || row.kind === 'm',
        columns: [],
      };
      table.columns.push({
        name: row.column,
        dataType: row.type,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default || row.identity !== '',
        isAutoIncrementing: row.identity !== '' || (row.default_text ?? '').startsWith('nextval('),
      });
      tables.set(row.table, table);
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** PostgreSQL through `pg`, introspecting the current schema only (see above). */
export class CurrentSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}
