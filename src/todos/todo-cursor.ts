import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError } from '../http/app-error.js';
import type { TodoKeyset } from './todos.repository.js';

/**
 * Opaque list cursors: the last row's sort-key values and a fingerprint of the filters, signed
 * with HMAC-SHA256 so that a client can neither forge a position nor reuse a cursor with other
 * filters. Decoding never trusts the payload before the signature checks out.
 */
export interface CursorCodec {
  encode(keyset: TodoKeyset, filterKey: string): string;
  /** Throws 400 `invalid-cursor` for a forged, damaged or mismatched cursor. */
  decode(cursor: string, filterKey: string): TodoKeyset;
}

const SIGNATURE_BYTES = 16;

interface CursorPayload {
  readonly p: number;
  readonly c: string;
  readonly i: string;
  readonly f: string;
}

function isPayload(value: unknown): value is CursorPayload {
  if (typeof value !== 'object' || value === null) return false;
  const { p, c, i, f } = value as Record<string, unknown>;
  return (
    typeof p === 'number' &&
    Number.isFinite(p) &&
    typeof c === 'string' &&
    typeof i === 'string' &&
    typeof f === 'string'
  );
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
    encode(keyset, filterKey) {
      const payload: CursorPayload = {
        p: keyset.position,
        c: keyset.createdAt,
        i: keyset.id,
        f: filterKey,
      };
      const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${data}.${sign(data).toString('base64url')}`;
    },

    decode(cursor, filterKey) {
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
      if (payload.f !== filterKey) {
        throw invalidCursor(
          'The cursor was issued for different filters; keep the filters of the first page.',
        );
      }
      return { position: payload.p, createdAt: payload.c, id: payload.i };
    },
  };
}
