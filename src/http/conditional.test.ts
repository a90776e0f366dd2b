import { describe, expect, it } from 'vitest';
import {
  etagOf,
  ifNoneMatchHits,
  parseIfMatch,
  satisfies,
  type VersionPrecondition,
} from './conditional.js';

describe('etagOf', () => {
  it.each([
    [1, '"1"'],
    [42, '"42"'],
    [9007199254740991, '"9007199254740991"'],
  ])('etagOf(%d) is the strong tag %s', (version, etag) => {
    expect(etagOf(version)).toBe(etag);
  });
});

describe('parseIfMatch', () => {
  it.each<[string | undefined, VersionPrecondition | undefined]>([
    [undefined, undefined],
    ['*', { any: true }],
    ['  *  ', { any: true }],
    ['"1"', { versions: [1] }],
    ['"7", "1"', { versions: [7, 1] }],
    ['"7","1" , "12"', { versions: [7, 1, 12] }],
    // Weak tags never match (strong comparison, RFC 9110 §13.1.1).
    ['W/"1"', { versions: [] }],
    ['W/"1", "2"', { versions: [2] }],
    // Tags that are not one of our versions are dropped.
    ['"0"', { versions: [] }],
    ['"01"', { versions: [] }],
    ['"-1"', { versions: [] }],
    ['"abc"', { versions: [] }],
    ['"1.5"', { versions: [] }],
    ['""', { versions: [] }],
    ['"12345678901234567"', { versions: [] }],
    ['"1234567890123456"', { versions: [1234567890123456] }],
    // Unquoted or malformed members are skipped.
    ['1', { versions: [] }],
    ['', { versions: [] }],
    ['"*"', { versions: [] }],
    ['*, "1"', { versions: [1] }],
  ])('parseIfMatch(%j) is %j', (header, expected) => {
    expect(parseIfMatch(header)).toEqual(expected);
  });
});

describe('satisfies', () => {
  it.each<[VersionPrecondition, number, boolean]>([
    [{ any: true }, 1, true],
    [{ any: true }, 99, true],
    [{ versions: [1] }, 1, true],
    [{ versions: [1] }, 2, false],
    [{ versions: [7, 1] }, 1, true],
    [{ versions: [7, 1] }, 7, true],
    [{ versions: [7, 1] }, 3, false],
    [{ versions: [] }, 1, false],
  ])('satisfies(%j, %d) is %s', (precondition, version, expected) => {
    expect(satisfies(precondition, version)).toBe(expected);
  });

  it.each<[string, number, boolean]>([
    ['"3"', 3, true],
    ['W/"3"', 3, false],
    ['"7", "3"', 3, true],
    ['"4"', 3, false],
    ['*', 3, true],
  ])('If-Match %s against version %d is %s', (header, version, expected) => {
    const precondition = parseIfMatch(header);
    expect(precondition).toBeDefined();
    expect(satisfies(precondition as VersionPrecondition, version)).toBe(expected);
  });
});

describe('ifNoneMatchHits', () => {
  it.each<[string | undefined, string, boolean]>([
    [undefined, '"3"', false],
    ['*', '"3"', true],
    [' * ', '"3"', true],
    ['"3"', '"3"', true],
    // Weak comparison (RFC 9110 §13.1.2): W/"3" matches "3".
    ['W/"3"', '"3"', true],
    ['"2"', '"3"', false],
    ['W/"2"', '"3"', false],
    ['"1", "3"', '"3"', true],
    ['"1", W/"3"', '"3"', true],
    ['"1", "2"', '"3"', false],
    ['"33"', '"3"', false],
    ['3', '"3"', false],
    ['', '"3"', false],
  ])('ifNoneMatchHits(%j, %s) is %s', (header, etag, expected) => {
    expect(ifNoneMatchHits(header, etag)).toBe(expected);
  });
});
