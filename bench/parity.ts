/**
 * The parity check both seeders run before loading: one todo created through the service
 * (`createTodosService` inside `database.writeTransaction`, on the database `DATABASE_URL`
 * names) and the same todo written by a seeding path must be stored identically. This file
 * holds what the two databases share; each seeder reads the stored rows its own way.
 */
import { ANONYMOUS_OWNER_ID } from '../src/auth/owner.js';
import { createDatabase } from '../src/db/create-database.js';
import { createCursorCodec } from '../src/todos/todo-cursor.js';
import type { Todo } from '../src/todos/todo.schemas.js';
import type { NewTodoRow } from '../src/todos/todo.table.js';
import { createTodosService } from '../src/todos/todos.service.js';

/** Id of the todo the service creates, and of its copy written by a seeding path. */
/**
 * Tables keyed by `todo_id` that hold history, not the todo's state: the outbox. Seeded todos
 * stand for todos written before the benchmark, whose events are past their retention.
 */
export const HISTORY_TABLES: readonly string[] = ['todo_events'];

export const PARITY_SERVICE_ID = '01900000-0000-7000-8000-000000000001';
export const PARITY_SEEDED_ID = '01900000-0000-7000-8000-000000000002';

/** Creates the parity todo through the service, over a connection of its own to `url`. */
export async function createParityTodo(url: string): Promise<Todo> {
  const when = new Date('2025-01-02T03:04:05.678Z');
  const body = {
    title: 'Parity check: pay the Éclair invoice',
    description: 'Compare the service path with the seeding path.',
    status: 'in_progress' as const,
    priority: 'high' as const,
    order: 7,
    labels: ['Finance', 'admin', 'finance'],
    due_date: '2025-02-03',
    metadata: { source: 'bench' },
  };
  const database = createDatabase(url);
  try {
    const service = createTodosService({
      cursors: createCursorCodec('bench-parity-secret-0123456789abcdef'),
      now: () => when,
      newId: () => PARITY_SERVICE_ID,
      todoQuota: Number.MAX_SAFE_INTEGER,
    });
    return await database.writeTransaction((trx) =>
      service.create(trx, { ownerId: ANONYMOUS_OWNER_ID, baseUrl: 'http://bench' }, body),
    );
  } finally {
    await database.close();
  }
}

/** The row a seeding path writes for the same todo, under `PARITY_SEEDED_ID`. */
export function parityRow(created: Todo): NewTodoRow {
  return {
    id: PARITY_SEEDED_ID,
    owner_id: ANONYMOUS_OWNER_ID,
    title: created.title,
    description: created.description,
    status: created.status,
    priority: created.priority,
    position: created.order,
    labels: JSON.stringify(created.labels),
    due_date: created.due_date,
    due_at: created.due_at,
    metadata: JSON.stringify(created.metadata),
    version: 1,
    completed_at: created.completed_at,
    created_at: created.created_at,
    updated_at: created.updated_at,
  };
}

/** Names of the stored values (columns, `<table>[]` of derived rows) that differ. */
export function differences(
  expected: Readonly<Record<string, unknown>>,
  actual: Readonly<Record<string, unknown>>,
): string[] {
  return [...new Set([...Object.keys(expected), ...Object.keys(actual)])].filter(
    (key) => expected[key] !== actual[key],
  );
}
