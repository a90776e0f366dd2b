import { buildService } from './start-command.js';

declare global {
  var serviceBuild: Promise<void> | undefined;
}

/**
 * Vitest global setup: compiles the service into `dist/` from its current sources (about
 * 1.5 s), so that suites which start the server as a child process run exactly what `npm start`
 * runs. Built once per run, like the web app.
 */
export default async function setup(): Promise<void> {
  globalThis.serviceBuild ??= buildService();
  await globalThis.serviceBuild;
}
