import { sql, type Expression, type SqlBool } from 'kysely';
import type { Dialect } from '../db/dialect.js';

/**
 * The `q` filter — with migration 0006, the only code that knows full-text search: FTS5 on
 * SQLite, a `tsvector` on PostgreSQL, with the semantics documented on `q` on both.
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
  const phrases = phrasesOf(q).map((words) => `"${words.join(' ')}"*`);
  return phrases.length === 0 ? undefined : phrases.join(' ');
}

/**
 * The same query for PostgreSQL's `to_tsquery`: `e-mail` → `e <-> mail:*`, phrases joined by
 * `&`. Only letters and digits remain, so nothing in user input can be tsquery syntax.
 */
export function tsQuery(q: string): string | undefined {
  const phrases = phrasesOf(q).map((words) => `${words.join(' <-> ')}:*`);
  return phrases.length === 0 ? undefined : phrases.join(' & ');
}

/** Each whitespace-separated word of `q` as its runs of letters and digits. */
function phrasesOf(q: string): string[][] {
  return q
    .normalize('NFC')
    .split(/\s+/u)
    .map((word) => word.replace(NOT_WORD, ' ').trim())
    .filter((phrase) => phrase !== '')
    .map((phrase) => phrase.split(' '));
}

/**
 * Condition on `todos` for the search `q`: the todo's full-text key (migration 0012) is in the
 * (global) match set, and the owner condition of the surrounding query scopes it.
 *
 * An `ordered` query (a list) walks its sort index and probes the match set, materialised once
 * per query as FTS5 rowids: the unary `+` keeps SQLite from going from the matches to the todos
 * by the (owner, `search_key`) index, which would need a sort of every match. A count or bulk
 * delete does go that way, touching only the owner's matches.
 */
export function matchesSearch(
  q: string,
  dialect: Dialect,
  options: { readonly ordered: boolean },
): Expression<SqlBool> {
  if (dialect === 'postgres') return matchesSearchPostgres(q);
  const query = ftsQuery(q);
  if (query === undefined) return sql<SqlBool>`1 = 0`;
  const key = options.ordered ? sql`+todos.search_key` : sql`todos.search_key`;
  return sql<SqlBool>`${key} in (select rowid from todos_fts where todos_fts match ${query})`;
}

/** PostgreSQL: the GIN-indexed vector of migration 0006, queried with the same accent folding. */
function matchesSearchPostgres(q: string): Expression<SqlBool> {
  const query = tsQuery(q);
  if (query === undefined) return sql<SqlBool>`1 = 0`;
  return sql<SqlBool>`todos.search_vector @@ to_tsquery('simple',
    public.unaccent('public.unaccent'::regdictionary, ${query}))`;
}
