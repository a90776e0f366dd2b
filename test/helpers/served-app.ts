import type { Todo } from '../../src/todos/todo.schemas.js';
import { buildTestApp, type TestApp, type TestAppOptions } from './test-app.js';

/** A test app listening on a real loopback port, with a tiny API client as curl would use it. */
export interface ServedApp extends TestApp {
  readonly origin: string;
  /** One request to the API from outside any browser; answers JSON (or undefined for 204). */
  api<T = Todo>(method: string, path: string, body?: unknown, authorization?: string): Promise<T>;
}

export async function serveTestApp(options: TestAppOptions = {}): Promise<ServedApp> {
  const t = await buildTestApp({
    ...options,
    // Links and `url` fields then name the address the browser actually uses.
    env: { PUBLIC_BASE_URL: '', ...options.env },
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (address === null || typeof address === 'string') throw new Error('not listening on TCP');
  const origin = `http://127.0.0.1:${address.port}`;
  return Object.assign(t, {
    origin,
    async api<T>(method: string, path: string, body?: unknown, authorization?: string) {
      const response = await fetch(origin + path, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(authorization ? { authorization } : {}),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      if (!response.ok)
        throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
      return (response.status === 204 ? undefined : await response.json()) as T;
    },
  });
}
