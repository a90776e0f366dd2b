/**
 * Which methods each registered path answers, so that a known path with an unknown method gets
 * 405 with `Allow` instead of 404.
 */
export interface RouteIndex {
  add(method: string, url: string): void;
  /** Methods registered for a concrete path, sorted; empty when no route matches it. */
  allowedMethods(path: string): string[];
  /** Every registered route but wildcards, as Fastify spells it (`/api/todos/:id`). */
  routes(): { method: string; url: string }[];
}

function patternOf(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'),
    )
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

export function createRouteIndex(): RouteIndex {
  const routes = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  return {
    add(method, url) {
      // Wildcards (the CORS preflight route) match every path and say nothing about it.
      if (url.includes('*')) return;
      const entry = routes.get(url) ?? { pattern: patternOf(url), methods: new Set<string>() };
      entry.methods.add(method);
      routes.set(url, entry);
    },
    allowedMethods(path) {
      const methods = new Set<string>();
      for (const { pattern, methods: routeMethods } of routes.values()) {
        if (pattern.test(path)) for (const method of routeMethods) methods.add(method);
      }
      if (methods.size > 0) methods.add('OPTIONS');
      return [...methods].sort();
    },
    routes() {
      return [...routes].flatMap(([url, { methods }]) =>
        [...methods].map((method) => ({ method, url })),
      );
    },
  };
}
