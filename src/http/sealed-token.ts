import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

/**
 * Tokens the service hands out and must get back unaltered (list cursors, sync tokens): a JSON
 * payload and a truncated HMAC-SHA256 of it under a server secret, both base64url. `open` checks
 * the signature before it parses anything; what the payload must look like is the caller's.
 */
export interface TokenSealer {
  seal(payload: unknown): string;
  open(token: string): OpenedToken;
}

export type OpenedToken =
  | { readonly ok: true; readonly payload: unknown }
  /** `forged`: not signed with our secret (or altered); `damaged`: signed, yet not JSON. */
  | { readonly ok: false; readonly problem: 'forged' | 'damaged' };

const SIGNATURE_BYTES = 16;

export function createTokenSealer(secret: string): TokenSealer {
  const key = createSecretKey(Buffer.from(secret));
  const sign = (data: string): Buffer =>
    createHmac('sha256', key).update(data).digest().subarray(0, SIGNATURE_BYTES);

  return {
    seal(payload) {
      const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${data}.${sign(data).toString('base64url')}`;
    },

    open(token) {
      const [data, signature, extra] = token.split('.');
      if (data === undefined || signature === undefined || extra !== undefined) {
        return { ok: false, problem: 'forged' };
      }
      const given = Buffer.from(signature, 'base64url');
      const expected = sign(data);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        return { ok: false, problem: 'forged' };
      }
      try {
        return { ok: true, payload: JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) };
      } catch {
        return { ok: false, problem: 'damaged' };
      }
    },
  };
}
