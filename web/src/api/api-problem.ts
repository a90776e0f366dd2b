import type { Problem } from '../../../src/http/problem.js';

/** What the app knows of a failed request: the API's problem document, or a network failure. */
export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly fieldErrors: readonly { pointer: string; detail: string }[];
  readonly retryAfterSeconds: number | null;

  constructor(
    problem: Pick<Problem, 'status' | 'title' | 'detail' | 'errors'> & {
      /** A problem code of the API, or `network` / `http-<status>` for answers without one. */
      code: string;
    },
    retryAfterSeconds: number | null = null,
  ) {
    super(problem.detail || problem.title);
    this.name = 'ApiProblem';
    this.status = problem.status;
    this.code = problem.code;
    this.fieldErrors = problem.errors ?? [];
    this.retryAfterSeconds = retryAfterSeconds;
  }

  static network(): ApiProblem {
    return new ApiProblem({
      status: 0,
      code: 'network',
      title: 'Network error',
      detail: 'The server cannot be reached. Check your connection; nothing was changed.',
    });
  }
}

function retryAfterOf(response: Response): number | null {
  const value = Number(response.headers.get('retry-after'));
  return Number.isFinite(value) && value > 0 ? value : null;
}

/** Reads the problem document of a failed response; any other body becomes a plain problem. */
export async function problemOf(response: Response): Promise<ApiProblem> {
  const retryAfter = retryAfterOf(response);
  if (response.headers.get('content-type')?.includes('json')) {
    try {
      const body = (await response.json()) as Partial<Problem>;
      if (typeof body.code === 'string') {
        return new ApiProblem(
          {
            errors: body.errors,
            status: response.status,
            code: body.code,
            title: body.title ?? response.statusText,
            detail: body.detail ?? '',
          },
          retryAfter,
        );
      }
    } catch {
      // Not a problem document after all: described by its status below.
    }
  }
  return new ApiProblem(
    {
      status: response.status,
      code: `http-${response.status}`,
      title: response.statusText,
      detail: `The server answered ${response.status} ${response.statusText}.`,
    },
    retryAfter,
  );
}

/** Field names for the JSON Pointers of validation errors. */
const FIELD_NAMES: Readonly<Record<string, string>> = {
  '/title': 'Title',
  '/description': 'Description',
  '/labels': 'Labels',
  '/priority': 'Priority',
  '/due_date': 'Due date',
  '/due_at': 'Due time',
};

function fieldName(pointer: string): string {
  const field = /^\/[a-z_]+/.exec(pointer)?.[0] ?? pointer;
  return FIELD_NAMES[field] ?? field.replace(/^\//, '');
}

/** One sentence a person can act on, built from the problem's code, detail and field errors. */
export function readableMessage(problem: ApiProblem): string {
  switch (problem.code) {
    case 'precondition-failed':
      return 'Someone changed this todo since you loaded it. Reload it to see their version.';
    case 'rate-limited':
      return `Too many requests. Try again in ${problem.retryAfterSeconds ?? 'a few'} seconds.`;
    case 'unauthenticated':
      return 'This server needs an API key.';
    case 'insufficient-scope':
      return 'Your API key is not allowed to do this.';
    case 'not-found':
      return 'This todo no longer exists; it may have been deleted elsewhere.';
  }
  if (problem.fieldErrors.length > 0) {
    return problem.fieldErrors
      .map((error) => `${fieldName(error.pointer)}: ${error.detail}.`)
      .join(' ');
  }
  return problem.message;
}
