import { AppError } from '../http/app-error.js';
import { labelKey } from './todo-keys.js';
import {
  LIMITS,
  SORT_FIELDS,
  TODO_PRIORITIES,
  TODO_STATUSES,
  type ListFiltersQuery,
  type SortField,
  type TodoPriority,
  type TodoStatus,
} from './todo.schemas.js';

/**
 * Reads the list's query parameters (filters and `sort`) into what the repository queries by,
 * rejecting bad values with a 400 `invalid-parameter` that names the parameter.
 */

/**
 * Which todos a list or bulk delete covers; every condition must hold. Every query is also
 * scoped by owner. Times are UTC text as stored (`YYYY-MM-DDTHH:MM:SS.sssZ`).
 */
export interface TodoFilter {
  readonly statuses?: readonly TodoStatus[] | undefined;
  readonly completed?: boolean | undefined;
  readonly priorities?: readonly TodoPriority[] | undefined;
  /** Label keys (`labelKey`) a todo must all have. */
  readonly allLabels?: readonly string[] | undefined;
  /** Label keys of which a todo must have at least one. */
  readonly anyLabels?: readonly string[] | undefined;
  /** Due strictly before this moment (see `dueMoment` for all-day todos). */
  readonly dueBefore?: string | undefined;
  /** Due at or after this moment. */
  readonly dueAfter?: string | undefined;
  /** Overdue (`true`) or not (`false`) at `now`: due before `now` and not completed/cancelled. */
  readonly overdue?: { readonly value: boolean; readonly now: string } | undefined;
  readonly createdAfter?: string | undefined;
  readonly createdBefore?: string | undefined;
  readonly updatedSince?: string | undefined;
  /** Words to search title and description for (see `todo-search.ts`), NFC, trimmed. */
  readonly search?: string | undefined;
  /** Deleted todos match too (lists only); otherwise they never do. */
  readonly includeDeleted?: boolean | undefined;
}

export interface SortKey {
  readonly field: SortField;
  readonly descending: boolean;
}

export const DEFAULT_SORT: readonly SortKey[] = [
  { field: 'order', descending: false },
  { field: 'created_at', descending: false },
];

/** Most values a comma-list filter takes (a todo has at most this many labels, too). */
const MAX_LIST_ITEMS = LIMITS.labels;

function invalid(parameter: string, code: string, detail: string): AppError {
  return new AppError('invalid-parameter', `${parameter} ${detail}.`, {
    errors: [{ pointer: parameter, code, detail }],
  });
}

/** A comma-separated list: items trimmed, none empty, at most `MAX_LIST_ITEMS` distinct. */
function commaList(parameter: string, raw: string): string[] {
  const items = raw.split(',').map((item) => item.trim());
  if (items.some((item) => item === '')) {
    throw invalid(parameter, 'format', 'must be a comma-separated list without empty items');
  }
  const distinct = [...new Set(items)];
  if (distinct.length > MAX_LIST_ITEMS) {
    throw invalid(parameter, 'maxItems', `must list at most ${MAX_LIST_ITEMS} values`);
  }
  return distinct;
}

function enumList<T extends string>(
  parameter: string,
  raw: string | undefined,
  allowed: readonly T[],
): T[] | undefined {
  if (raw === undefined) return undefined;
  const items = commaList(parameter, raw);
  const unknown = items.filter((item) => !(allowed as readonly string[]).includes(item));
  if (unknown.length > 0) {
    throw invalid(
      parameter,
      'enum',
      `must be a comma-separated list of: ${allowed.join(', ')} (unknown: ${unknown.join(', ')})`,
    );
  }
  // Canonical order, so that equivalent spellings bind the same cursors.
  return allowed.filter((value) => items.includes(value));
}

function labelList(parameter: string, raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const items = commaList(parameter, raw);
  if (items.some((item) => Array.from(item).length > LIMITS.labelLength)) {
    throw invalid(parameter, 'maxLength', `labels have at most ${LIMITS.labelLength} characters`);
  }
  return [...new Set(items.map(labelKey))].sort();
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
// A space where the offset's sign belongs was a `+` that the query string decoded.
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+\- ])(\d{2}):(\d{2}))$/;

/** Milliseconds since the epoch for UTC calendar fields, or NaN if they name no real time. */
function utcTime(fields: readonly number[]): number {
  const [year = 0, month = 1, day = 1, hour = 0, minute = 0, second = 0, ms = 0] = fields;
  if (hour > 23 || minute > 59 || second > 59) return NaN;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  const same =
    date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
  return same ? date.getTime() : NaN;
}

/**
 * An RFC 3339 date-time (any offset) or a `YYYY-MM-DD` date (that day's start in UTC), as
 * stored UTC text. Fractions of a millisecond are truncated.
 */
export function parseInstant(parameter: string, raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  let time = NaN;
  const date = DATE.exec(raw);
  const dateTime = DATE_TIME.exec(raw);
  if (date) {
    time = utcTime(date.slice(1, 4).map(Number));
  } else if (dateTime) {
    const [, y, mo, d, h, mi, s, fraction = '', zulu, sign, oh = '0', om = '0'] = dateTime;
    const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
    time = utcTime([y, mo, d, h, mi, s].map(Number).concat(ms));
    if (!zulu && (Number(oh) > 23 || Number(om) > 59)) time = NaN;
    const offset = zulu ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
    time -= offset * 60_000;
  }
  const utc = Number.isNaN(time) ? '' : new Date(time).toISOString();
  if (!/^\d{4}-/.test(utc)) {
    throw invalid(
      parameter,
      'format',
      'must be an RFC 3339 date-time (e.g. 2026-03-01T09:30:00Z; encode + as %2B) or a date (YYYY-MM-DD), within the years 0000–9999',
    );
  }
  return utc;
}

/** `sort`: comma list of fields, each optionally prefixed with `-` for descending. */
export function parseSort(raw: string | undefined): readonly SortKey[] {
  if (raw === undefined) return DEFAULT_SORT;
  const keys: SortKey[] = [];
  for (const item of raw.split(',').map((part) => part.trim())) {
    const descending = item.startsWith('-');
    const field = descending ? item.slice(1) : item;
    if (!(SORT_FIELDS as readonly string[]).includes(field)) {
      throw invalid(
        'sort',
        'enum',
        `must be a comma-separated list of ${SORT_FIELDS.join(', ')}, each optionally prefixed with - (unknown: "${item}")`,
      );
    }
    if (keys.some((key) => key.field === field)) {
      throw invalid('sort', 'duplicate', `names ${field} more than once`);
    }
    keys.push({ field: field as SortField, descending });
  }
  return keys;
}

function parseSearch(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const search = raw.normalize('NFC').trim();
  if (search === '') throw invalid('q', 'minLength', 'must not be blank');
  return search;
}

/** The filters of `GET` and `DELETE /api/todos`; `now` decides what is overdue. */
export function parseFilter(query: ListFiltersQuery, now: Date): TodoFilter {
  return {
    statuses: enumList('status', query.status, TODO_STATUSES),
    completed: query.completed === undefined ? undefined : query.completed === 'true',
    priorities: enumList('priority', query.priority, TODO_PRIORITIES),
    allLabels: labelList('labels', query.labels),
    anyLabels: labelList('labels_any', query.labels_any),
    dueBefore: parseInstant('due_before', query.due_before),
    dueAfter: parseInstant('due_after', query.due_after),
    overdue:
      query.overdue === undefined
        ? undefined
        : { value: query.overdue === 'true', now: now.toISOString() },
    createdAfter: parseInstant('created_after', query.created_after),
    createdBefore: parseInstant('created_before', query.created_before),
    updatedSince: parseInstant('updated_since', query.updated_since),
    search: parseSearch(query.q),
  };
}
