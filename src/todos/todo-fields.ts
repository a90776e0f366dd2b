import type { FieldError } from '../http/app-error.js';
import { labelKey } from './todo-keys.js';
import { LIMITS, type TodoPriority, type TodoStatus } from './todo.schemas.js';

/** The writable state of a todo after normalisation: what PUT replaces and PATCH merges into. */
export interface TodoFields {
  title: string;
  description: string | null;
  status: TodoStatus;
  priority: TodoPriority;
  order: number;
  labels: string[];
  due_date: string | null;
  due_at: string | null;
  metadata: Record<string, string>;
}

/** Defaults of a new todo (and of fields a PUT omits), but `order`, which depends on the list. */
export const FIELD_DEFAULTS = {
  description: null,
  status: 'open',
  priority: 'none',
  labels: [],
  due_date: null,
  due_at: null,
  metadata: {},
} as const satisfies Partial<TodoFields>;

// C0 and C1 control characters. Titles and labels are single-line; descriptions keep tab, LF, CR.
/* eslint-disable no-control-regex -- matching control characters is the point */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const CONTROL_EXCEPT_WHITESPACE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/u;
/* eslint-enable no-control-regex */

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** Rules every stored string follows: well-formed UTF-16 (no lone surrogates) and NFC. */
function normalizeText(
  text: string,
  pointer: string,
  errors: FieldError[],
  rule: { trim: boolean; control: RegExp; min: number; max: number },
): string {
  if (!text.isWellFormed()) {
    errors.push({ pointer, code: 'unicode', detail: 'must not contain lone surrogates' });
    return text;
  }
  let value = text.normalize('NFC');
  if (rule.trim) value = value.trim();
  if (rule.control.test(value)) {
    errors.push({
      pointer,
      code: 'control-character',
      detail: 'must not contain control characters',
    });
  }
  const length = codePoints(value);
  if (length < rule.min) {
    errors.push({
      pointer,
      code: 'minLength',
      detail: `must have at least ${rule.min} character${rule.min === 1 ? '' : 's'} after trimming`,
    });
  } else if (length > rule.max) {
    errors.push({ pointer, code: 'maxLength', detail: `must have at most ${rule.max} characters` });
  }
  return value;
}

export function normalizeTitle(title: string, errors: FieldError[]): string {
  return normalizeText(title, '/title', errors, {
    trim: true,
    control: CONTROL,
    min: 1,
    max: LIMITS.titleLength,
  });
}

export function normalizeDescription(
  description: string | null,
  errors: FieldError[],
): string | null {
  if (description === null) return null;
  return normalizeText(description, '/description', errors, {
    trim: false,
    control: CONTROL_EXCEPT_WHITESPACE,
    min: 0,
    max: LIMITS.descriptionLength,
  });
}

/** Trims and NFC-normalises each label and drops later ones that differ only in case. */
export function normalizeLabels(labels: readonly string[], errors: FieldError[]): string[] {
  const seen = new Set<string>();
  const result: string[] = [];
  labels.forEach((label, index) => {
    const value = normalizeText(label, `/labels/${index}`, errors, {
      trim: true,
      control: CONTROL,
      min: 1,
      max: LIMITS.labelLength,
    });
    const key = labelKey(value);
    if (seen.has(key)) return;
    seen.add(key);
    result.push(value);
  });
  return result;
}

/** RFC 3339 with any offset → UTC with milliseconds; `null` stays `null`. */
export function normalizeDueAt(dueAt: string | null, errors: FieldError[]): string | null {
  if (dueAt === null) return null;
  const time = Date.parse(dueAt);
  if (Number.isNaN(time)) {
    errors.push({
      pointer: '/due_at',
      code: 'format',
      detail: 'must be a valid RFC 3339 date-time',
    });
    return dueAt;
  }
  const utc = new Date(time).toISOString();
  // An offset can push a year-0000 or year-9999 time out of RFC 3339's four-digit years
  // (toISOString then writes `-000001-…` or `+010000-…`), which no client could parse.
  if (!/^\d{4}-/.test(utc)) {
    errors.push({
      pointer: '/due_at',
      code: 'format',
      detail: 'must fall within the years 0000–9999 in UTC',
    });
    return dueAt;
  }
  return utc;
}

export function normalizeMetadata(
  metadata: Readonly<Record<string, string>>,
  errors: FieldError[],
): Record<string, string> {
  const result: Record<string, string> = {};
  if (Object.keys(metadata).length > LIMITS.metadataKeys) {
    errors.push({
      pointer: '/metadata',
      code: 'maxProperties',
      detail: `must have at most ${LIMITS.metadataKeys} keys`,
    });
  }
  for (const [key, value] of Object.entries(metadata)) {
    result[key] = normalizeText(value, `/metadata/${key}`, errors, {
      trim: false,
      control: CONTROL_EXCEPT_WHITESPACE,
      min: 0,
      max: LIMITS.metadataValueLength,
    });
  }
  return result;
}

/** Normalises a complete set of fields and checks the rules that span several of them. */
export function normalizeFields(fields: TodoFields, errors: FieldError[]): TodoFields {
  const normalized: TodoFields = {
    title: normalizeTitle(fields.title, errors),
    description: normalizeDescription(fields.description, errors),
    status: fields.status,
    priority: fields.priority,
    order: fields.order,
    labels: normalizeLabels(fields.labels, errors),
    due_date: fields.due_date,
    due_at: normalizeDueAt(fields.due_at, errors),
    metadata: normalizeMetadata(fields.metadata, errors),
  };
  if (normalized.due_date !== null && normalized.due_at !== null) {
    errors.push({
      pointer: '/due_at',
      code: 'conflict',
      detail: 'due_date and due_at cannot both be set; set the other to null',
    });
  }
  return normalized;
}
