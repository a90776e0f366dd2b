import { parseArgs } from 'node:util';
import fc from 'fast-check';
import {
  createFuzzSession,
  fuzzParameters,
  newSeed,
  sendThrough,
} from '../test/fuzz/fuzz-session.js';
import { fullReport, summaryLine } from '../test/fuzz/fuzz-stats.js';
import { buildTestApp } from '../test/helpers/test-app.js';

/**
 * The long fuzz run: the generators and properties of test/fuzz/openapi.fuzz.test.ts, against
 * a fresh app over a temporary SQLite file, until the time is up or a property fails.
 *
 *   npm run fuzz -- --seconds 600
 *   npm run fuzz -- --seed 123 --path 45:0:1        replay a failure
 *   npm run fuzz -- --env AUTH_MODE=required --header 'authorization: Bearer …'
 *
 * Prints the requests sent, per-operation counts and the status histogram; exits 1 on the
 * first failure, with its seed, path and the exact request and response.
 */

const USAGE =
  'usage: npm run fuzz -- [--seconds 60] [--seed <n> [--path <path>]] [--header "name: value"]… [--env NAME=value]…';
const PROGRESS_INTERVAL_MS = 30_000;

interface RunOptions {
  readonly seconds: number;
  readonly seed: number;
  readonly path: string | undefined;
  /** Added to every request. */
  readonly headers: Record<string, string>;
  /** Environment of the app under test, as the server would read it. */
  readonly env: Record<string, string>;
}

function parseOptions(args: readonly string[]): RunOptions {
  const { values } = parseArgs({
    args: [...args],
    options: {
      seconds: { type: 'string', default: '60' },
      seed: { type: 'string' },
      path: { type: 'string' },
      header: { type: 'string', multiple: true, default: [] },
      env: { type: 'string', multiple: true, default: [] },
    },
  });
  const seconds = Number(values.seconds);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`--seconds must be positive`);
  const seed = values.seed === undefined ? newSeed() : Number(values.seed);
  if (!Number.isInteger(seed)) throw new Error('--seed must be an integer');
  const headers: Record<string, string> = {};
  for (const header of values.header) {
    const colon = header.indexOf(':');
    if (colon <= 0) throw new Error(`--header must be "name: value", not ${header}`);
    headers[header.slice(0, colon).trim().toLowerCase()] = header.slice(colon + 1).trim();
  }
  const env: Record<string, string> = {};
  for (const assignment of values.env) {
    const equals = assignment.indexOf('=');
    if (equals <= 0) throw new Error(`--env must be NAME=value, not ${assignment}`);
    env[assignment.slice(0, equals)] = assignment.slice(equals + 1);
  }
  return { seconds, seed, path: values.path, headers, env };
}

async function main(options: RunOptions): Promise<number> {
  const t = await buildTestApp({ env: options.env });
  try {
    const session = await createFuzzSession(sendThrough(t), { extraHeaders: options.headers });
    console.log(
      `fuzzing ${session.operations.length} operations for ${options.seconds} s, seed ${options.seed}`,
    );
    const progress = setInterval(() => {
      console.log(summaryLine(session.stats, options.seed));
    }, PROGRESS_INTERVAL_MS);
    const details = await fc.check(
      session.property,
      fuzzParameters({
        numRuns: Number.MAX_SAFE_INTEGER,
        timeLimitMs: options.seconds * 1000,
        seed: options.seed,
        path: options.path,
      }),
    );
    clearInterval(progress);
    console.log(`\n${fullReport(session.stats, options.seed)}`);
    if (details.failed) {
      console.error(`\nFAILED\n${fc.defaultReportMessage(details)}`);
      // The report names the generated plan; the error quotes the exact request and response.
      if (details.errorInstance instanceof Error) {
        console.error(`\n${details.errorInstance.message}`);
      }
      const same = Object.keys({ ...options.env, ...options.headers }).length > 0;
      console.error(
        `\nReplay: npm run fuzz -- --seed ${details.seed} --path ${details.counterexamplePath ?? ''}` +
          (same ? ' (with the same --env and --header options)' : ''),
      );
      return 1;
    }
    try {
      session.assertComplete();
    } catch (error) {
      console.error(`\nFAILED\n${(error as Error).message}`);
      return 1;
    }
    return 0;
  } finally {
    await t.close();
  }
}

let options: RunOptions;
try {
  options = parseOptions(process.argv.slice(2));
} catch (error) {
  console.error(`${(error as Error).message}\n${USAGE}`);
  process.exit(2);
}
process.exitCode = await main(options);
