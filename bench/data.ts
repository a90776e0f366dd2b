/**
 * Deterministic, realistic-looking todo data for the benchmark: words a search can find,
 * varied statuses, priorities, labels and due dates. One seed gives the same rows every run.
 */
import { v7 as uuidv7 } from 'uuid';
import { TODO_PRIORITIES, TODO_STATUSES } from '../src/todos/todo.schemas.js';
import type { NewTodoRow } from '../src/todos/todo.table.js';
import type { TodoPriority, TodoStatus } from '../src/todos/todo.schemas.js';

/** The word a search scenario looks for; it appears in about 1 % of the rows and nowhere else. */
export const SEARCH_WORD = 'invoice';
export const SEARCH_WORD_SHARE = 0.01;

/** mulberry32: small, fast, good enough for test data. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Random = () => number;

export function pick<T>(random: Random, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function weighted<T>(random: Random, entries: readonly (readonly [T, number])[]): T {
  let r = random();
  for (const [value, weight] of entries) {
    r -= weight;
    if (r < 0) return value;
  }
  const last = entries.at(-1);
  if (!last) throw new Error('weighted pick from an empty list');
  return last[0];
}

const VERBS = [
  'Call',
  'Email',
  'Review',
  'Fix',
  'Plan',
  'Book',
  'Buy',
  'Prepare',
  'Write',
  'Update',
  'Schedule',
  'Clean',
  'Check',
  'Renew',
  'Cancel',
  'Order',
  'Pay',
  'Draft',
  'Organise',
  'Test',
  'Deploy',
  'Research',
  'Submit',
  'Return',
  'Pick up',
];
const ADJECTIVES = [
  'quarterly',
  'weekly',
  'urgent',
  'new',
  'old',
  'shared',
  'annual',
  'monthly',
  'broken',
  'missing',
  'draft',
  'final',
  'personal',
  'team',
  'kitchen',
  'garden',
  'project',
  'client',
  'family',
  'spare',
];
const NOUNS = [
  'report',
  'budget',
  'meeting',
  'dentist',
  'flight',
  'groceries',
  'car insurance',
  'passport',
  'presentation',
  'roadmap',
  'laptop',
  'bike',
  'garage door',
  'tax return',
  'contract',
  'newsletter',
  'birthday gift',
  'hotel',
  'release notes',
  'backup',
  'database migration',
  'landlord',
  'plumber',
  'library books',
  'gym membership',
  'doctor appointment',
  'conference talk',
  'team offsite',
  'code review',
  'design document',
];
const QUALIFIERS = [
  'before Friday',
  'for the marketing team',
  'with Alex',
  'for next week',
  'this weekend',
  'after lunch',
  'for the board',
  'and send notes',
  'before the trip',
  'for mum',
  'with the accountant',
  'on the shared drive',
  '',
  '',
  '',
];
const FILLER = [
  'remember',
  'to',
  'ask',
  'about',
  'the',
  'details',
  'and',
  'confirm',
  'dates',
  'with',
  'everyone',
  'involved',
  'bring',
  'documents',
  'copies',
  'receipt',
  'numbers',
  'budget',
  'follow',
  'up',
  'next',
  'steps',
  'check',
  'notes',
  'from',
  'last',
  'time',
  'call',
  'back',
  'if',
  'needed',
  'maybe',
  'also',
  'order',
  'spare',
  'parts',
  'agenda',
  'share',
  'summary',
  'afterwards',
];
const LABELS = [
  'work',
  'home',
  'errands',
  'finance',
  'health',
  'travel',
  'family',
  'admin',
  'reading',
  'shopping',
  'car',
  'garden',
  'school',
  'ops',
  'backend',
  'frontend',
  'q1',
  'q2',
  'q3',
  'q4',
  'someday',
  'waiting',
  'phone',
  'computer',
  'outside',
];

const STATUS_WEIGHTS: readonly (readonly [TodoStatus, number])[] = [
  ['open', 0.4],
  ['in_progress', 0.15],
  ['blocked', 0.05],
  ['deferred', 0.05],
  ['completed', 0.3],
  ['cancelled', 0.05],
];
const PRIORITY_WEIGHTS: readonly (readonly [TodoPriority, number])[] = [
  ['none', 0.3],
  ['low', 0.2],
  ['normal', 0.25],
  ['high', 0.15],
  ['urgent', 0.1],
];
// Keep the weights in step with the enums if values are added there.
if (STATUS_WEIGHTS.length !== TODO_STATUSES.length) throw new Error('status weights outdated');
if (PRIORITY_WEIGHTS.length !== TODO_PRIORITIES.length)
  throw new Error('priority weights outdated');

const DAY_MS = 86_400_000;
export const ORDER_STEP = 1024;

export function randomTitle(random: Random): string {
  const qualifier = pick(random, QUALIFIERS);
  const title = `${pick(random, VERBS)} ${pick(random, ADJECTIVES)} ${pick(random, NOUNS)}`;
  return qualifier ? `${title} ${qualifier}` : title;
}

export function randomSentence(random: Random, words: number): string {
  const parts: string[] = [];
  for (let i = 0; i < words; i++) parts.push(pick(random, FILLER));
  const text = parts.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

export function randomLabels(random: Random): string[] {
  const count = weighted(random, [
    [0, 0.35],
    [1, 0.35],
    [2, 0.2],
    [3, 0.1],
  ] as const);
  const labels = new Set<string>();
  while (labels.size < count) labels.add(pick(random, LABELS));
  return [...labels];
}

function randomBytes16(random: Random): Uint8Array {
  const bytes = new Uint8Array(16);
  for (let i = 0; i < 16; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

export interface RowGenerator {
  /** The `index`-th row (0-based); rows are generated in increasing creation order. */
  next(): NewTodoRow;
}

/**
 * Rows for one owner spread over the year before `end`, created in order (UUIDv7 ids and
 * `created_at` increase together), with positions in steps of 1024 from `firstPosition`.
 */
export function createRowGenerator(options: {
  readonly seed: number;
  readonly ownerId: string;
  readonly count: number;
  readonly end: number;
  readonly firstPosition: number;
}): RowGenerator {
  const random = createRandom(options.seed);
  const span = 365 * DAY_MS;
  const start = options.end - span;
  const step = Math.max(1, Math.floor(span / Math.max(1, options.count)));
  let index = 0;
  return {
    next(): NewTodoRow {
      const createdMs = start + index * step + Math.floor(random() * step);
      const position = options.firstPosition + index * ORDER_STEP;
      index++;
      const status = weighted(random, STATUS_WEIGHTS);
      const priority = weighted(random, PRIORITY_WEIGHTS);
      let title = randomTitle(random);
      let description: string | null =
        random() < 0.5 ? randomSentence(random, 6 + Math.floor(random() * 25)) : null;
      if (random() < SEARCH_WORD_SHARE) {
        if (description === null || random() < 0.6) title = `${title} (${SEARCH_WORD} #${index})`;
        else description = `${description} Attach the ${SEARCH_WORD}.`;
      }
      const dueKind = random();
      const dueMs = createdMs + Math.floor((random() - 0.3) * 120 * DAY_MS);
      const dueDate = dueKind < 0.35 ? new Date(dueMs).toISOString().slice(0, 10) : null;
      const dueAt = dueKind >= 0.35 && dueKind < 0.5 ? new Date(dueMs).toISOString() : null;
      const version = 1 + Math.floor(random() * 4);
      const updatedMs =
        version === 1
          ? createdMs
          : Math.min(options.end, createdMs + Math.floor(random() * 30 * DAY_MS));
      const created = new Date(createdMs).toISOString();
      const updated = new Date(updatedMs).toISOString();
      return {
        id: uuidv7({ msecs: createdMs, random: randomBytes16(random) }),
        owner_id: options.ownerId,
        title,
        description,
        status,
        priority,
        position,
        labels: JSON.stringify(randomLabels(random)),
        due_date: dueDate,
        due_at: dueAt,
        metadata: random() < 0.2 ? `{"source":"import","ref":"R-${index}"}` : '{}',
        version,
        completed_at: status === 'completed' ? updated : null,
        created_at: created,
        updated_at: updated,
      };
    },
  };
}
