import type { TodoStatus } from '../../src/todos/todo.schemas.js';

/**
 * API.md §2 written out literally, independently of `src/todos/todo-status.ts`, so that the
 * tests hold the code to the published table rather than to itself. Rows are `from`, columns
 * are `to`.
 */
export const STATUSES: readonly TodoStatus[] = [
  'open',
  'in_progress',
  'blocked',
  'deferred',
  'completed',
  'cancelled',
];

export type Cell = '✓' | '✗' | '–';

// prettier-ignore
export const TABLE: Readonly<Record<TodoStatus, readonly Cell[]>> = {
  //            open  in_progress blocked deferred completed cancelled
  open:        ['–',  '✓',        '✓',    '✓',     '✓',      '✓'],
  in_progress: ['✓',  '–',        '✓',    '✓',     '✓',      '✓'],
  blocked:     ['✓',  '✓',        '–',    '✓',     '✓',      '✓'],
  deferred:    ['✓',  '✓',        '✓',    '–',     '✓',      '✓'],
  completed:   ['✓',  '✗',        '✗',    '✗',     '–',      '✗'],
  cancelled:   ['✓',  '✗',        '✗',    '✗',     '✗',      '–'],
};
