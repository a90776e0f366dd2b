import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Debian's Chromium (`apt-get install -y chromium`); playwright-core never downloads one. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Quiet, offline, headless: no sandbox (CI runs as root), no calls home, no first-run UI. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Where screenshots go; the README links the copies committed under docs/screenshots/. */
export const SCREENSHOT_DIR = join('test-results', 'screenshots');

export interface TestBrowser {
  readonly context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** A headless Chromium with a fresh user-data dir of its own (no storage shared between runs). */
export async function launchBrowser(
  options: { viewport?: { width: number; height: number } } = {},
): Promise<TestBrowser> {
  const userDataDir = await mkdtemp(join(tmpdir(), 'todo-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: options.viewport ?? { width: 1280, height: 860 },
    // axe-core is injected into the page; the app's own CSP forbids foreign scripts.
    bypassCSP: true,
  });
  // A failing page script fails the test that caused it.
  const pageErrors: Error[] = [];
  context.on('weberror', (error) => pageErrors.push(error.error()));
  return {
    context,
    async newPage() {
      const page = await context.newPage();
      page.setDefaultTimeout(5000);
      return page;
    },
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
      const [firstError] = pageErrors;
      if (firstError) throw firstError;
    },
  };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: false });
  return path;
}

interface AxeResults {
  violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core run in the page: its serious and critical violations, as `rule: targets`. */
export async function seriousAxeViolations(page: Page): Promise<string[]> {
  await page.evaluate(await axeSource);
  const results = await page.evaluate(() =>
    (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run(),
  );
  return results.violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map(
      (violation) =>
        `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
    );
}
