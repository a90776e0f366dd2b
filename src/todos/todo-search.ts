import { sql, type Expression, type SqlBool } from 'kysely';

/**
 * The `q` filter on SQLite FTS5 — with migration 0006, the only code that knows FTS5. The
 * PostgreSQL port replaces this module (tsvector + `to_tsquery` with `:*` prefixes) and keeps
 * the semantics documented on `q`.
 */

/** Characters the `unicode61` tokenizer keeps in words (its default: letters, digits, Co). */
const NOT_WORD = /[^\p{L}\p{N}\p{Co}]+/gu;

/**
 * The FTS5 query for `q`, or `undefined` when `q` has no letter or digit (matches nothing).
 * Each whitespace-separated word becomes a quoted phrase of its letter/digit runs with a prefix
 * star: `e-mail` → `"e mail"*` (adjacent words, the last one a prefix). Quoting makes FTS5
 * syntax in user input (`"`, `*`, `OR`, `NEAR`, `-`, `:`, `^`, parentheses) plain text, and
 * since separators are replaced by spaces, nothing inside the quotes needs escaping. Phrases
 * separated by spaces are ANDed.
 */
export function ftsQuery(q: string): string | undefined {
  const phrases = q
    .normalize('NFC')
    .split(/\s+/u)
    .map((word) => word.replace(NOT_WORD, ' ').trim())
    .filter((phrase) => phrase !== '')
    .map((phrase) => `"${phrase}"*`);
  return phrases.length === 0 ? undefined : phrases.join(' ');
}

/**
 * Condition on `todos` for the search `q`: the todo's id is in the (global) match set, and the
 * owner condition of the surrounding query scopes it. The unary `+` stops SQLite from driving
 * the query from the match set by primary key, which would need a sort of every match; the
 * list instead walks its sort index and probes the match set, materialised once per query.
 */
export function matchesSearch(q: string): Expression<SqlBool> {
  const query = ftsQuery(q);
  if (query === undefined) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`+todos.id in (
    select k.todo_id from todos_fts f join todo_search_keys k on k.rowid = f.rowid
    where todos_fts match ${query}
  )`;
}
