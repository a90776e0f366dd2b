/**
 * Triggers set aside during a bulk load into a fresh SQLite file, their effect applied once for
 * every loaded row at the end. Row by row, the triggers that fire on an insert into `todos`
 * (its full-text key and index entry, the owner's todo count) took half of the seeding time:
 * 100,000 rows loaded in 13.2 s with them, 6.6 s without, and 0.9 s to do their work afterwards
 * in three statements.
 *
 * Only the insert triggers listed in `REPLAYS` can be set aside (the others fire on updates and
 * deletes, which a load does not make): when a migration adds another insert trigger, the load
 * keeps every trigger (slower, still right). What a replay stores is checked by
 * `checkTriggerEffects`, which `seed.ts` runs on every seeded file.
 */
import type SqliteDatabase from 'better-sqlite3';

type Sqlite = SqliteDatabase.Database;

/**
 * What each insert trigger does, for every todo loaded while it was away: those whose rowid is
 * above `before`, the largest one when the triggers were set aside.
 */
const REPLAYS: Readonly<Record<string, (sqlite: Sqlite, before: number) => void>> = {
  todos_count_insert(sqlite, before) {
    // `where` before `group by`: without one SQLite would read `on conflict` as a join constraint.
    sqlite
      .prepare(
        `insert into owner_usage (owner_id, todo_count)
         select owner_id, count(*) from todos where rowid > ? group by owner_id
         on conflict (owner_id) do update set todo_count = todo_count + excluded.todo_count`,
      )
      .run(before);
  },
  todos_search_insert(sqlite, before) {
    // Keys in insertion order, as the trigger hands them out one row at a time.
    sqlite
      .prepare(
        'insert into todo_search_keys (todo_id) select id from todos where rowid > ? order by rowid',
      )
      .run(before);
    sqlite
      .prepare(
        `update todos set search_key = (select k.rowid from todo_search_keys k where k.todo_id = todos.id)
         where rowid > ?`,
      )
      .run(before);
    sqlite
      .prepare(
        `insert into todos_fts (rowid, title, description)
         select search_key, title, description from todos where rowid > ? order by rowid`,
      )
      .run(before);
  },
};

interface Trigger {
  readonly name: string;
  readonly sql: string;
}

/** `… after insert on <table> …`; a trigger's body says `insert into`, never `insert on`. */
const firesOnInsert = (trigger: Trigger): boolean => /\binsert\s+on\s/i.test(trigger.sql);

/**
 * Drops every trigger when each one that fires on an insert has a replay; returns
 * what puts them back (after replaying them for the rows loaded meanwhile), or undefined when
 * the triggers had to stay.
 */
export function setTriggersAside(sqlite: Sqlite): (() => void) | undefined {
  const triggers = sqlite
    .prepare("select name, sql from sqlite_master where type = 'trigger'")
    .all() as Trigger[];
  const inserts = triggers.filter(firesOnInsert).map((trigger) => trigger.name);
  if (inserts.some((name) => !(name in REPLAYS))) return undefined;
  const before = (
    sqlite.prepare('select coalesce(max(rowid), 0) as n from todos').get() as { n: number }
  ).n;
  for (const trigger of triggers) sqlite.exec(`drop trigger "${trigger.name}"`);
  return () => {
    sqlite.transaction(() => {
      for (const name of inserts) REPLAYS[name]?.(sqlite, before);
      for (const trigger of triggers) sqlite.exec(trigger.sql);
    })();
  };
}

/**
 * What the insert triggers leave, checked for every todo of a seeded file: its full-text key is
 * its own, and each owner's count is its number of todos not deleted. Returns what is wrong.
 */
export function checkTriggerEffects(sqlite: Sqlite, tables: readonly string[]): string[] {
  const problems: string[] = [];
  const number = (query: string): number => (sqlite.prepare(query).get() as { n: number }).n;
  if (tables.includes('todo_search_keys')) {
    const wrongKeys = number(`
      select count(*) as n from todos t left join todo_search_keys k on k.rowid = t.search_key
      where k.todo_id is not t.id`);
    if (wrongKeys > 0) problems.push(`${wrongKeys} todos without their own full-text key`);
  }
  if (tables.includes('owner_usage')) {
    const wrongCounts = number(`
      select count(*) as n from (
        select owner_id, count(*) as todos from todos where deleted_at is null group by owner_id
      ) c left join owner_usage u using (owner_id)
      where u.todo_count is not c.todos`);
    if (wrongCounts > 0) problems.push(`${wrongCounts} owners whose todo count is wrong`);
  }
  return problems;
}
