import { describe, expect, it } from 'vitest';
import { databaseTroubleOf } from './database-errors.js';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('databaseTroubleOf', () => {
  it.each([
    ['SQLITE_BUSY', 'unavailable'],
    ['SQLITE_BUSY_SNAPSHOT', 'unavailable'],
    ['SQLITE_READONLY', 'unavailable'],
    ['SQLITE_IOERR_WRITE', 'unavailable'],
    ['SQLITE_FULL', 'storage-full'],
    ['57P01', 'unavailable'],
    ['57P03', 'unavailable'],
    ['08006', 'unavailable'],
    ['53300', 'unavailable'],
    ['53100', 'storage-full'],
    ['57014', 'unavailable'],
    ['40001', 'unavailable'],
    ['40P01', 'unavailable'],
    ['ECONNREFUSED', 'unavailable'],
    ['ECONNRESET', 'unavailable'],
  ])('classifies code %s as %s', (code, expected) => {
    expect(databaseTroubleOf(withCode(code))).toBe(expected);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Query read timeout',
  ])('classifies pg message "%s" as unavailable', (message) => {
    expect(databaseTroubleOf(new Error(message))).toBe('unavailable');
  });

  it.each([
    ['SQLITE_CONSTRAINT_PRIMARYKEY'],
    ['SQLITE_ERROR'],
    ['23505'], // unique_violation: a bug, not an outage
    ['42P01'], // undefined_table
    ['22P02'],
  ])('leaves %s to the 500 path', (code) => {
    expect(databaseTroubleOf(withCode(code))).toBeUndefined();
  });

  it('ignores values that are not errors', () => {
    expect(databaseTroubleOf(undefined)).toBeUndefined();
    expect(databaseTroubleOf('SQLITE_BUSY')).toBeUndefined();
  });
});
