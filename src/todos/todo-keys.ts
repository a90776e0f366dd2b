import {
  TODO_PRIORITIES,
  TODO_STATUSES,
  type TodoPriority,
  type TodoStatus,
} from './todo.schemas.js';
import { DUE_KEY_NONE } from './todo.table.js';

/**
 * How todos compare when listed: pure functions from a todo's fields to the keys that filters
 * and sorts use. The repository stores them in derived columns (so that indexes can serve
 * them); tests use them as the oracle.
 */

/** `none` < `low` < `normal` < `high` < `urgent`: sorting by priority means by urgency. */
export function priorityRank(priority: TodoPriority): number {
  return TODO_PRIORITIES.indexOf(priority);
}

/** The lifecycle order: open, in_progress, blocked, deferred, completed, cancelled. */
export function statusRank(status: TodoStatus): number {
  return TODO_STATUSES.indexOf(status);
}

/**
 * The title's sort key: lower case without accents (NFD, combining marks dropped), compared by
 * code point. `Éclair`, `eclair` and `ECLAIR` tie, and ties fall to `id`.
 */
export function titleKey(title: string): string {
  // Lower-casing first: some capitals (İ) lower-case to a letter plus a combining mark.
  return title.toLowerCase().normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC');
}

/** Labels match case-insensitively, the same way label de-duplication compares them. */
export function labelKey(label: string): string {
  return label.normalize('NFC').trim().toLowerCase();
}

/** Time of day an all-day `due_date` stands for: the end of that day, in UTC. */
const END_OF_DAY = 'T23:59:59.999Z';

/**
 * The moment a todo is due, as sortable UTC text (`YYYY-MM-DDTHH:MM:SS.sssZ`), or `null` when
 * it has no due. An all-day `due_date` is due by the end of its day in UTC, so it becomes
 * overdue once that day is over and sorts after the timed todos of the same day.
 */
export function dueMoment(dueDate: string | null, dueAt: string | null): string | null {
  if (dueAt !== null) return dueAt;
  return dueDate === null ? null : `${dueDate}${END_OF_DAY}`;
}

/** Every derived key column of a todo row (migration 0004), from the fields they derive from. */
export function derivedKeys(row: {
  readonly title: string;
  readonly status: TodoStatus;
  readonly priority: TodoPriority;
  readonly due_date?: string | null;
  readonly due_at?: string | null;
}) {
  const due = dueMoment(row.due_date ?? null, row.due_at ?? null);
  return {
    priority_rank: priorityRank(row.priority),
    status_rank: statusRank(row.status),
    title_key: titleKey(row.title),
    due_asc_key: due ?? DUE_KEY_NONE.asc,
    due_desc_key: due ?? DUE_KEY_NONE.desc,
  };
}
