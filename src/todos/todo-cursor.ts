import { AppError } from '../http/app-error.js';
import { createTokenSealer } from '../http/sealed-token.js';
import type { KeysetValue, TodoKeyset } from './todos.repository.js';

/**
 * Opaque list cursors: the last row's value of every sort key (then its id) and a fingerprint
 * of the query they belong to (filters, `q`, `sort`), sealed (`sealed-token.ts`) so that a client
 * can neither forge a position nor reuse a cursor with another query.
 */
export interface CursorCodec {
  encode(keyset: TodoKeyset, binding: string): string;
  /** Throws 400 `invalid-cursor` for a forged, damaged or mismatched cursor. */
  decode(cursor: string, binding: string): TodoKeyset;
}

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
  const sealer = createTokenSealer(secret);
  return {
    encode(keyset, binding) {
      const payload: CursorPayload = { k: keyset, f: binding };
      return sealer.seal(payload);
    },

    decode(cursor, binding) {
      const opened = sealer.open(cursor);
      if (!opened.ok) {
        throw invalidCursor(
          opened.problem === 'damaged'
            ? 'The cursor is damaged.'
            : 'The cursor is not one this service issued, or it was altered.',
        );
      }
      const { payload } = opened;
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
