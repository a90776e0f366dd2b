import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { summaryLine } from './fuzz-stats.js';
import {
  createFuzzSession,
  fuzzParameters,
  newSeed,
  sendThrough,
  type FuzzSession,
} from './fuzz-session.js';

/**
 * The short fuzz run of `npm test`: requests generated from the live OpenAPI document for every
 * operation, valid and hostile. The long run is `npm run fuzz` (fuzz/run.ts). A failure prints
 * its seed and path; `npm run fuzz -- --seed <seed> --path <path>` replays it.
 */

/** RELIABILITY.md §7: 200 runs per operation, capped in time for a 2-core machine. */
const RUNS_PER_OPERATION = 200;
const TIME_LIMIT_MS = 15_000;

describe('OpenAPI fuzzing (fast-check over the live document)', () => {
  let t: TestApp;
  let session: FuzzSession;

  beforeAll(async () => {
    t = await buildTestApp();
    session = await createFuzzSession(sendThrough(t));
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers every request without a 5xx, as documented, with a problem document for each 4xx', async () => {
    const seed = newSeed();
    try {
      await fc.assert(
        session.property,
        fuzzParameters({
          numRuns: RUNS_PER_OPERATION * session.operations.length,
          timeLimitMs: TIME_LIMIT_MS,
          seed,
        }),
      );
      session.assertComplete();
    } finally {
      console.log(summaryLine(session.stats, seed));
    }
  }, 45_000);
});
