/**
 * One `Idempotency-Key` use. While the first request runs, `status_code` is null and
 * `locked_until` bounds how long it may hold the key; once it succeeds, the response is stored
 * in the same transaction as the change it made.
 */
export interface IdempotencyKeyTable {
  owner_id: string;
  method: string;
  path: string;
  key: string;
  /** SHA-256 of the canonical JSON body: the same key with another body is a client error. */
  fingerprint: string;
  status_code: number | null;
  /** JSON object of the response headers to replay (Location, ETag). */
  headers: string | null;
  /** JSON text of the response body. */
  body: string | null;
  locked_until: string | null;
  created_at: string;
  expires_at: string;
}
