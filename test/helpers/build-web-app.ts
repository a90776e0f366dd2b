import { fileURLToPath } from 'node:url';
import { build } from 'vite';

declare global {
  var webAppBuild: Promise<unknown> | undefined;
}

/**
 * Vitest global setup: bundles the web app from its current sources (about 2 s), so that no
 * suite serves a stale `web/dist`. Every project inherits this setup; they all run it in the one
 * main process, which builds once.
 */
export default async function setup(): Promise<void> {
  globalThis.webAppBuild ??= build({
    configFile: fileURLToPath(new URL('../../web/vite.config.ts', import.meta.url)),
    logLevel: 'warn',
  });
  await globalThis.webAppBuild;
}
