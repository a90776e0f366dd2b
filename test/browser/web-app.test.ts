import type { Locator, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import type { Todo } from '../../src/todos/todo.schemas.js';
import {
  launchBrowser,
  screenshot,
  seriousAxeViolations,
  type TestBrowser,
} from '../helpers/browser.js';
import { serveTestApp, type ServedApp } from '../helpers/served-app.js';

/**
 * The web app at `/`, driven in a real Chromium against the real service (SQLite file, real
 * HTTP on a loopback port). Changes made "by curl" are plain fetch calls from this process.
 */

let t: ServedApp;
let browser: TestBrowser;

/** Requests the pages made to anywhere but the service: the app must need no CDN, no network. */
const foreignRequests: string[] = [];

beforeAll(async () => {
  t = await serveTestApp();
  browser = await launchBrowser();
  browser.context.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(`${t.origin}/`) && !url.startsWith('data:')) foreignRequests.push(url);
  });
});
afterAll(async () => {
  await browser.close();
  await t.close();
});
// Each test starts from an empty list: delete everything, then open pages afresh.
afterEach(async () => {
  for (const page of browser.context.pages()) await page.close();
  await t.api('DELETE', '/api/todos');
});

async function openApp(query = ''): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${t.origin}/${query}`);
  await expect.poll(() => page.getByTestId('stream-state').textContent()).toBe('Live');
  return page;
}

const row = (page: Page, title: string): Locator =>
  page.locator('.todo-list > li', { has: page.getByRole('button', { name: title, exact: true }) });

async function titlesOf(page: Page): Promise<string[]> {
  return page.locator('.todo-list .todo-title').allTextContents();
}

const create = (fields: Partial<Todo> & { title: string }) => t.api('POST', '/api/todos', fields);

describe('when a user works through the list', () => {
  test('then add, inline edit, status moves, delete and undo all reach the API', async () => {
    const page = await openApp();
    await page.getByLabel('New todo').fill('Buy milk');
    await page.getByLabel('New todo').press('Enter');
    await expect.poll(() => titlesOf(page)).toEqual(['Buy milk']);
    await expect.poll(() => page.getByTestId('summary').textContent()).toBe('1 todo');
    const [created] = await t.api<Todo[]>('GET', '/api/todos');
    expect(created).toMatchObject({ title: 'Buy milk', status: 'open', version: 1 });

    await page.getByRole('button', { name: 'Edit “Buy milk”' }).click();
    const editor = page.getByRole('form', { name: 'Edit “Buy milk”' });
    await editor.getByLabel('Title').fill('Buy oat milk');
    await editor.getByLabel('Notes').fill('Two cartons');
    await editor.getByLabel('Priority').selectOption('high');
    await editor.getByLabel('Labels').fill('shop, home');
    await editor.getByLabel('Due date').fill('2031-12-01');
    await screenshot(page, 'editor');
    await editor.getByRole('button', { name: 'Save' }).click();
    const edited = row(page, 'Buy oat milk');
    await expect.poll(() => edited.locator('.todo-meta').textContent()).toContain('High');
    expect(await edited.locator('.chip').allTextContents()).toEqual(['shop', 'home']);
    expect(await edited.locator('.todo-description').textContent()).toBe('Two cartons');
    expect(await t.api('GET', `/api/todos/${created?.id}`)).toMatchObject({
      title: 'Buy oat milk',
      description: 'Two cartons',
      priority: 'high',
      labels: ['shop', 'home'],
      due_date: '2031-12-01',
      version: 2,
    });

    // The status menu offers only the moves the state table allows.
    const move = page.getByLabel('Change status of “Buy oat milk”');
    await move.selectOption('start');
    await expect.poll(() => edited.locator('.badge').first().textContent()).toBe('In progress');
    expect(await t.api('GET', `/api/todos/${created?.id}`)).toMatchObject({
      status: 'in_progress',
    });
    await move.selectOption('block');
    await expect.poll(() => edited.locator('.badge').first().textContent()).toBe('Blocked');

    // Completing leaves the "Active" view; the "All" view shows it, with only "Reopen" possible.
    await page.getByRole('checkbox', { name: 'Complete “Buy oat milk”' }).check();
    await expect.poll(() => titlesOf(page)).toEqual([]);
    await page.getByLabel('Status', { exact: true }).selectOption('all');
    await expect.poll(() => titlesOf(page)).toEqual(['Buy oat milk']);
    const enabled = await move
      .locator('option:not([disabled])')
      .evaluateAll((options) => options.map((option) => (option as HTMLOptionElement).value));
    expect(enabled).toEqual(['', 'reopen']);
    expect(await page.getByRole('checkbox', { name: 'Reopen “Buy oat milk”' }).isChecked()).toBe(
      true,
    );

    await page.getByRole('button', { name: 'Delete “Buy oat milk”' }).click();
    await expect.poll(() => titlesOf(page)).toEqual([]);
    await expect.poll(() => t.api<Todo[]>('GET', '/api/todos')).toEqual([]);
    await page.getByTestId('toast').getByRole('button', { name: 'Undo' }).click();
    await expect.poll(() => titlesOf(page)).toEqual(['Buy oat milk']);
    expect(foreignRequests).toEqual([]);
    expect(await t.api('GET', `/api/todos/${created?.id}`)).toMatchObject({
      deleted_at: null,
      status: 'completed',
    });
  });

  test('then a rejected edit shows the problem as a readable message and changes nothing', async () => {
    const todo = await create({ title: 'Label me' });
    const page = await openApp();
    await page.getByRole('button', { name: 'Edit “Label me”' }).click();
    const editor = page.getByRole('form', { name: 'Edit “Label me”' });
    await editor.getByLabel('Labels').fill('x'.repeat(65));
    await editor.getByRole('button', { name: 'Save' }).click();
    await expect
      .poll(() => editor.getByRole('alert').textContent())
      .toBe('Labels: must NOT have more than 64 characters.');
    expect(await t.api('GET', `/api/todos/${todo.id}`)).toMatchObject({ labels: [], version: 1 });
  });

  test('then "Clear completed" deletes every completed todo and undo brings them back', async () => {
    for (const title of ['Done one', 'Done two', 'Done three'])
      await create({ title, status: 'completed' });
    await create({ title: 'Still open' });
    const page = await openApp('?status=all');
    await expect.poll(async () => (await titlesOf(page)).length).toBe(4);
    await page.getByRole('button', { name: 'Clear completed' }).click();
    await expect.poll(() => titlesOf(page)).toEqual(['Still open']);
    const toast = page.getByTestId('toast').filter({ hasText: 'Cleared 3 completed todos.' });
    await toast.getByRole('button', { name: 'Undo' }).click();
    await expect.poll(async () => (await titlesOf(page)).length).toBe(4);
    expect((await t.api<Todo[]>('GET', '/api/todos?status=completed')).length).toBe(3);
  });
});

describe('when the list is filtered, searched and sorted', () => {
  test('then the list shows what the API answers for the same query, and the URL keeps it', async () => {
    await create({ title: 'Milk and bread', labels: ['shop'], priority: 'low' });
    await create({ title: 'Café with Ana', labels: ['social'], priority: 'urgent' });
    await create({
      title: 'Quarterly report',
      labels: ['work'],
      priority: 'urgent',
      due_date: '2020-01-01',
    });
    await create({ title: 'Fix the bike', labels: ['home'], status: 'blocked', priority: 'high' });
    await create({ title: 'Old chore', status: 'completed' });
    const page = await openApp();
    await expect.poll(async () => (await titlesOf(page)).length).toBe(4);

    await page.getByLabel('Search').fill('cafe');
    await expect.poll(() => titlesOf(page)).toEqual(['Café with Ana']);
    expect(page.url()).toContain('q=cafe');
    await page.getByLabel('Search').fill('');
    await expect.poll(async () => (await titlesOf(page)).length).toBe(4);

    await page.getByLabel('Priority', { exact: true }).selectOption('urgent');
    await expect
      .poll(async () => (await titlesOf(page)).sort())
      .toEqual(['Café with Ana', 'Quarterly report']);
    await page.getByLabel('Overdue only').check();
    await expect.poll(() => titlesOf(page)).toEqual(['Quarterly report']);
    await page.getByLabel('Overdue only').uncheck();
    await page.getByLabel('Priority', { exact: true }).selectOption('all');

    await page.getByLabel('Status', { exact: true }).selectOption('blocked');
    await expect.poll(() => titlesOf(page)).toEqual(['Fix the bike']);
    await page.getByLabel('Status', { exact: true }).selectOption('all');
    await page.getByLabel('Labels', { exact: true }).fill('work');
    await expect.poll(() => titlesOf(page)).toEqual(['Quarterly report']);
    await page.getByLabel('Labels', { exact: true }).fill('');

    await page.getByLabel('Sort', { exact: true }).selectOption('title');
    const byTitle = [
      'Café with Ana',
      'Fix the bike',
      'Milk and bread',
      'Old chore',
      'Quarterly report',
    ];
    await expect.poll(() => titlesOf(page)).toEqual(byTitle);
    const api = await t.api<Todo[]>('GET', '/api/todos?sort=title');
    expect(api.map((todo) => todo.title)).toEqual(byTitle);
    await screenshot(page, 'list');

    // The view survives a reload: it lives in the address.
    await page.reload();
    await expect.poll(() => titlesOf(page)).toEqual(byTitle);
    expect(await page.getByLabel('Status', { exact: true }).inputValue()).toBe('all');
    expect(await page.getByLabel('Sort', { exact: true }).inputValue()).toBe('title');
  });

  test('then scrolling to the end loads the next pages by their cursors', async () => {
    for (let index = 0; index < 120; index++)
      await create({ title: `Item ${String(index).padStart(3, '0')}` });
    const page = await openApp('?sort=title');
    await expect.poll(async () => (await titlesOf(page)).length).toBe(50);
    expect(await page.getByTestId('summary').textContent()).toBe('120 todos');
    // Only scrolling loads more (no button is pressed); each poll scrolls to the end again, so
    // that a page appended just as the previous scroll landed is scrolled past too.
    for (const loaded of [100, 120]) {
      await expect
        .poll(async () => {
          await page.locator('.list-end').scrollIntoViewIfNeeded();
          return (await titlesOf(page)).length;
        })
        .toBe(loaded);
    }
    const titles = await titlesOf(page);
    expect(titles[0]).toBe('Item 000');
    expect(titles.at(-1)).toBe('Item 119');
    expect(new Set(titles).size).toBe(120);
    expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
  });
});

describe('when two tabs and curl change the same todos', () => {
  test('then a change made anywhere appears in the other tab within a second', async () => {
    const first = await openApp();
    const second = await openApp();
    await first.getByLabel('New todo').fill('Made in tab one');
    await first.getByLabel('New todo').press('Enter');
    const started = Date.now();
    await expect.poll(() => titlesOf(second), { interval: 20 }).toEqual(['Made in tab one']);
    expect(Date.now() - started).toBeLessThan(1000);

    const fromCurl = await create({ title: 'Made by curl' });
    await expect
      .poll(() => titlesOf(second), { interval: 20, timeout: 1000 })
      .toContain('Made by curl');
    await expect
      .poll(() => titlesOf(first), { interval: 20, timeout: 1000 })
      .toContain('Made by curl');

    await t.api('PATCH', `/api/todos/${fromCurl.id}`, { title: 'Renamed by curl' });
    await expect
      .poll(() => titlesOf(second), { interval: 20, timeout: 1000 })
      .toContain('Renamed by curl');
    await t.api('DELETE', `/api/todos/${fromCurl.id}`);
    await expect
      .poll(() => titlesOf(first), { interval: 20, timeout: 1000 })
      .toEqual(['Made in tab one']);
  });

  test('then saving over a change made meanwhile in another tab answers 412 and offers to reload', async () => {
    const todo = await create({ title: 'Shared todo' });
    const first = await openApp();
    const second = await openApp();

    await second.getByRole('button', { name: 'Edit “Shared todo”' }).click();
    // The editor's name follows the title it edits, which the reload below changes.
    const secondEditor = second.locator('.todo-editing form');
    await first.getByRole('button', { name: 'Edit “Shared todo”' }).click();
    const firstEditor = first.getByRole('form', { name: 'Edit “Shared todo”' });
    await firstEditor.getByLabel('Title').fill('Renamed in tab one');
    await firstEditor.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => titlesOf(first)).toEqual(['Renamed in tab one']);

    // Tab two still edits version 1: it is told, and its save is refused rather than overwriting.
    await expect
      .poll(() => secondEditor.getByRole('status').textContent())
      .toContain('changed elsewhere');
    await secondEditor.getByLabel('Title').fill('Renamed in tab two');
    await secondEditor.getByRole('button', { name: 'Save' }).click();
    const alert = secondEditor.getByRole('alert');
    await expect
      .poll(() => alert.textContent())
      .toContain('Someone changed this todo since you loaded it.');
    await screenshot(second, 'conflict');
    expect(await t.api('GET', `/api/todos/${todo.id}`)).toMatchObject({
      title: 'Renamed in tab one',
      version: 2,
    });

    await alert.getByRole('button', { name: 'Reload' }).click();
    await expect
      .poll(() => secondEditor.getByLabel('Title').inputValue())
      .toBe('Renamed in tab one');
    await secondEditor.getByLabel('Title').fill('Renamed in tab two');
    await secondEditor.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => titlesOf(second)).toEqual(['Renamed in tab two']);
    await expect.poll(() => titlesOf(first)).toEqual(['Renamed in tab two']);
    expect(await t.api('GET', `/api/todos/${todo.id}`)).toMatchObject({ version: 3 });
  });
});

describe('when the user drives the app from the keyboard', () => {
  test('then shortcuts add, move, complete, edit, delete, undo and show help', async () => {
    await create({ title: 'First' });
    await create({ title: 'Second' });
    const page = await openApp('?status=all&sort=title');
    await expect.poll(() => titlesOf(page)).toEqual(['First', 'Second']);

    await page.keyboard.press('n');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('new-todo');
    await page.keyboard.type('Third');
    await page.keyboard.press('Enter');
    await expect.poll(() => titlesOf(page)).toEqual(['First', 'Second', 'Third']);
    await page.locator('h1').click();

    await page.keyboard.press('j');
    await page.keyboard.press('j');
    const focusedTitle = () =>
      page.evaluate(() => document.activeElement?.querySelector('.todo-title')?.textContent);
    expect(await focusedTitle()).toBe('Second');
    await page.keyboard.press('k');
    expect(await focusedTitle()).toBe('First');

    await page.keyboard.press('x');
    await expect
      .poll(() => row(page, 'First').locator('.badge').first().textContent())
      .toBe('Completed');

    await page.keyboard.press('e');
    await expect
      .poll(() => page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value))
      .toBe('First');
    await page.keyboard.press('Escape');
    await expect.poll(focusedTitle).toBe('First');

    await page.keyboard.press('d');
    await expect.poll(() => titlesOf(page)).toEqual(['Second', 'Third']);
    await page.keyboard.press('u');
    await expect.poll(() => titlesOf(page)).toEqual(['First', 'Second', 'Third']);

    await page.keyboard.press('?');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.waitFor();
    await screenshot(page, 'shortcuts');
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });

    await page.keyboard.press('/');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('search');
  });
});

describe('when the page is checked for accessibility and small screens', () => {
  test('then axe finds no serious violation in the list or the editor', async () => {
    await create({
      title: 'Overdue thing',
      priority: 'urgent',
      labels: ['work'],
      due_date: '2020-05-01',
    });
    await create({ title: 'Blocked thing', status: 'blocked', description: 'Waiting on a reply' });
    const page = await openApp();
    await expect.poll(async () => (await titlesOf(page)).length).toBe(2);
    expect(await seriousAxeViolations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Edit “Blocked thing”' }).click();
    expect(await seriousAxeViolations(page)).toEqual([]);
  });

  test('then a phone-sized window shows everything without sideways scrolling', async () => {
    await create({
      title: 'A long title that has to wrap on a narrow phone screen without overflowing',
      labels: ['home', 'errands'],
      due_date: '2031-01-01',
    });
    await create({ title: 'Short one', priority: 'high' });
    const page = await openApp();
    await page.setViewportSize({ width: 390, height: 844 });
    await expect.poll(async () => (await titlesOf(page)).length).toBe(2);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, 'phone');
    expect(await seriousAxeViolations(page)).toEqual([]);
  });
});
