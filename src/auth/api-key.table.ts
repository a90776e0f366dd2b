/** One API key. Timestamps are ISO 8601 UTC text, like every other table. */
export interface ApiKeyTable {
  /** Public half of the token (`tdk_<id>_<secret>`); what `tokens list` and `revoke` show. */
  id: string;
  owner_id: string;
  name: string | null;
  /** Space-separated scopes. */
  scopes: string;
  /** Hex SHA-256 of the secret half; the secret itself is never stored. */
  secret_hash: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}
