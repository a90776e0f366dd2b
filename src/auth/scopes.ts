/** What a token may do. A route needs exactly one of these, or is `public`. */
export const SCOPES = ['todos:read', 'todos:write', 'webhooks:manage'] as const;

export type Scope = (typeof SCOPES)[number];

/** What a route declares in `config.scope`: the scope it needs, or `public` (no owner data). */
export type RouteScope = Scope | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Required on every route; registering one without it fails at startup. */
    scope?: RouteScope;
  }
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
