import type { Scope } from './scopes.js';

/** How a request proved who it is. */
export type Credential =
  | { readonly kind: 'api-key'; readonly id: string }
  | { readonly kind: 'jwt'; readonly issuer: string }
  | { readonly kind: 'anonymous' };

/** Who is asking: the owner whose data the request may touch, and what it may do with it. */
export interface Principal {
  readonly ownerId: string;
  readonly scopes: ReadonlySet<Scope>;
  readonly credential: Credential;
}

/** Checks one bearer token; rejects with `unauthenticated` (see auth-errors.ts) when it fails. */
export interface TokenVerifier {
  verify(token: string): Promise<Principal>;
}
