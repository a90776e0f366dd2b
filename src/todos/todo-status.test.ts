import { describe, expect, it } from 'vitest';
import { AppError } from '../http/app-error.js';
import { assertTransition } from './todo-status.js';
import { ACTIONS, TRANSITIONS, canTransition } from './todo-transitions.js';
import type { TodoStatus } from './todo.schemas.js';
import { STATUSES as COLUMNS, TABLE, type Cell } from '../../test/helpers/transition-oracle.js';

/** Every cell as `[from, to, cell]`, so test titles read `open → completed is ✓`. */
const cells: [TodoStatus, TodoStatus, Cell][] = COLUMNS.flatMap((from) =>
  COLUMNS.map((to, index): [TodoStatus, TodoStatus, Cell] => [from, to, TABLE[from][index] ?? '✗']),
);

function allowedRow(from: TodoStatus): TodoStatus[] {
  return COLUMNS.filter((_, index) => TABLE[from][index] === '✓');
}

describe('the transition table', () => {
  it('has 36 cells', () => {
    expect(cells).toHaveLength(36);
  });

  it.each(COLUMNS)('TRANSITIONS.%s is exactly the ✓ cells of its row', (from) => {
    expect(TRANSITIONS[from]).toEqual(allowedRow(from));
  });
});

describe('canTransition', () => {
  it.each(cells)('%s → %s is %s', (from, to, cell) => {
    expect(canTransition(from, to)).toBe(cell !== '✗');
  });
});

describe('assertTransition', () => {
  it.each(cells.filter(([, , cell]) => cell !== '✗'))('accepts %s → %s (%s)', (from, to) => {
    expect(() => {
      assertTransition(from, to);
    }).not.toThrow();
  });

  it.each(cells.filter(([, , cell]) => cell === '✗'))(
    'rejects %s → %s (%s) with a 409 invalid-transition naming the allowed targets',
    (from, to) => {
      let thrown: unknown;
      try {
        assertTransition(from, to);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(AppError);
      const error = thrown as AppError;
      expect(error.code).toBe('invalid-transition');
      expect(error.status).toBe(409);
      expect(error.options.extensions).toEqual({
        current_status: from,
        allowed_transitions: allowedRow(from),
      });
      expect(error.detail).toContain(from);
      expect(error.detail).toContain(to);
    },
  );
});

describe('ACTIONS', () => {
  it('maps each action endpoint to the status it targets', () => {
    expect(ACTIONS).toEqual({
      start: 'in_progress',
      block: 'blocked',
      defer: 'deferred',
      complete: 'completed',
      cancel: 'cancelled',
      reopen: 'open',
    });
  });

  it('has exactly one action per status', () => {
    expect([...Object.values(ACTIONS)].sort()).toEqual([...COLUMNS].sort());
  });
});
