import { describe, expect, it } from 'vitest';
import { dueMoment, labelKey, priorityRank, statusRank, titleKey } from './todo-keys.js';

describe('todo keys', () => {
  it('ranks priorities by urgency and statuses by lifecycle', () => {
    expect(
      ['none', 'low', 'normal', 'high', 'urgent'].map((p) => priorityRank(p as never)),
    ).toEqual([0, 1, 2, 3, 4]);
    expect(statusRank('open')).toBeLessThan(statusRank('in_progress'));
    expect(statusRank('completed')).toBeLessThan(statusRank('cancelled'));
  });

  it.each([
    ['Apple', 'apple'],
    ['ÉCLAIR', 'eclair'],
    ['e\u0301clair', 'eclair'],
    ['İstanbul', 'istanbul'],
    ['Straße', 'straße'],
    ['Ångström', 'angstrom'],
    ['한국', '한국'],
    ['Zoë 10', 'zoe 10'],
  ])('folds the title %j to %j', (title, key) => {
    expect(titleKey(title)).toBe(key);
  });

  it.each([
    ['Work', 'work'],
    [' work ', 'work'],
    ['CAFE\u0301', 'caf\u00e9'],
  ])('keys the label %j as %j', (label, key) => {
    expect(labelKey(label)).toBe(key);
  });

  it.each([
    [null, null, null],
    ['2026-03-01', null, '2026-03-01T23:59:59.999Z'],
    [null, '2026-03-01T08:00:00.000Z', '2026-03-01T08:00:00.000Z'],
  ])('due_date %j, due_at %j are due at %j', (dueDate, dueAt, moment) => {
    expect(dueMoment(dueDate, dueAt)).toBe(moment);
  });
});
