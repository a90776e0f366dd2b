import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

declare global {
  var serviceBuild: Promise<unknown> | undefined;
}

/**
 * Vitest global setup: compiles the service into `dist/` from its current sources (`npm run
 * build`: about 1.5 s), so that suites which start the server as a child process run exactly
 * what `npm start` runs. Built once per run, like the web app.
 */
export default async function setup(): Promise<void> {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  globalThis.serviceBuild ??= promisify(execFile)(
    process.execPath,
    [tsc, '-p', 'tsconfig.build.json'],
    { cwd: fileURLToPath(new URL('../../', import.meta.url)) },
  );
  await globalThis.serviceBuild;
}
