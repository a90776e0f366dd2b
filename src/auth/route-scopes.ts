import type { FastifyInstance, RouteOptions } from 'fastify';

/** The CORS preflight route answers every path and touches no data. */
const isPreflight = (route: RouteOptions) => route.method === 'OPTIONS' && route.url === '*';

/**
 * Deny by default: every route must declare `config.scope`. Routes are checked once the app is
 * ready, after plugins have had their say (a plugin may declare its routes public from an
 * `onRoute` hook of its own), and startup fails naming the first route that declares nothing.
 */
export function requireRouteScopes(app: FastifyInstance): void {
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => {
    if (!isPreflight(route)) routes.push(route);
  });
  app.addHook('onReady', async () => {
    const undeclared = routes.find((route) => route.config?.scope === undefined);
    if (undeclared) {
      const methods = [undeclared.method].flat().join(',');
      throw new Error(`Route ${methods} ${undeclared.url} declares no config.scope`);
    }
  });
}

/** For plugins whose routes we do not write (Swagger UI): declares all of them public. */
export function declarePublicRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, scope: route.config?.scope ?? 'public' };
  });
}
