import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../http/app-error.js';
import type { KeysetValue, TodoKeyset } from './todos.repository.js';

/**
 * Opaque list cursors: the last row's value of every sort key (then its id) and a fingerprint
 * of the query they belong to (filters, `q`, `sort`), signed with HMAC-SHA256 so that a client
 * can neither forge a position nor reuse a cursor with another query. Decoding never trusts the
 * payload before the signature checks out.
 */
export interface CursorCodec {
  encode(keyset: TodoKeyset, binding: string): string;
  /** Throws 400 `invalid-cursor` for a forged, damaged or mismatched cursor. */
  decode(cursor: string, binding: string): TodoKeyset;
}

const SIGNATURE_BYTES = 16;

interface CursorPayload {
  /** The keyset. */
  readonly k: readonly KeysetValue[];
  /** The binding (a fingerprint of the query). */
  readonly f: string;
}

const isKeysetValue = (value: unknown): value is KeysetValue =>
  typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const { k, f } = value as Record<string, unknown>;
  return Array.isArray(k) && k.length > 0 && k.every(isKeysetValue) && typeof f === 'string';
}

function invalidCursor(detail: string): AppError {
  return new AppError('invalid-cursor', detail, {
    errors: [{ pointer: 'cursor', code: 'invalid-cursor', detail }],
  });
}

export function createCursorCodec(secret: string): CursorCodec {
  const sign = (data: string): Buffer =>
    createHmac('sha256', secret).update(data).digest().subarray(0, SIGNATURE_BYTES);

  return {
    encode(keyset, binding) {
      const payload: CursorPayload = { k: keyset, f: binding };
      const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${data}.${sign(data).toString('base64url')}`;
    },

    decode(cursor, binding) {
      const [data, signature, extra] = cursor.split('.');
      if (data === undefined || signature === undefined || extra !== undefined) {
        throw invalidCursor('The cursor is not one this service issued.');
      }
      const given = Buffer.from(signature, 'base64url');
      const expected = sign(data);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw invalidCursor('The cursor is not one this service issued, or it was altered.');
      }
      let payload: unknown;
      try {
        payload = JSON.parse(Buffer.from(data, 'base64url').toString('utf8'));
      } catch {
        payload = undefined;
      }
      if (!isPayload(payload)) throw invalidCursor('The cursor is damaged.');
      if (payload.f !== binding) {
        throw invalidCursor(
          'The cursor was issued for different filters, q or sort; keep those of the first page.',
        );
      }
      return payload.k;
    },
  };
}
