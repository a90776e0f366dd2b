/**
 * Seeds a benchmark schema on PostgreSQL the way `seed.ts` seeds a SQLite file, with the same
 * rows (`data.ts`, same seed and end time) and the same checks:
 *
 * 1. The project's migrations create the schema (`search_path` points at a fresh `bench_<hex>`).
 * 2. The parity check (`parity.ts`) creates one todo through the service and the same todo
 *    through a seeding path, and compares every stored column (`search_vector` included) and
 *    the rows of every table keyed by `todo_id`. The first path that matches is used:
 *    - "direct": per batch, one `INSERT … SELECT FROM unnest($1::text[], …)` of every column of
 *      `todos` the schema lists (derived ones from `src/todos/todo-derived.ts`), and one of the
 *      label rows; the triggers (search vector, owner usage) run as for the service.
 *    - "repository": `todosRepository.insert` for each row, through Kysely: slower, correct by
 *      construction.
 * 3. Rows go in transactions of `BATCH` rows with `synchronous_commit = off` (the next batch is
 *    generated while the server stores the previous one). A fresh schema is loaded without its
 *    secondary indexes (dropped first, created again from their exact definitions at the end),
 *    then `VACUUM (ANALYZE)`: statistics for the planner, and the visibility map so that
 *    index-only scans need not visit the heap — what a long-lived table would have.
 * 4. Verified: row count, the owner's usage counter, `search_vector` on every row, and a search
 *    finds every todo whose title or description has the search word.
 */
import { randomBytes } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { ANONYMOUS_OWNER_ID } from '../src/auth/owner.js';
import { createDatabase } from '../src/db/create-database.js';
import type { Tables } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { derivedColumns } from '../src/todos/todo-derived.js';
import { labelKey } from '../src/todos/todo-keys.js';
import type { NewTodoRow, TodoRow } from '../src/todos/todo.table.js';
import { TODO_ROW_COLUMNS } from '../src/todos/todo.table.js';
import { todosRepository } from '../src/todos/todos.repository.js';
import { todoRowToTodo } from '../src/todos/todos.service.js';
import { createRowGenerator, SEARCH_WORD } from './data.js';
import {
  createParityTodo,
  differences,
  HISTORY_TABLES,
  PARITY_SEEDED_ID,
  PARITY_SERVICE_ID,
  parityRow,
} from './parity.js';
import { ORDER_START, SEED, type SeedPath, type SeedResult } from './seed.js';

/**
 * Rows per transaction (one INSERT each). Small on purpose: the owner-usage trigger updates the
 * owner's counter row once per todo, and within one transaction each update adds a version that
 * the next one must step over, so a row's cost grows with the transaction (measured: ≈ 27 µs of
 * server CPU per row at 1,000, ≈ 73 µs at 10,000).
 */
const BATCH = 1_000;

/** Writes a batch of todos, with whatever the service stores with them, in one transaction. */
type BatchWriter = (rows: readonly NewTodoRow[]) => Promise<void>;

/** A schema of its own on a shared server. */
export interface PostgresSchema {
  readonly schema: string;
  /** The server URL with `search_path` set to the schema: the service's `DATABASE_URL`. */
  readonly url: string;
  drop(): Promise<void>;
}

/** `url` with every connection's `search_path` set to `schema` (libpq's `options`). */
export function withSearchPath(url: string, schema: string): string {
  const parsed = new URL(url);
  const options = [parsed.searchParams.get('options'), `-c search_path=${schema}`];
  parsed.searchParams.set('options', options.filter((option) => option !== null).join(' '));
  // URLSearchParams writes spaces as '+', which connection strings do not decode.
  return parsed.toString().replaceAll('+', '%20');
}

async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url, application_name: 'todo-api-bench' });
  await client.connect();
  return client;
}

async function onServer(url: string, text: string): Promise<void> {
  const client = await connect(url);
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

/** Creates an empty schema `bench_<random>` on the server `serverUrl`. */
export async function createPostgresSchema(serverUrl: string): Promise<PostgresSchema> {
  const schema = `bench_${randomBytes(6).toString('hex')}`;
  await onServer(serverUrl, `create schema "${schema}"`);
  return {
    schema,
    url: withSearchPath(serverUrl, schema),
    drop: () => onServer(serverUrl, `drop schema if exists "${schema}" cascade`),
  };
}

/** `version()` of the server, shortened: "PostgreSQL 15.20 (Debian …)". */
export async function serverVersion(url: string): Promise<string> {
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ version: string }>('select version() as version');
    return (rows[0]?.version ?? 'unknown').replace(/ on .*$/, '');
  } finally {
    await client.end();
  }
}

interface ColumnInfo {
  column_name: string;
  udt_name: string;
  is_nullable: 'YES' | 'NO';
  column_default: string | null;
  is_identity: 'YES' | 'NO';
}

async function columnsOf(client: pg.Client, table: string): Promise<ColumnInfo[]> {
  const { rows } = await client.query<ColumnInfo>(
    `select column_name, udt_name, is_nullable, column_default, is_identity
     from information_schema.columns
     where table_schema = current_schema() and table_name = $1 and is_generated = 'NEVER'
     order by ordinal_position`,
    [table],
  );
  return rows;
}

/**
 * The direct path, or undefined when the schema has a required column this benchmark cannot
 * fill (then only the repository path can seed).
 */
async function directWriter(client: pg.Client): Promise<BatchWriter | undefined> {
  const sample = createRowGenerator({
    seed: 1,
    ownerId: ANONYMOUS_OWNER_ID,
    count: 1,
    end: Date.now(),
    firstPosition: 0,
  }).next();
  const known = new Set([...Object.keys(sample), ...Object.keys(derivedColumns(sample))]);
  const columns = await columnsOf(client, 'todos');
  const missing = columns.filter(
    (c) => !known.has(c.column_name) && c.is_nullable === 'NO' && c.column_default === null,
  );
  if (missing.length > 0) return undefined;
  const used = columns.filter((c) => known.has(c.column_name));
  const names = used.map((c) => c.column_name);
  const insertTodos = `insert into todos (${names.map((n) => `"${n}"`).join(', ')})
    select * from unnest(${used.map((c, i) => `$${i + 1}::${c.udt_name}[]`).join(', ')})`;
  const labelColumns = new Set((await columnsOf(client, 'todo_labels')).map((c) => c.column_name));
  const withLabels = ['owner_id', 'label_key', 'todo_id'].every((name) => labelColumns.has(name));
  const insertLabels = `insert into todo_labels (owner_id, label_key, todo_id)
    select * from unnest($1::text[], $2::text[], $3::text[])`;

  return async (rows) => {
    const values = names.map(() => new Array<unknown>(rows.length));
    const labels: [string[], string[], string[]] = [[], [], []];
    rows.forEach((row, r) => {
      const record: Record<string, unknown> = { ...row, ...derivedColumns(row) };
      names.forEach((name, c) => {
        const column = values[c];
        if (column) column[r] = record[name] ?? null;
      });
      for (const key of new Set((JSON.parse(row.labels) as string[]).map(labelKey))) {
        labels[0].push(row.owner_id);
        labels[1].push(key);
        labels[2].push(row.id);
      }
    });
    await client.query('begin');
    try {
      await client.query(insertTodos, values);
      if (withLabels && labels[0].length > 0) await client.query(insertLabels, labels);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw error;
    }
  };
}

/** The repository path over a Kysely instance of its own (one connection). */
function repositoryWriter(url: string): { write: BatchWriter; close: () => Promise<void> } {
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 1 }) }),
  });
  return {
    write: (rows) =>
      db.transaction().execute(async (trx) => {
        for (const row of rows) await todosRepository.insert(trx, row);
      }),
    close: () => db.destroy(),
  };
}

/** Opens the writer of `path`; `close` releases what it opened (not `client`). */
async function writerFor(
  client: pg.Client,
  url: string,
  path: SeedPath,
): Promise<{ write: BatchWriter; close: () => Promise<void> }> {
  if (path === 'repository') return repositoryWriter(url);
  const write = await directWriter(client);
  if (!write) throw new Error('the direct seeding path cannot fill this schema');
  return { write, close: () => Promise.resolve() };
}

/** Tables other than `todos` with a `todo_id` column: rows the service keeps per todo. */
async function derivedTablesOf(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select table_name as name from information_schema.columns
     where table_schema = current_schema() and column_name = 'todo_id' and table_name <> 'todos'
     order by 1`,
  );
  return rows.map((row) => row.name).filter((name) => !HISTORY_TABLES.includes(name));
}

/** Everything stored for todo `id`, minus its id and surrogate integer keys, comparable. */
async function storedFor(client: pg.Client, id: string): Promise<Record<string, unknown>> {
  const { rows } = await client.query<Record<string, unknown>>(
    'select * from todos where id = $1',
    [id],
  );
  const todo = rows[0];
  if (!todo) return {};
  const { id: _id, ...columns } = todo;
  const stored: Record<string, unknown> = { ...columns };
  for (const table of await derivedTablesOf(client)) {
    const surrogate = (await columnsOf(client, table))
      .filter((c) => c.is_identity === 'YES' || (c.column_default ?? '').startsWith('nextval('))
      .map((c) => c.column_name);
    const derived = await client.query<Record<string, unknown>>(
      `select * from "${table}" where todo_id = $1`,
      [id],
    );
    stored[`${table}[]`] = derived.rows
      .map((row) =>
        JSON.stringify(
          Object.entries(row).filter(([name]) => name !== 'todo_id' && !surrogate.includes(name)),
        ),
      )
      .sort()
      .join('\n');
  }
  return stored;
}

/**
 * Creates one todo through the service, then the same todo through each seeding path in turn,
 * and returns the first path that stores exactly what the service stores.
 */
async function chooseSeedPath(url: string): Promise<{ path: SeedPath; derived: string[] }> {
  const created = await createParityTodo(url);
  const client = await connect(url);
  try {
    const expected = await storedFor(client, PARITY_SERVICE_ID);
    const row = parityRow(created);
    const report: string[] = [];
    for (const candidate of ['direct', 'repository'] as const) {
      if (candidate === 'direct' && !(await directWriter(client))) {
        report.push('direct: the schema has a required column it cannot fill');
        continue;
      }
      const writer = await writerFor(client, url, candidate);
      try {
        await writer.write([row]);
      } finally {
        await writer.close();
      }
      const actual = await storedFor(client, PARITY_SEEDED_ID);
      await client.query('delete from todos where id = $1', [PARITY_SEEDED_ID]);
      const differing = differences(expected, actual);
      if (differing.length === 0) {
        await client.query('delete from todos where id = $1', [PARITY_SERVICE_ID]);
        return { path: candidate, derived: await derivedTablesOf(client) };
      }
      report.push(`${candidate}: differs in ${differing.join(', ')}`);
    }
    throw new Error(
      `No seeding path stores todos the way the service does on PostgreSQL (${report.join('; ')}). ` +
        'Update bench/seed-postgres.ts.',
    );
  } finally {
    await client.end();
  }
}

/**
 * Drops the secondary indexes of `todos` and `todo_labels` (those that back no constraint) and
 * returns their exact definitions, to create them again after a bulk load.
 */
async function dropIndexes(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `select quote_ident(ic.relname) as name, pg_get_indexdef(i.indexrelid) as definition
     from pg_index i
     join pg_class ic on ic.oid = i.indexrelid
     join pg_class tc on tc.oid = i.indrelid
     join pg_namespace n on n.oid = tc.relnamespace
     where n.nspname = current_schema() and tc.relname in ('todos', 'todo_labels')
       and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)`,
  );
  for (const row of rows) await client.query(`drop index ${row.name}`);
  return rows.map((row) => row.definition);
}

/** A connection for loading: commits need not wait for the WAL flush; no statement timeout. */
async function connectForLoading(url: string): Promise<pg.Client> {
  const client = await connect(url);
  await client.query('set synchronous_commit = off');
  await client.query('set statement_timeout = 0');
  return client;
}

/**
 * Inserts `count` generated rows through the seeding `path`; returns their ids. With
 * `rebuildIndexes` (a fresh schema nobody else uses), secondary indexes are dropped during the
 * load and created again at the end.
 */
export async function insertRowsPostgres(
  url: string,
  options: {
    count: number;
    seed: number;
    firstPosition: number;
    end: number;
    path: SeedPath;
    rebuildIndexes?: boolean;
  },
  onProgress?: (done: number) => void,
): Promise<string[]> {
  const fresh = options.rebuildIndexes === true;
  const client = await connectForLoading(url);
  const writer = await writerFor(client, url, options.path);
  try {
    const indexes = fresh ? await dropIndexes(client) : [];
    const generator = createRowGenerator({ ...options, ownerId: ANONYMOUS_OWNER_ID });
    const ids = new Array<string>(options.count);
    let done = 0;
    // The next batch is generated while the server stores the previous one.
    let writing: Promise<void> = Promise.resolve();
    while (done < options.count) {
      const rows: NewTodoRow[] = [];
      for (const end = Math.min(options.count, done + BATCH); done < end; done++) {
        const row = generator.next();
        rows.push(row);
        ids[done] = row.id;
      }
      await writing;
      onProgress?.(done - rows.length);
      writing = writer.write(rows);
    }
    await writing;
    onProgress?.(done);
    if (indexes.length > 0) {
      await client.query("set maintenance_work_mem = '256MB'");
      for (const index of indexes) await client.query(index);
    }
    return ids;
  } finally {
    await writer.close();
    await client.end();
  }
}

/** Deletes the given todos (leftovers of a delete pool) in short transactions. */
export async function deleteRowsPostgres(url: string, ids: readonly string[]): Promise<void> {
  const client = await connectForLoading(url);
  try {
    for (let i = 0; i < ids.length; i += BATCH) {
      await client.query('delete from todos where id = any($1::text[])', [ids.slice(i, i + BATCH)]);
    }
  } finally {
    await client.end();
  }
}

async function countOf(client: pg.Client, text: string, values: unknown[] = []): Promise<number> {
  const { rows } = await client.query<{ n: string }>(text, values);
  return Number(rows[0]?.n ?? Number.NaN);
}

/** `VACUUM (ANALYZE)` of every table in the schema; then the stored-data checks. */
async function finishAndVerify(url: string, rows: number): Promise<{ searchRows: number }> {
  const client = await connect(url);
  try {
    await client.query('set statement_timeout = 0');
    const tables = await client.query<{ name: string }>(
      `select quote_ident(table_name) as name from information_schema.tables
       where table_schema = current_schema() and table_type = 'BASE TABLE'`,
    );
    for (const table of tables.rows) await client.query(`vacuum (analyze) ${table.name}`);

    const stored = await countOf(client, 'select count(*) as n from todos');
    if (stored !== rows) throw new Error(`seeded ${stored} rows instead of ${rows}`);
    const usage = await countOf(
      client,
      'select todo_count as n from owner_usage where owner_id = $1',
      [ANONYMOUS_OWNER_ID],
    );
    if (usage !== rows) throw new Error(`owner_usage counts ${usage} todos for ${rows} seeded`);
    const columns = (await columnsOf(client, 'todos')).map((c) => c.column_name);
    if (!columns.includes('search_vector')) return { searchRows: Number.NaN };
    const searchRows = await countOf(
      client,
      'select count(*) as n from todos where search_vector is not null',
    );
    if (searchRows !== rows) {
      throw new Error(`search_vector is set on ${searchRows} of ${rows} todos`);
    }
    const found = await countOf(
      client,
      "select count(*) as n from todos where search_vector @@ to_tsquery('simple', $1)",
      [SEARCH_WORD],
    );
    const expected = await countOf(
      client,
      "select count(*) as n from todos where title ilike '%' || $1 || '%' or description ilike '%' || $1 || '%'",
      [SEARCH_WORD],
    );
    if (found !== expected) {
      throw new Error(
        `search_vector finds ${found} todos with "${SEARCH_WORD}", a scan ${expected}`,
      );
    }
    return { searchRows };
  } finally {
    await client.end();
  }
}

/** Bytes of every table of the schema, indexes and TOAST included. */
async function schemaBytes(url: string): Promise<number> {
  const client = await connect(url);
  try {
    return await countOf(
      client,
      `select coalesce(sum(pg_total_relation_size(c.oid)), 0) as n
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = current_schema() and c.relkind = 'r'`,
    );
  } finally {
    await client.end();
  }
}

/**
 * Migrates the (empty) schema `url` points at and seeds `rows` todos of the anonymous owner,
 * the same rows `seedDatabase` writes for the same `end`.
 */
export async function seedPostgres(
  url: string,
  rows: number,
  onProgress?: (done: number) => void,
  end = Date.now(),
): Promise<SeedResult> {
  const started = performance.now();
  const database = createDatabase(url);
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  const chosen = await chooseSeedPath(url);
  const ids = await insertRowsPostgres(
    url,
    {
      count: rows,
      seed: SEED,
      firstPosition: ORDER_START,
      end,
      path: chosen.path,
      rebuildIndexes: true,
    },
    onProgress,
  );
  const { searchRows } = await finishAndVerify(url, rows);
  const seconds = (performance.now() - started) / 1000;
  return {
    rows,
    seconds,
    ids,
    ftsRows: Number.isNaN(searchRows) ? undefined : searchRows,
    derivedTables: chosen.derived,
    path: chosen.path,
    fileBytes: await schemaBytes(url),
  };
}

/** The last migration applied to the schema. */
export async function lastMigrationPostgres(url: string): Promise<string> {
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ name: string }>(
      'select name from kysely_migration order by name desc limit 1',
    );
    return rows[0]?.name ?? 'none';
  } catch {
    return 'unknown';
  } finally {
    await client.end();
  }
}

/** The todo JSON the ceiling answers with: a seeded row through the service's own mapper. */
export async function sampleTodoJsonPostgres(url: string, id: string): Promise<string> {
  const client = await connect(url);
  try {
    const { rows } = await client.query<TodoRow>(
      `select ${TODO_ROW_COLUMNS.map((c) => `"${c}"`).join(', ')} from todos where id = $1`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new Error(`seeded todo ${id} not found`);
    return JSON.stringify(todoRowToTodo(row, 'http://127.0.0.1'));
  } finally {
    await client.end();
  }
}
