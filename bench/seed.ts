/**
 * Seeds a benchmark database (SQLite; `seed-postgres.ts` does the same on PostgreSQL).
 *
 * 1. The project's own migrations create every table, index, trigger and FTS table, so the
 *    seeded file has exactly the schema the service expects, whatever has landed since.
 * 2. A parity check (`parity.ts`, shared with `seed-postgres.ts`) creates one todo through the
 *    service (`createTodosService` inside `database.writeTransaction`) and the same todo through
 *    a seeding path, and compares the two stored rows column by column, and their rows in every
 *    table keyed by `todo_id` (labels, search keys, …). The first path that stores exactly what
 *    the service stores is used:
 *    - "direct": one prepared INSERT of every column of `todos` as the schema lists it, the
 *      derived ones computed with the project's own functions (`src/todos/todo-derived.ts`),
 *      plus prepared INSERTs of the label rows; triggers (FTS) and generated columns run as for
 *      the service. About 4× faster than going through Kysely for each row.
 *    - "repository": `todosRepository.insert` for each row, over a Kysely instance whose driver
 *      caches prepared statements: correct by construction, slower.
 *    A derived column or table that neither path fills like the service stops the benchmark
 *    instead of skewing it.
 * 3. Rows are written in large transactions with `synchronous=OFF` (a seed need not be
 *    durable; the service reopens the file with its own settings), then the WAL is checkpointed.
 *    Into a fresh file, indexes are built and triggers do their work after the load, once for
 *    all rows (`seed-triggers.ts`).
 * 4. The result is verified: row count; with a `todos_fts` table its row count and that a
 *    search finds every todo whose title or description has the search word; every todo's
 *    full-text key and each owner's todo count.
 */
import { closeSync, fsyncSync, openSync, statSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { ANONYMOUS_OWNER_ID } from '../src/auth/owner.js';
import { createDatabase } from '../src/db/create-database.js';
import type { Db, Tables } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { derivedColumns } from '../src/todos/todo-derived.js';
import { labelKey } from '../src/todos/todo-keys.js';
import type { NewTodoRow } from '../src/todos/todo.table.js';
import { todosRepository } from '../src/todos/todos.repository.js';
import { createRowGenerator, SEARCH_WORD } from './data.js';
import { checkTriggerEffects, setTriggersAside } from './seed-triggers.js';
import {
  createParityTodo,
  differences,
  HISTORY_TABLES,
  PARITY_SEEDED_ID,
  PARITY_SERVICE_ID,
  parityRow,
} from './parity.js';

/** Rows per transaction into a fresh file, and into one the service has open. */
const BATCH = 50_000;
const SHARED_BATCH = 2_000;

type Sqlite = SqliteDatabase.Database;
type Statement = ReturnType<Sqlite['prepare']>;

export type SeedPath = 'direct' | 'repository';

/** Writes one todo and whatever the service stores with it. */
type Writer = (row: NewTodoRow) => void | Promise<void>;

/** A Kysely instance over `sqlite` that prepares each distinct SQL text once. */
function cachedKysely(sqlite: Sqlite): Db {
  const statements = new Map<string, Statement>();
  return new Kysely<Tables>({
    dialect: new SqliteDialect({
      database: {
        close: () => {
          // The caller closes the connection.
        },
        prepare: (sql: string) => {
          let statement = statements.get(sql);
          if (!statement) {
            statement = sqlite.prepare(sql);
            statements.set(sql, statement);
          }
          return statement;
        },
      },
    }),
  });
}

function repositoryWriter(sqlite: Sqlite): Writer {
  const db = cachedKysely(sqlite);
  return async (row) => {
    await todosRepository.insert(db, row);
  };
}

interface ColumnInfo {
  name: string;
  type: string;
  notnull: number;
  dflt_value: unknown;
  pk: number;
  hidden: number;
}

function columnsOf(sqlite: Sqlite, table: string): ColumnInfo[] {
  return sqlite.prepare('select * from pragma_table_xinfo(?)').all(table) as ColumnInfo[];
}

/**
 * The direct path, or undefined when the schema has a required column this benchmark cannot
 * fill (then only the repository path can seed).
 */
function directWriter(sqlite: Sqlite): Writer | undefined {
  // Generated columns (hidden 2 or 3) compute themselves.
  const columns = columnsOf(sqlite, 'todos').filter((c) => c.hidden === 0);
  const sample = createRowGenerator({
    seed: 1,
    ownerId: ANONYMOUS_OWNER_ID,
    count: 1,
    end: Date.now(),
    firstPosition: 0,
  }).next();
  const known = new Set([...Object.keys(sample), ...Object.keys(derivedColumns(sample))]);
  const used = columns.filter((c) => known.has(c.name));
  const missing = columns.filter(
    (c) => !known.has(c.name) && c.notnull === 1 && c.dflt_value === null,
  );
  if (missing.length > 0) return undefined;
  const names = used.map((c) => c.name);
  const insertTodo = sqlite.prepare(
    `insert into todos (${names.map((n) => `"${n}"`).join(', ')}) values (${names.map(() => '?').join(', ')})`,
  );
  const labelColumns = new Set(columnsOf(sqlite, 'todo_labels').map((c) => c.name));
  const insertLabel =
    labelColumns.has('owner_id') && labelColumns.has('label_key') && labelColumns.has('todo_id')
      ? sqlite.prepare('insert into todo_labels (owner_id, label_key, todo_id) values (?, ?, ?)')
      : undefined;
  const values = new Array<unknown>(names.length);
  return (row) => {
    const record: Record<string, unknown> = { ...row, ...derivedColumns(row) };
    for (let i = 0; i < names.length; i++) values[i] = record[names[i] ?? ''];
    insertTodo.run(values);
    if (insertLabel) {
      const keys = new Set((JSON.parse(row.labels) as string[]).map(labelKey));
      for (const key of keys) insertLabel.run(row.owner_id, key, row.id);
    }
  };
}

function writerFor(sqlite: Sqlite, path: SeedPath): Writer {
  if (path === 'repository') return repositoryWriter(sqlite);
  const writer = directWriter(sqlite);
  if (!writer) throw new Error('the direct seeding path cannot fill this schema');
  return writer;
}

/** Opens `path` for bulk loading: fast and not durable; the WAL is folded in on `close`. */
function openForLoading(path: string, exclusive = false): SqliteDatabase.Database {
  const sqlite = new SqliteDatabase(path, { timeout: 10_000 });
  // A fresh file nobody else has open can skip the journal altogether (a failed seed is simply
  // thrown away); the service sets WAL again when it opens the file.
  sqlite.pragma(exclusive ? 'journal_mode = OFF' : 'journal_mode = WAL');
  if (exclusive) sqlite.pragma('locking_mode = EXCLUSIVE');
  sqlite.pragma('synchronous = OFF');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('cache_size = -131072');
  sqlite.pragma('temp_store = MEMORY');
  return sqlite;
}

function tableNames(sqlite: Sqlite): string[] {
  return (
    sqlite.prepare("select name from sqlite_master where type = 'table' order by name").all() as {
      name: string;
    }[]
  ).map((row) => row.name);
}

function count(sqlite: Sqlite, table: string): number {
  const row = sqlite.prepare(`select count(*) as n from "${table}"`).get() as { n: number };
  return row.n;
}

/** Tables other than `todos` with a `todo_id` column: rows the service keeps per todo. */
function derivedTablesOf(sqlite: Sqlite): string[] {
  return tableNames(sqlite).filter(
    (table) =>
      table !== 'todos' &&
      !HISTORY_TABLES.includes(table) &&
      columnsOf(sqlite, table).some((c) => c.name === 'todo_id'),
  );
}

/** Everything stored for todo `id`, minus its id and surrogate integer keys, comparable. */
function storedFor(sqlite: Sqlite, id: string): Record<string, unknown> {
  const todo = sqlite.prepare('select * from todos where id = ?').get(id) as
    Record<string, unknown> | undefined;
  if (!todo) return {};
  // The full-text key (SQLite, migration 0012) differs per todo by design, like the id.
  const { id: _id, search_key: _searchKey, ...columns } = todo;
  const stored: Record<string, unknown> = { ...columns };
  for (const table of derivedTablesOf(sqlite)) {
    const surrogate = columnsOf(sqlite, table)
      .filter((c) => c.pk === 1 && c.type.toLowerCase() === 'integer')
      .map((c) => c.name);
    const rows = (
      sqlite.prepare(`select * from "${table}" where todo_id = ?`).all(id) as Record<
        string,
        unknown
      >[]
    ).map((row) =>
      JSON.stringify(
        Object.entries(row).filter(([name]) => name !== 'todo_id' && !surrogate.includes(name)),
      ),
    );
    stored[`${table}[]`] = rows.sort().join('\n');
  }
  return stored;
}

/**
 * Creates one todo through the service, then the same todo through each seeding path in turn,
 * and returns the first path that stores exactly what the service stores.
 */
async function chooseSeedPath(path: string): Promise<{ path: SeedPath; derived: string[] }> {
  const created = await createParityTodo(`sqlite:${path}`);
  const sqlite = openForLoading(path);
  try {
    const expected = storedFor(sqlite, PARITY_SERVICE_ID);
    const row = parityRow(created);
    const report: string[] = [];
    for (const candidate of ['direct', 'repository'] as const) {
      if (candidate === 'direct' && !directWriter(sqlite)) {
        report.push('direct: the schema has a required column it cannot fill');
        continue;
      }
      await writerFor(sqlite, candidate)(row);
      const actual = storedFor(sqlite, PARITY_SEEDED_ID);
      sqlite.prepare('delete from todos where id = ?').run(PARITY_SEEDED_ID);
      const differing = differences(expected, actual);
      if (differing.length === 0) {
        sqlite.prepare('delete from todos where id = ?').run(PARITY_SERVICE_ID);
        return { path: candidate, derived: derivedTablesOf(sqlite) };
      }
      report.push(`${candidate}: differs in ${differing.join(', ')}`);
    }
    throw new Error(
      `No seeding path stores todos the way the service does (${report.join('; ')}). ` +
        'Update bench/seed.ts.',
    );
  } finally {
    sqlite.close();
  }
}

export interface SeedResult {
  readonly rows: number;
  readonly seconds: number;
  readonly ids: string[];
  /** Rows in the search index after seeding (`todos_fts`; on PostgreSQL, `search_vector`). */
  readonly ftsRows: number | undefined;
  /** Tables keyed by `todo_id` that the parity check compared. */
  readonly derivedTables: string[];
  /** Size of the database file (PostgreSQL: of the schema's tables and indexes). */
  readonly fileBytes: number;
  /** How rows were written (see the top of this file). */
  readonly path: SeedPath;
}

/**
 * Drops every explicit index (those with SQL in `sqlite_master`; constraint indexes stay) and
 * returns their exact SQL, to create them again after a bulk load: building an index from
 * sorted data is much faster than inserting a million random keys into it one by one.
 */
function dropIndexes(sqlite: Sqlite): string[] {
  const indexes = sqlite
    .prepare("select name, sql from sqlite_master where type = 'index' and sql is not null")
    .all() as { name: string; sql: string }[];
  for (const index of indexes) sqlite.exec(`drop index "${index.name}"`);
  return indexes.map((index) => index.sql);
}

/**
 * Inserts `count` generated rows through the seeding `path`; returns their ids. With
 * `rebuildIndexes` (a fresh database that nobody else uses), indexes are dropped during the
 * load and created again, with their original SQL, at the end, and the triggers are set aside
 * and their work done for all rows at once (`seed-triggers.ts`).
 */
export async function insertRows(
  databasePath: string,
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
  const sqlite = openForLoading(databasePath, fresh);
  try {
    const indexes = fresh ? dropIndexes(sqlite) : [];
    const restoreTriggers = fresh ? setTriggersAside(sqlite) : undefined;
    const write = writerFor(sqlite, options.path);
    const generator = createRowGenerator({ ...options, ownerId: ANONYMOUS_OWNER_ID });
    const ids = new Array<string>(options.count);
    let done = 0;
    // Into a database the service has open, short transactions: it waits for the write lock at
    // most its busy timeout (5 s) before answering 503.
    const batch = fresh ? BATCH : SHARED_BATCH;
    while (done < options.count) {
      const end = Math.min(options.count, done + batch);
      sqlite.exec('begin immediate');
      try {
        for (; done < end; done++) {
          const row = generator.next();
          await write(row);
          ids[done] = row.id;
        }
        sqlite.exec('commit');
      } catch (error) {
        sqlite.exec('rollback');
        throw error;
      }
      onProgress?.(done);
    }
    // Before the indexes: the replay sets each todo's full-text key, which one of them holds.
    restoreTriggers?.();
    if (indexes.length > 0) {
      sqlite.pragma('cache_size = -1048576');
      sqlite.transaction(() => {
        for (const index of indexes) sqlite.exec(index);
      })();
    }
    return ids;
  } finally {
    if (fresh) sqlite.pragma('journal_mode = WAL');
    else sqlite.pragma('wal_checkpoint(TRUNCATE)');
    sqlite.close();
  }
}

/** Deletes the given todos (leftovers of a benchmark's delete pool) in short transactions. */
export function deleteRows(path: string, ids: readonly string[]): void {
  const sqlite = openForLoading(path);
  try {
    const statement = sqlite.prepare('delete from todos where id = ?');
    const deleteSome = sqlite.transaction((some: readonly string[]) => {
      for (const id of some) statement.run(id);
    });
    for (let i = 0; i < ids.length; i += SHARED_BATCH) deleteSome(ids.slice(i, i + SHARED_BATCH));
    sqlite.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    sqlite.close();
  }
}

/** Checks the seeded file: row count, and the FTS index against a plain scan. */
function verify(path: string, rows: number): number | undefined {
  const sqlite = new SqliteDatabase(path, { readonly: true });
  try {
    const stored = count(sqlite, 'todos');
    if (stored !== rows) throw new Error(`seeded ${stored} rows instead of ${rows}`);
    const tables = tableNames(sqlite);
    const problems = checkTriggerEffects(sqlite, tables);
    if (problems.length > 0) throw new Error(`the seeded file is wrong: ${problems.join('; ')}`);
    if (!tables.includes('todos_fts')) return undefined;
    const ftsRows = count(sqlite, 'todos_fts');
    if (ftsRows !== rows) {
      throw new Error(`todos_fts has ${ftsRows} rows for ${rows} todos: not in sync`);
    }
    const found = (
      sqlite
        .prepare('select count(*) as n from todos_fts where todos_fts match ?')
        .get(SEARCH_WORD) as { n: number }
    ).n;
    const expected = (
      sqlite
        .prepare(
          "select count(*) as n from todos where title like '%' || ? || '%' or description like '%' || ? || '%'",
        )
        .get(SEARCH_WORD, SEARCH_WORD) as { n: number }
    ).n;
    if (found !== expected) {
      throw new Error(`todos_fts finds ${found} todos with "${SEARCH_WORD}", a scan ${expected}`);
    }
    return ftsRows;
  } finally {
    sqlite.close();
  }
}

/**
 * Creates `path` with the project's schema and `rows` todos of the anonymous owner, created over
 * the year before `end` (the same `end` gives the same rows on both databases).
 */
export async function seedDatabase(
  path: string,
  rows: number,
  onProgress?: (done: number) => void,
  end = Date.now(),
): Promise<SeedResult> {
  const started = performance.now();
  const database = createDatabase(`sqlite:${path}`);
  try {
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
  const chosen = await chooseSeedPath(path);
  const ids = await insertRows(
    path,
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
  // The kernel writes a freshly loaded file back over the next minute or so; done meanwhile, the
  // first measurements ran slower (a search at 1M rows: 3.4 ms against 1.7 ms once written).
  const file = openSync(path, 'r+');
  try {
    fsyncSync(file);
  } finally {
    closeSync(file);
  }
  const seconds = (performance.now() - started) / 1000;
  const ftsRows = verify(path, rows);
  return {
    rows,
    seconds,
    ids,
    ftsRows,
    derivedTables: chosen.derived,
    path: chosen.path,
    fileBytes: statSync(path).size,
  };
}

/** `order` of the first seeded todo; later ones follow in steps of 1024. */
export const ORDER_START = 1024;
/** Seed of the generated rows: both databases get the same ones. */
export const SEED = 20_251_121;
