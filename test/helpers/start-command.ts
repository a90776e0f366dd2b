import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * Node's arguments in `npm start` (package.json `scripts.start`, after its build step): the
 * service's runtime options and its entry point. The tests and the benchmark start the service
 * with exactly these, so that they measure and check what `npm start` runs.
 */
export const START_NODE_ARGS: readonly string[] = (() => {
  const manifest = JSON.parse(
    readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
  ) as { scripts: Record<string, string> };
  const [command, ...args] = (manifest.scripts.start?.split('&&').at(-1) ?? '').trim().split(/\s+/);
  if (command !== 'node' || !args.at(-1)?.endsWith('.js')) {
    throw new Error(
      `npm start should end in "node [options] <script.js>": ${manifest.scripts.start}`,
    );
  }
  return args;
})();

/** The build step of `npm start` (`npm run build`): compiles the service into `dist/`. */
export async function buildService(): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: fileURLToPath(new URL('../../', import.meta.url)),
  });
}
