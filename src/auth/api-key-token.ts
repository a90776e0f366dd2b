import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API key tokens: `tdk_<id>_<secret>`. The prefix lets secret scanners and people recognise a
 * leaked key; the id (96 random bits, hex) finds the stored row; the secret (256 random bits,
 * base64url) proves possession and is kept only as its SHA-256 — a fast hash is right for a
 * machine-generated secret of this entropy, a slow KDF would only add latency per request.
 */
const TOKEN_PATTERN = /^tdk_([0-9a-f]{24})_([A-Za-z0-9_-]{43})$/;

export interface ApiKeyToken {
  readonly id: string;
  readonly secret: string;
}

export function generateApiKeyToken(): ApiKeyToken & { readonly token: string } {
  const id = randomBytes(12).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { id, secret, token: `tdk_${id}_${secret}` };
}

/** Splits a presented token; undefined when it cannot be one of ours (no database lookup then). */
export function parseApiKeyToken(token: string): ApiKeyToken | undefined {
  const match = TOKEN_PATTERN.exec(token);
  if (!match?.[1] || !match[2]) return undefined;
  return { id: match[1], secret: match[2] };
}

export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Constant-time comparison of a presented secret with a stored hash (both 32-byte digests). */
export function secretMatches(secret: string, storedHash: string): boolean {
  const presented = createHash('sha256').update(secret).digest();
  const stored = Buffer.from(storedHash, 'hex');
  return stored.length === presented.length && timingSafeEqual(presented, stored);
}
