/**
 * Database errors that mean "not now" rather than "wrong": the client should retry, and nothing
 * about them is the request's fault — the database is busy or unreachable (503), or its disk is
 * full (507). Everything else a driver throws stays a 500.
 */
export type DatabaseTrouble = 'unavailable' | 'storage-full';

/** PostgreSQL SQLSTATE classes and codes: connection exceptions, shutdowns, resources, conflicts. */
const POSTGRES_RETRYABLE = [
  /^08/, // connection exception
  /^57P0[1-4]$/, // admin/crash shutdown, cannot connect now, database dropped
  /^53[02-9]/, // insufficient resources: out of memory, too many connections (53100 is disk full)
  /^57014$/, // query_canceled: statement_timeout
  /^40001$/, // serialization_failure
  /^40P01$/, // deadlock_detected
];

/** Node socket errors, when the server is gone or unreachable. */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH']);

/** pg reports a dead or unreachable connection with plain messages, without a code. */
const PG_CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Query read timeout|Client has encountered a connection error|Connection ended unexpectedly)/;

/** SQLite: another writer holds the lock, or the file cannot be written (read-only, I/O error). */
const SQLITE_RETRYABLE = /^SQLITE_(BUSY|LOCKED|READONLY|IOERR|CANTOPEN)/;

export function databaseTroubleOf(error: unknown): DatabaseTrouble | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (code === 'SQLITE_FULL' || code === '53100') return 'storage-full';
    if (SQLITE_RETRYABLE.test(code) || SOCKET_ERRORS.has(code)) return 'unavailable';
    if (/^[0-9A-Z]{5}$/.test(code) && POSTGRES_RETRYABLE.some((pattern) => pattern.test(code))) {
      return 'unavailable';
    }
  }
  if (typeof message === 'string' && PG_CONNECTION_MESSAGES.test(message)) return 'unavailable';
  return undefined;
}
