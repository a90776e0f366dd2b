import { describe, expect, it } from 'vitest';
import { AppError } from '../http/app-error.js';
import { DEFAULT_SORT, parseFilter, parseInstant, parseSort } from './todo-list-query.js';

function errorOf(action: () => unknown): AppError {
  try {
    action();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('parseInstant', () => {
  it.each([
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T09:30:00Z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01t09:30:00z', '2026-03-01T09:30:00.000Z'],
    ['2026-03-01T09:30:00.5Z', '2026-03-01T09:30:00.500Z'],
    ['2026-03-01T09:30:00.123999Z', '2026-03-01T09:30:00.123Z'],
    ['2026-03-01T09:30:00+02:00', '2026-03-01T07:30:00.000Z'],
    ['2026-03-01T09:30:00 02:00', '2026-03-01T07:30:00.000Z'],
    ['2026-03-01T01:30:00-02:30', '2026-03-01T04:00:00.000Z'],
    ['2026-03-01T00:00:00+01:00', '2026-02-28T23:00:00.000Z'],
    ['2028-02-29', '2028-02-29T00:00:00.000Z'],
    ['0000-01-01', '0000-01-01T00:00:00.000Z'],
    ['0099-12-31T23:59:59.999Z', '0099-12-31T23:59:59.999Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('reads %s as %s', (raw, expected) => {
    expect(parseInstant('due_before', raw)).toBe(expected);
  });

  it.each([
    '',
    'now',
    '2026-02-29',
    '2026-02-30',
    '2026-13-01',
    '2026-00-10',
    '2026-3-1',
    '26-03-01',
    '20260301',
    '2026-03-01T09:30Z',
    '2026-03-01T09:30:00',
    '2026-03-01 09:30:00Z',
    '2026-03-01T24:00:00Z',
    '2026-03-01T23:60:00Z',
    '2026-03-01T23:59:60Z',
    '2026-03-01T09:30:00+0200',
    '2026-03-01T09:30:00+24:00',
    '2026-03-01T09:30:00+02:60',
    '0000-01-01T00:00:00+00:01',
    '9999-12-31T23:59:59-00:01',
    '+02026-03-01',
    '2026-03-01T09:30:00.Z',
  ])('refuses %j, naming the parameter', (raw) => {
    const error = errorOf(() => parseInstant('created_after', raw));
    expect(error.code).toBe('invalid-parameter');
    expect(error.options.errors?.[0]?.pointer).toBe('created_after');
  });

  it('passes undefined through', () => {
    expect(parseInstant('due_after', undefined)).toBeUndefined();
  });
});

describe('parseSort', () => {
  it.each([
    [undefined, DEFAULT_SORT],
    ['title', [{ field: 'title', descending: false }]],
    ['-due_at', [{ field: 'due_at', descending: true }]],
    [
      'priority, -created_at ,title',
      [
        { field: 'priority', descending: false },
        { field: 'created_at', descending: true },
        { field: 'title', descending: false },
      ],
    ],
  ])('reads %j', (raw, expected) => {
    expect(parseSort(raw)).toEqual(expected);
  });

  it.each([
    ['', 'enum'],
    ['title,', 'enum'],
    ['+title', 'enum'],
    ['--title', 'enum'],
    ['- title', 'enum'],
    ['id', 'enum'],
    ['order,-order', 'duplicate'],
    ['title,status,title', 'duplicate'],
  ])('refuses %j (%s)', (raw, code) => {
    const error = errorOf(() => parseSort(raw));
    expect(error.options.errors?.map((e) => [e.pointer, e.code])).toEqual([['sort', code]]);
  });
});

describe('parseFilter', () => {
  const now = new Date('2026-03-01T12:00:00.000Z');

  it('canonicalises lists: known order for enums, sorted label keys, no duplicates', () => {
    expect(
      parseFilter(
        {
          status: 'completed, open,open',
          priority: 'urgent,none',
          labels: ' Work ,CAFE\u0301,work',
          labels_any: 'b,A',
          overdue: 'false',
          q: '  cafe\u0301  ',
        },
        now,
      ),
    ).toEqual({
      statuses: ['open', 'completed'],
      completed: undefined,
      priorities: ['none', 'urgent'],
      allLabels: ['caf\u00e9', 'work'],
      anyLabels: ['a', 'b'],
      dueBefore: undefined,
      dueAfter: undefined,
      overdue: { value: false, now: '2026-03-01T12:00:00.000Z' },
      createdAfter: undefined,
      createdBefore: undefined,
      updatedSince: undefined,
      search: 'caf\u00e9',
    });
  });

  it.each([
    [{ status: 'open,' }, 'status'],
    [{ status: 'Open' }, 'status'],
    [{ priority: 'high,critical' }, 'priority'],
    [{ labels: 'a,,b' }, 'labels'],
    [{ labels_any: 'x'.repeat(65) }, 'labels_any'],
    [{ labels: Array.from({ length: 21 }, (_, i) => `l${i}`).join(',') }, 'labels'],
    [{ due_after: '2026-02-30' }, 'due_after'],
    [{ updated_since: 'yesterday' }, 'updated_since'],
    [{ q: ' \t ' }, 'q'],
  ])('refuses %j, naming %s', (query, pointer) => {
    const error = errorOf(() => parseFilter(query, now));
    expect(error.code).toBe('invalid-parameter');
    expect(error.options.errors?.[0]?.pointer).toBe(pointer);
  });
});
