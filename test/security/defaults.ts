/**
 * What every request and every server of the security suite carries besides the attack itself,
 * in one place.
 *
 * Today the service serves one anonymous owner on loopback, so no credentials are needed. When
 * authentication lands, put the test principal's `authorization` header in `DEFAULT_HEADERS`:
 * every attack then keeps reaching the code behind authentication instead of stopping at a 401.
 */
export const DEFAULT_HEADERS: Readonly<Record<string, string>> = {};

/** `headers` on top of the defaults; the attack's own headers win a clash. */
export function withDefaults(
  headers: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return { ...DEFAULT_HEADERS, ...headers };
}

/** The defaults as raw header lines (`name: value\r\n` each), for hand-written requests. */
export function defaultHeaderLines(): string {
  return Object.entries(DEFAULT_HEADERS)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
}

/**
 * Environment of every app and server under attack. The suite sends a few thousand requests from
 * one client within seconds; the per-client rate limit (row 21, tested on its own) would turn
 * them into 429s and hide what each attack row checks.
 */
export const SERVICE_ENV: Readonly<Record<string, string>> = { RATE_LIMIT_MAX: '0' };
