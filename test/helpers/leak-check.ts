import type { LightMyRequestResponse } from 'fastify';

/**
 * What a server error must never show a client: stack frames, SQL or driver wording, error
 * codes of the database drivers, file paths (RELIABILITY §3 API8).
 */
export const LEAK_PATTERN =
  /SQLITE|constraint|at \S+ \(|node_modules|\bpg\b|syntax error|\/src\/|\.ts:\d+|ECONN|E[A-Z]{3,}\b:/i;

/** Every 5xx body the suites provoke goes through here (test-app inject, server probes). */
export function assertNoLeak(response: Pick<LightMyRequestResponse, 'statusCode' | 'body'>): void {
  if (response.statusCode < 500) return;
  const leak = LEAK_PATTERN.exec(response.body);
  if (leak) {
    throw new Error(`A ${response.statusCode} body leaks "${leak[0]}": ${response.body}`);
  }
}
