import { describe, expect, it } from 'vitest';
import { preferences } from './prefer.js';

describe('preferences', () => {
  it.each([
    [undefined, {}],
    ['', {}],
    ['count=exact', { count: 'exact' }],
    ['COUNT=exact', { count: 'exact' }],
    ['count="exact"', { count: 'exact' }],
    [' count = exact ', { count: 'exact' }],
    ['respond-async, count=exact; foo=bar', { 'respond-async': '', count: 'exact' }],
    ['count=exact, count=estimated', { count: 'exact' }],
    ['return=minimal,,wait=10', { return: 'minimal', wait: '10' }],
    [['count=exact', 'return=minimal'], { count: 'exact', return: 'minimal' }],
    ['count=ex act', {}],
    ['co unt=exact', {}],
    ['=exact', {}],
  ])('reads %j', (header, expected) => {
    expect(Object.fromEntries(preferences(header))).toEqual(expected);
  });
});
