import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { Todo } from '../../src/todos/todo.schemas.js';
import {
  launchBrowser,
  screenshot,
  seriousAxeViolations,
  type TestBrowser,
} from '../helpers/browser.js';
import { serveTestApp, type ServedApp } from '../helpers/served-app.js';

/** A server that requires a token on every API request (`AUTH_MODE=required`), in Chromium. */

let t: ServedApp;
let browser: TestBrowser;
let authorization: string;

beforeAll(async () => {
  t = await serveTestApp({ env: { AUTH_MODE: 'required' } });
  authorization = await t.bearer('owner-in-browser');
  await t.api('POST', '/api/todos', { title: 'Only for key holders' }, authorization);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser.close();
  await t.close();
});

describe('when the server requires an API key', () => {
  test('then the app asks for one, refuses a wrong one, and works with a right one', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.origin}/`);
    const prompt = page.getByRole('form', { name: 'API key required' });
    await prompt.waitFor();
    expect(await seriousAxeViolations(page)).toEqual([]);
    await screenshot(page, 'api-key');

    await prompt
      .getByLabel('API key')
      .fill('tdk_000000000000000000000000_not-a-real-secret-at-all-000000000000');
    await prompt.getByRole('button', { name: 'Use this key' }).click();
    await expect
      .poll(() =>
        page.getByRole('form', { name: 'API key required' }).getByRole('alert').textContent(),
      )
      .toContain('That key was not accepted');

    await prompt.getByLabel('API key').fill(authorization.replace(/^Bearer /, ''));
    await prompt.getByRole('button', { name: 'Use this key' }).click();
    await page.getByRole('button', { name: 'Only for key holders', exact: true }).waitFor();
    await expect.poll(() => page.getByTestId('stream-state').textContent()).toBe('Live');

    // The stream carries the key too: a change by curl with the same key shows up live.
    await t.api('POST', '/api/todos', { title: 'Added with the key' }, authorization);
    await page
      .getByRole('button', { name: 'Added with the key', exact: true })
      .waitFor({ timeout: 1000 });
    // The key was kept for this tab only (not "remembered"): a new tab of the browser asks again.
    const other = await browser.newPage();
    await other.goto(`${t.origin}/`);
    await other.getByRole('form', { name: 'API key required' }).waitFor();
    await other.close();

    await page.getByRole('button', { name: 'Forget key' }).click();
    await page.getByRole('form', { name: 'API key required' }).waitFor();
    await page.close();
  });
});

describe('when the API reference at /docs is opened', () => {
  test('then it lists every operation of the OpenAPI document and "try it" calls the server', async () => {
    const document = await t.api<{ paths: Record<string, Record<string, unknown>> }>(
      'GET',
      '/api/openapi.json',
    );
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((method) => ['get', 'put', 'post', 'patch', 'delete'].includes(method))
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.length).toBeGreaterThanOrEqual(30);

    const page = await browser.newPage();
    // Swagger UI is heavy (a 1.4 MB bundle rendering 30 operations): slower than the app.
    page.setDefaultTimeout(15_000);
    await page.goto(`${t.origin}/docs`);
    // Swagger UI's bundle is large (1.4 MB): its first render takes a few seconds here.
    await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
    const listed = await page.locator('.opblock').evaluateAll((blocks) =>
      blocks.map((block) => {
        const method = block.querySelector('.opblock-summary-method')?.textContent ?? '';
        const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
        return `${method} ${path}`;
      }),
    );
    expect(listed.sort()).toEqual(operations.sort());

    // Authorize with the key, then run "List todos" from the page.
    await page
      .getByRole('button', { name: /Authorize/ })
      .first()
      .click();
    await page
      .locator('.auth-container input')
      .first()
      .fill(authorization.replace(/^Bearer /, ''));
    await page.locator('.auth-btn-wrapper .authorize').click();
    await page.locator('.auth-btn-wrapper .btn-done').click();
    // The dialog's backdrop would take the next click while it closes.
    await page.locator('.dialog-ux').waitFor({ state: 'detached' });
    const listTodos = page.locator('#operations-todos-listTodos');
    await listTodos.locator('.opblock-summary').click();
    await listTodos.getByRole('button', { name: 'Execute' }).click();
    const status = listTodos.locator('.live-responses-table tbody .response-col_status').first();
    await expect.poll(() => status.textContent(), { timeout: 5000 }).toBe('200');
    const body = await listTodos
      .locator('.live-responses-table tbody .response-col_description pre')
      .first()
      .textContent();
    expect((JSON.parse(body ?? '[]') as Todo[]).map((todo) => todo.title)).toContain(
      'Only for key holders',
    );
    await screenshot(page, 'docs');
    await page.close();
  });
});
