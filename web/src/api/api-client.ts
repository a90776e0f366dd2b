import type { TodoPatch, TodoWrite, Todo } from '../../../src/todos/todo.schemas.js';
import type { TodoAction } from '../../../src/todos/todo-transitions.js';
import { ApiProblem, problemOf } from './api-problem.js';

export type { Todo };

export interface TodoPage {
  readonly todos: Todo[];
  /** Path and query of the next page (`Link: rel="next"`), or null on the last page. */
  readonly next: string | null;
  /** `X-Total-Count`, when asked for. */
  readonly total: number | null;
}

interface RequestOptions {
  readonly method?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** The same-origin part of a `Link: <…>; rel="next"` header: the service may name its public host. */
function nextPath(link: string | null): string | null {
  const target = link && /<([^>]+)>\s*;\s*rel="next"/.exec(link)?.[1];
  if (!target) return null;
  const url = new URL(target, window.location.href);
  return url.pathname + url.search;
}

/** An opaque key for `Idempotency-Key`, from a source that works outside secure contexts too. */
function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

const ifMatch = (todo: Pick<Todo, 'version'>) => ({ 'if-match': `"${todo.version}"` });

/** The app's only way to the API: adds the key, and turns every failure into an ApiProblem. */
export function createApiClient(getToken: () => string | null) {
  async function send(path: string, options: RequestOptions = {}): Promise<Response> {
    const headers = new Headers(options.headers);
    headers.set('accept', 'application/json');
    const token = getToken();
    if (token) headers.set('authorization', `Bearer ${token}`);
    if (options.body !== undefined) headers.set('content-type', 'application/json');
    let response: Response;
    try {
      response = await fetch(path, {
        method: options.method ?? 'GET',
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      });
    } catch {
      throw ApiProblem.network();
    }
    if (!response.ok) throw await problemOf(response);
    return response;
  }

  async function todoOf(response: Response): Promise<Todo> {
    return (await response.json()) as Todo;
  }

  return {
    /** A page of `/api/todos?…`, or the page a `next` path names. */
    async list(pathAndQuery: string, withTotal = false): Promise<TodoPage> {
      const response = await send(
        pathAndQuery,
        withTotal ? { headers: { prefer: 'count=exact' } } : {},
      );
      const total = response.headers.get('x-total-count');
      return {
        todos: (await response.json()) as Todo[],
        next: nextPath(response.headers.get('link')),
        total: total === null ? null : Number(total),
      };
    },
    async get(id: string): Promise<Todo> {
      return todoOf(await send(`/api/todos/${id}`));
    },
    /** Keyed, so that a retry after a lost answer does not create a second todo. */
    async create(write: TodoWrite): Promise<Todo> {
      return todoOf(
        await send('/api/todos', {
          method: 'POST',
          body: write,
          headers: { 'idempotency-key': newIdempotencyKey() },
        }),
      );
    },
    /** Changes only what `patch` names, and only if `base` is still the current version. */
    async update(base: Todo, patch: TodoPatch): Promise<Todo> {
      return todoOf(
        await send(`/api/todos/${base.id}`, {
          method: 'PATCH',
          body: patch,
          headers: ifMatch(base),
        }),
      );
    },
    async act(base: Todo, action: TodoAction): Promise<Todo> {
      return todoOf(
        await send(`/api/todos/${base.id}/${action}`, { method: 'POST', headers: ifMatch(base) }),
      );
    },
    async remove(base: Todo): Promise<void> {
      await send(`/api/todos/${base.id}`, { method: 'DELETE', headers: ifMatch(base) });
    },
    async restore(id: string): Promise<Todo> {
      return todoOf(await send(`/api/todos/${id}/restore`, { method: 'POST' }));
    },
    /** Deletes every todo matching the filter query (`status=completed`). */
    async removeMatching(filterQuery: string): Promise<void> {
      await send(`/api/todos?${filterQuery}`, { method: 'DELETE' });
    },
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
