import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Problem } from '../../src/http/problem.js';
import { PROBLEM_CODES, type ProblemCode } from '../../src/http/problem-codes.js';

/**
 * Asserts the RFC 9457 shape every error of this service has — media type, `type`, `title`,
 * `status`, `code`, a non-empty `detail`, `request_id` equal to `X-Request-Id`, `no-store` — plus
 * the `instance` and a field pointer when given. Returns the document.
 */
export function expectProblem(
  response: LightMyRequestResponse,
  status: number,
  code: ProblemCode,
  expected: { readonly instance?: string; readonly pointer?: string } = {},
): Problem {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.headers['cache-control']).toBe('no-store');
  const problem = response.json<Problem>();
  expect(problem).toMatchObject({
    type: `/problems/${code}`,
    title: PROBLEM_CODES[code].title,
    status,
    code,
  });
  expect(problem.detail.length).toBeGreaterThan(0);
  expect(problem.request_id).toBe(response.headers['x-request-id']);
  if (expected.instance !== undefined) expect(problem.instance).toBe(expected.instance);
  if (expected.pointer !== undefined) {
    expect(problem.errors?.map((error) => error.pointer)).toContain(expected.pointer);
  }
  return problem;
}
