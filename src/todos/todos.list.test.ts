import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { expectProblem } from '../../test/helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { parseFilter, parseSort } from './todo-list-query.js';
import { listedTodosJson } from './todo-json.js';
import type { Todo } from './todo.schemas.js';
import { todosRepository } from './todos.repository.js';

/** A clock the test sets; every reading moves it one second on, so timestamps are distinct. */
function settableClock(start: string) {
  let time = Date.parse(start);
  return {
    now: () => {
      const date = new Date(time);
      time += 1000;
      return date;
    },
    set: (iso: string) => {
      time = Date.parse(iso);
    },
  };
}

describe('GET /api/todos: filters, sort, search and count', () => {
  let t: TestApp;
  let clock: ReturnType<typeof settableClock>;

  async function create(body: Record<string, unknown>): Promise<Todo> {
    const response = await t.inject({ method: 'POST', url: '/api/todos', payload: body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json<Todo>();
  }

  async function patch(todo: Todo, body: Record<string, unknown>): Promise<Todo> {
    const response = await t.inject({
      method: 'PATCH',
      url: `/api/todos/${todo.id}`,
      payload: body,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<Todo>();
  }

  async function get(query: string, headers: Record<string, string> = {}) {
    return t.inject({ method: 'GET', url: `/api/todos?${query}`, headers });
  }

  /** Titles of the whole list for `query`, following every page. */
  async function titles(query: string): Promise<string[]> {
    const result: string[] = [];
    let url: string | undefined = `/api/todos?${query}`;
    while (url !== undefined) {
      const response: LightMyRequestResponse = await t.inject({ method: 'GET', url });
      expect(response.statusCode, response.body).toBe(200);
      result.push(...response.json<Todo[]>().map((todo) => todo.title));
      const link = response.headers.link;
      url =
        link === undefined
          ? undefined
          : new URL(/^<([^>]+)>/.exec(String(link))?.[1] ?? '').href.slice(
              'http://todo.test'.length,
            );
    }
    return result;
  }

  beforeEach(async () => {
    clock = settableClock('2026-03-10T12:00:00.000Z');
    t = await buildTestApp({ now: clock.now });
  });
  afterEach(async () => {
    await t.close();
  });

  describe('filters', () => {
    it('filters by a comma list of priorities', async () => {
      for (const priority of ['none', 'low', 'normal', 'high', 'urgent']) {
        await create({ title: priority, priority });
      }
      expect(await titles('priority=urgent,low')).toEqual(['low', 'urgent']);
      expect(await titles('priority=normal')).toEqual(['normal']);
    });

    it('labels= keeps todos that have every label, ignoring case and normalisation', async () => {
      await create({ title: 'both', labels: ['Work', 'Caf\u00e9'] });
      await create({ title: 'work only', labels: ['work'] });
      await create({ title: 'cafe only', labels: ['CAFE\u0301'] });
      await create({ title: 'none' });
      expect(await titles('labels=work')).toEqual(['both', 'work only']);
      expect(await titles(`labels=${encodeURIComponent(' WORK ,café')}`)).toEqual(['both']);
      expect(await titles(`labels=${encodeURIComponent('cafe\u0301')}`)).toEqual([
        'both',
        'cafe only',
      ]);
      expect(await titles('labels=work,home')).toEqual([]);
    });

    it('labels_any= keeps todos that have at least one of the labels', async () => {
      await create({ title: 'a', labels: ['home'] });
      await create({ title: 'b', labels: ['work', 'home'] });
      await create({ title: 'c', labels: ['garden'] });
      await create({ title: 'd' });
      expect(await titles('labels_any=HOME,work')).toEqual(['a', 'b']);
      expect(await titles('labels_any=garden&labels=garden')).toEqual(['c']);
    });

    it('follows label changes made by PUT, PATCH and delete', async () => {
      const todo = await create({ title: 'x', labels: ['one', 'two'] });
      await patch(todo, { labels: ['two', 'three'] });
      expect(await titles('labels=one')).toEqual([]);
      expect(await titles('labels=two,three')).toEqual(['x']);
      await t.inject({ method: 'PUT', url: `/api/todos/${todo.id}`, payload: { title: 'x' } });
      expect(await titles('labels_any=one,two,three')).toEqual([]);
      await patch(todo, { labels: ['four'] });
      await t.inject({ method: 'DELETE', url: `/api/todos/${todo.id}` });
      expect(await titles('labels=four')).toEqual([]);
    });

    describe('due dates', () => {
      beforeEach(async () => {
        await create({ title: 'timed 1 Mar 08:00', due_at: '2026-03-01T10:00:00+02:00' });
        await create({ title: 'all-day 1 Mar', due_date: '2026-03-01' });
        await create({ title: 'all-day 28 Feb', due_date: '2026-02-28' });
        await create({ title: 'timed 2 Mar 00:00', due_at: '2026-03-02T00:00:00Z' });
        await create({ title: 'no due' });
      });

      it('due_before is exclusive; an all-day todo is due at the end of its day (UTC)', async () => {
        expect(await titles('due_before=2026-03-01')).toEqual(['all-day 28 Feb']);
        expect(await titles('due_before=2026-03-01T08:00:00Z')).toEqual(['all-day 28 Feb']);
        expect(await titles('due_before=2026-03-01T08:00:00.001Z')).toEqual([
          'timed 1 Mar 08:00',
          'all-day 28 Feb',
        ]);
        expect(await titles('due_before=2026-03-02')).toEqual([
          'timed 1 Mar 08:00',
          'all-day 1 Mar',
          'all-day 28 Feb',
        ]);
      });

      it('due_after is inclusive, so due_after and due_before make half-open windows', async () => {
        expect(await titles('due_after=2026-03-02')).toEqual(['timed 2 Mar 00:00']);
        expect(await titles('due_after=2026-03-01&due_before=2026-03-02')).toEqual([
          'timed 1 Mar 08:00',
          'all-day 1 Mar',
        ]);
        // An offset, with its + encoded, or decoded to a space by a careless client.
        expect(await titles('due_after=2026-03-01T23:59:59.999%2B00:00')).toEqual([
          'all-day 1 Mar',
          'timed 2 Mar 00:00',
        ]);
        expect(await titles('due_after=2026-03-02T01:00:00+01:00')).toEqual(['timed 2 Mar 00:00']);
      });

      it('overdue=true: due before now and neither completed nor cancelled', async () => {
        const done = await create({ title: 'done, due 27 Feb', due_date: '2026-02-27' });
        await patch(done, { completed: true });
        await create({
          title: 'cancelled, due 27 Feb',
          due_date: '2026-02-27',
          status: 'cancelled',
        });
        clock.set('2026-03-01T23:59:59.999Z');
        expect(await titles('overdue=true')).toEqual(['timed 1 Mar 08:00', 'all-day 28 Feb']);
        clock.set('2026-03-02T00:00:00.000Z');
        expect(await titles('overdue=true')).toEqual([
          'timed 1 Mar 08:00',
          'all-day 1 Mar',
          'all-day 28 Feb',
        ]);
        clock.set('2026-03-02T00:00:00.000Z');
        expect(await titles('overdue=false')).toEqual([
          'timed 2 Mar 00:00',
          'no due',
          'done, due 27 Feb',
          'cancelled, due 27 Feb',
        ]);
        clock.set('2026-03-02T00:00:00.000Z');
        expect(await titles('overdue=true&due_after=2026-03-01')).toEqual([
          'timed 1 Mar 08:00',
          'all-day 1 Mar',
        ]);
      });
    });

    it('created_after (inclusive), created_before (exclusive) and updated_since (inclusive)', async () => {
      clock.set('2026-01-01T00:00:00.000Z');
      const a = await create({ title: 'a' }); // created 00:00:00
      await create({ title: 'b' }); // 00:00:01
      await create({ title: 'c' }); // 00:00:02
      expect(await titles('created_after=2026-01-01T00:00:01Z')).toEqual(['b', 'c']);
      expect(await titles('created_before=2026-01-01T00:00:01Z')).toEqual(['a']);
      expect(
        await titles('created_after=2026-01-01T00:00:01Z&created_before=2026-01-01T00:00:02Z'),
      ).toEqual(['b']);
      expect(await titles('created_after=2026-01-01')).toEqual(['a', 'b', 'c']);
      clock.set('2026-02-01T00:00:00.000Z');
      await patch(a, { title: 'a2' });
      expect(await titles('updated_since=2026-02-01T00:00:00Z')).toEqual(['a2']);
      expect(await titles('updated_since=2026-02-01T00:00:00.001Z')).toEqual([]);
      expect(await titles('updated_since=2026-01-01T00:00:01.000+00:00')).toEqual(['a2', 'b', 'c']);
    });

    it('combines every filter with AND', async () => {
      await create({ title: 'match', priority: 'high', labels: ['work'], due_date: '2026-03-20' });
      await create({
        title: 'wrong priority',
        priority: 'low',
        labels: ['work'],
        due_date: '2026-03-20',
      });
      await create({
        title: 'wrong label',
        priority: 'high',
        labels: ['home'],
        due_date: '2026-03-20',
      });
      await create({
        title: 'too late',
        priority: 'high',
        labels: ['work'],
        due_date: '2026-04-20',
      });
      await create({
        title: 'match but done',
        priority: 'high',
        labels: ['work'],
        completed: true,
        due_date: '2026-03-20',
      });
      expect(
        await titles('priority=high,urgent&labels=work&due_before=2026-04-01&completed=false'),
      ).toEqual(['match']);
      expect(await titles('priority=high&labels_any=work&status=open&q=match')).toEqual(['match']);
    });

    it('DELETE /api/todos takes the same filters', async () => {
      await create({ title: 'keep', labels: ['home'], priority: 'high' });
      await create({ title: 'drop', labels: ['work'], priority: 'high' });
      await create({ title: 'drop milk', labels: ['work'], priority: 'low' });
      const bad = await t.inject({ method: 'DELETE', url: '/api/todos?priority=extreme' });
      expectProblem(bad, 400, 'invalid-parameter', { pointer: 'priority' });
      const response = await t.inject({ method: 'DELETE', url: '/api/todos?labels=work&q=dro' });
      expect(response.statusCode).toBe(204);
      expect(await titles('')).toEqual(['keep']);
      expect(await titles('q=milk')).toEqual([]);
      expect(await titles('labels=work')).toEqual([]);
    });
  });

  describe('sort', () => {
    let todos: Record<string, Todo>;

    beforeEach(async () => {
      todos = {
        b: await create({ title: 'banana', priority: 'low', order: 3, due_date: '2026-03-01' }),
        a: await create({ title: 'Apple', priority: 'urgent', order: 1, status: 'blocked' }),
        e: await create({
          title: 'éclair',
          priority: 'high',
          order: 2,
          due_at: '2026-03-01T09:00:00Z',
          status: 'in_progress',
        }),
        c: await create({
          title: 'cherry',
          priority: 'normal',
          order: 5,
          due_at: '2026-02-01T00:00:00Z',
          completed: true,
        }),
        d: await create({ title: 'Date', priority: 'none', order: 4, status: 'cancelled' }),
      };
      clock.set('2026-04-01T00:00:00.000Z');
      await patch(todos.a as Todo, { description: 'touched' });
    });

    it.each([
      ['', ['Apple', 'éclair', 'banana', 'Date', 'cherry']],
      ['sort=order', ['Apple', 'éclair', 'banana', 'Date', 'cherry']],
      ['sort=-order', ['cherry', 'Date', 'banana', 'éclair', 'Apple']],
      ['sort=created_at', ['banana', 'Apple', 'éclair', 'cherry', 'Date']],
      ['sort=-created_at', ['Date', 'cherry', 'éclair', 'Apple', 'banana']],
      ['sort=updated_at', ['banana', 'éclair', 'cherry', 'Date', 'Apple']],
      ['sort=-updated_at', ['Apple', 'Date', 'cherry', 'éclair', 'banana']],
      // Nulls last both ways; the all-day 1 March is due at its end, after 09:00 that day.
      ['sort=due_at', ['cherry', 'éclair', 'banana', 'Apple', 'Date']],
      ['sort=-due_at', ['banana', 'éclair', 'cherry', 'Date', 'Apple']],
      ['sort=priority', ['Date', 'banana', 'cherry', 'éclair', 'Apple']],
      ['sort=-priority', ['Apple', 'éclair', 'cherry', 'banana', 'Date']],
      ['sort=title', ['Apple', 'banana', 'cherry', 'Date', 'éclair']],
      ['sort=-title', ['éclair', 'Date', 'cherry', 'banana', 'Apple']],
      ['sort=status', ['banana', 'éclair', 'Apple', 'cherry', 'Date']],
      ['sort=-status', ['Date', 'cherry', 'Apple', 'éclair', 'banana']],
    ])('?%s lists %j, the same across pages of 2', async (query, expected) => {
      expect(await titles(query)).toEqual(expected);
      expect(await titles(`${query}&limit=2`)).toEqual(expected);
      expect(await titles(`${query}&limit=1`)).toEqual(expected);
    });

    it('sorts by several keys, mixing directions, with id as the last tie-break', async () => {
      await create({ title: 'apple', priority: 'low' });
      await create({ title: 'APPLE', priority: 'low' });
      // none < low < normal < high < urgent; equal titles fall to id (creation order here).
      expect(await titles('sort=priority,title')).toEqual([
        'Date',
        'apple',
        'APPLE',
        'banana',
        'cherry',
        'éclair',
        'Apple',
      ]);
      expect(await titles('sort=-priority,-title&limit=2')).toEqual([
        'Apple',
        'éclair',
        'cherry',
        'banana',
        'APPLE',
        'apple',
        'Date',
      ]);
      // Within open: the due one first, then no due by id in the last key's direction (desc).
      expect(await titles('sort=status,-due_at&limit=3')).toEqual([
        'banana',
        'APPLE',
        'apple',
        'éclair',
        'Apple',
        'cherry',
        'Date',
      ]);
    });

    it.each([
      ['title,-title', 'duplicate'],
      ['name', 'enum'],
      ['title,', 'enum'],
      ['+title', 'enum'],
      ['--title', 'enum'],
      ['id', 'enum'],
      ['TITLE', 'enum'],
    ])('returns 400 invalid-parameter naming sort for sort=%s', async (sort, code) => {
      const response = await get(`sort=${encodeURIComponent(sort)}`);
      const problem = expectProblem(response, 400, 'invalid-parameter', { pointer: 'sort' });
      expect(problem.errors?.[0]?.code).toBe(code);
    });
  });

  describe('q', () => {
    beforeEach(async () => {
      await create({ title: 'Buy oat milk', description: 'At the Café round the corner' });
      await create({ title: 'Write the e-mail', description: null });
      await create({ title: 'Crème brûlée', description: 'for SUNDAY dinner' });
      await create({ title: 'Plan: NEAR OR far', description: 'use "quotes" and * stars' });
    });

    it.each([
      ['milk', ['Buy oat milk']],
      ['MIL', ['Buy oat milk']],
      ['cafe', ['Buy oat milk']],
      ['CAFÉ', ['Buy oat milk']],
      ['creme brulee', ['Crème brûlée']],
      ['cre\u0300me', ['Crème brûlée']],
      ['b', ['Buy oat milk', 'Crème brûlée']],
      ['buy corner', ['Buy oat milk']],
      ['buy sunday', []],
      ['sun din', ['Crème brûlée']],
      ['ilk', []],
      ['e-mail', ['Write the e-mail']],
      ['the', ['Buy oat milk', 'Write the e-mail']],
      ['near', ['Plan: NEAR OR far']],
      ['"quotes"', ['Plan: NEAR OR far']],
      ['plan:', ['Plan: NEAR OR far']],
    ])('q=%s finds %j (prefix of words, all words, any case or accent)', async (q, expected) => {
      expect(await titles(`q=${encodeURIComponent(q)}`)).toEqual(expected);
    });

    it.each([
      '"',
      '*',
      '-',
      ':',
      'OR',
      'NEAR',
      'NOT',
      'AND',
      'milk OR',
      'milk NOT oat',
      '"milk',
      'milk"',
      'title:milk',
      '-milk',
      'milk*',
      '(milk)',
      'NEAR(milk oat)',
      '^milk',
      '\u0000',
      'a\u0000b',
      'x'.repeat(200),
      '🥛 milk',
    ])('treats search syntax in q=%j as text, never a 5xx', async (q) => {
      const response = await get(`q=${encodeURIComponent(q)}`);
      expect(response.statusCode, response.body).toBe(200);
    });

    it('matches syntax words literally and needs every word', async () => {
      expect(await titles('q=OR')).toEqual(['Plan: NEAR OR far']);
      expect(await titles('q=milk%20OR%20far')).toEqual([]);
      expect(await titles('q=-milk')).toEqual(['Buy oat milk']);
      expect(await titles('q=%22%22')).toEqual([]);
    });

    it('follows changes to title and description, and deletes', async () => {
      const [todo] = (await get('q=milk')).json<Todo[]>();
      await patch(todo as Todo, { title: 'Buy bread', description: null });
      expect(await titles('q=milk')).toEqual([]);
      expect(await titles('q=bread')).toEqual(['Buy bread']);
      expect(await titles('q=corner')).toEqual([]);
      await t.inject({ method: 'DELETE', url: `/api/todos/${(todo as Todo).id}` });
      expect(await titles('q=bread')).toEqual([]);
    });

    it('searches only the owner’s todos', async () => {
      await t.database.writeTransaction((trx) =>
        todosRepository.insert(trx, {
          id: '00000000-0000-7000-8000-000000000001',
          owner_id: 'someone-else',
          title: 'Buy milk too',
          description: null,
          status: 'open',
          priority: 'none',
          position: 1,
          labels: '["work"]',
          due_date: null,
          due_at: null,
          metadata: '{}',
          version: 1,
          completed_at: null,
          created_at: '2026-01-01T00:00:00.000Z',
          updated_at: '2026-01-01T00:00:00.000Z',
        }),
      );
      expect(await titles('q=milk')).toEqual(['Buy oat milk']);
      const filter = parseFilter({ q: 'milk', labels: 'work' }, new Date());
      const rows = await todosRepository.list(t.database.db, 'someone-else', {
        filter,
        sort: parseSort(undefined),
        after: undefined,
        limit: 10,
      });
      const todos = JSON.parse(listedTodosJson(rows, 'http://localhost')) as Todo[];
      expect(todos.map((todo) => todo.title)).toEqual(['Buy milk too']);
    });

    it('pages through search results', async () => {
      for (let i = 0; i < 5; i++) await create({ title: `milk ${i}` });
      expect(await titles('q=milk&limit=2&sort=-title')).toEqual([
        'milk 4',
        'milk 3',
        'milk 2',
        'milk 1',
        'milk 0',
        'Buy oat milk',
      ]);
    });
  });

  describe('Prefer: count=exact', () => {
    beforeEach(async () => {
      for (let i = 0; i < 7; i++)
        await create({ title: `t${i}`, priority: i < 5 ? 'high' : 'low' });
    });

    it('answers X-Total-Count of every matching todo, ignoring paging', async () => {
      const response = await get('priority=high&limit=2', { prefer: 'count=exact' });
      expect(response.statusCode).toBe(200);
      expect(response.json<Todo[]>()).toHaveLength(2);
      expect(response.headers['x-total-count']).toBe('5');
      expect(response.headers['preference-applied']).toBe('count=exact');
      expect(String(response.headers.vary)).toMatch(/\bPrefer\b/);
      const next = new URL(/^<([^>]+)>/.exec(String(response.headers.link))?.[1] ?? '');
      const second = await t.inject({
        method: 'GET',
        url: `${next.pathname}${next.search}`,
        headers: { prefer: 'respond-async, count="exact"; x=1' },
      });
      expect(second.headers['x-total-count']).toBe('5');
    });

    it('counts zero for no match, and all todos without filters', async () => {
      expect((await get('q=nothing', { prefer: 'count=exact' })).headers['x-total-count']).toBe(
        '0',
      );
      expect((await get('', { prefer: 'COUNT=exact' })).headers['x-total-count']).toBe('7');
    });

    it.each([undefined, 'count=estimated', 'return=minimal', 'count', 'counting=exact'])(
      'does not count with Prefer: %s',
      async (prefer) => {
        const response = await get('', prefer === undefined ? {} : { prefer });
        expect(response.statusCode).toBe(200);
        expect(response.headers['x-total-count']).toBeUndefined();
        expect(response.headers['preference-applied']).toBeUndefined();
        expect(String(response.headers.vary)).toMatch(/\bPrefer\b/);
      },
    );

    it('keeps Vary: Origin next to Vary: Prefer', async () => {
      await t.close();
      t = await buildTestApp({ now: clock.now, env: { CORS_ORIGINS: 'https://a.example' } });
      const response = await get('', { origin: 'https://a.example' });
      const vary = String(response.headers.vary).split(/,\s*/);
      expect(vary).toEqual(expect.arrayContaining(['Origin', 'Prefer']));
    });
  });

  describe('cursors are bound to filters, q and sort', () => {
    async function cursorOf(query: string): Promise<string> {
      // Overdue ones (the clock reads 10 March) and ones without a due.
      for (let i = 0; i < 6; i++) {
        await create({
          title: `milk ${i}`,
          labels: ['a', 'b'],
          due_date: i < 3 ? '2026-01-01' : null,
        });
      }
      const response = await get(`${query}&limit=1`);
      const link = /^<([^>]+)>/.exec(String(response.headers.link))?.[1] ?? '';
      return new URL(link).searchParams.get('cursor') ?? '';
    }

    it.each([
      ['sort=title', 'sort=-title'],
      ['sort=title', ''],
      ['', 'sort=order'],
      ['q=milk', 'q=mil'],
      ['q=milk', ''],
      ['labels=a', 'labels_any=a'],
      ['labels=a', 'labels=a,b'],
      ['priority=none', 'priority=none,low'],
      ['due_before=2027-01-01', 'due_before=2027-01-02'],
      ['overdue=false', 'overdue=true'],
      ['created_after=2020-01-01', 'created_after=2020-01-01T00:00:00.001Z'],
      ['updated_since=2020-01-01', ''],
    ])('refuses a cursor from ?%s with ?%s', async (from, to) => {
      const cursor = await cursorOf(from);
      const response = await get(`${to}&limit=1&cursor=${encodeURIComponent(cursor)}`);
      expectProblem(response, 400, 'invalid-cursor', { pointer: 'cursor' });
    });

    it('carries a 500-character title key in a cursor', async () => {
      await create({ title: '🥛'.repeat(500) });
      await create({ title: '🍞'.repeat(500) });
      expect(await titles('sort=-title&limit=1')).toEqual(['🥛'.repeat(500), '🍞'.repeat(500)]);
    });

    it.each([
      ['sort=order,created_at', ''],
      ['labels=A,b', 'labels=B,a'],
      ['status=open,blocked', 'status=blocked,open'],
      ['q=milk', 'q=%20milk%20'],
      ['created_after=2020-01-01', 'created_after=2020-01-01T02:00:00%2B02:00'],
      ['overdue=true&due_after=2000-01-01', 'due_after=2000-01-01&overdue=true'],
    ])('accepts a cursor from ?%s with the equivalent ?%s', async (from, to) => {
      const cursor = await cursorOf(from);
      const response = await get(`${to}&limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(response.statusCode, response.body).toBe(200);
    });
  });

  describe('OpenAPI', () => {
    interface Operation {
      parameters: { in: string; name: string; description?: string }[];
      responses: Record<string, { headers?: Record<string, unknown> }>;
    }

    it('describes every query parameter of listing and bulk delete, and the count headers', async () => {
      const document = (await t.inject({ method: 'GET', url: '/api/openapi.json' })).json<{
        paths: Record<string, Record<string, Operation>>;
      }>();
      const list = document.paths['/api/todos']?.get as Operation;
      const bulkDelete = document.paths['/api/todos']?.delete as Operation;
      const names = (operation: Operation) =>
        operation.parameters.filter((p) => p.in === 'query').map((p) => p.name);
      expect(names(list)).toEqual(
        expect.arrayContaining(['limit', 'cursor', 'sort', 'q', 'labels', 'overdue', 'due_after']),
      );
      expect(names(bulkDelete)).toEqual(
        names(list).filter((n) => !['limit', 'cursor', 'sort', 'include_deleted'].includes(n)),
      );
      for (const parameter of [...list.parameters, ...bulkDelete.parameters]) {
        expect(parameter.description, parameter.name).toMatch(/\w{3}/);
      }
      expect(list.parameters.find((p) => p.name === 'q')?.description).toMatch(/every.*word/is);
      expect(Object.keys(list.responses['200']?.headers ?? {})).toEqual(
        expect.arrayContaining(['Link', 'X-Total-Count', 'Preference-Applied', 'Vary']),
      );
    });
  });

  describe('invalid parameters', () => {
    it.each([
      ['status', 'done'],
      ['status', 'open,'],
      ['completed', 'yes'],
      ['priority', 'critical'],
      ['priority', 'high,,low'],
      ['labels', ''],
      ['labels', 'a,,b'],
      ['labels', 'x'.repeat(65)],
      ['labels', Array.from({ length: 21 }, (_, i) => `l${i}`).join(',')],
      ['labels_any', ' , '],
      ['due_before', 'tomorrow'],
      ['due_before', '2026-02-30'],
      ['due_before', '2026-03-01T10:00:00'],
      ['due_before', '2026-03-01T24:00:00Z'],
      ['due_before', '2026-03-01T10:00:00+24:00'],
      ['due_before', '0000-01-01T00:00:00+01:00'],
      ['due_before', '20260301'],
      ['due_after', '2026-3-1'],
      ['due_after', '1772323200'],
      ['overdue', 'yes'],
      ['overdue', ''],
      ['created_after', 'yesterday'],
      ['created_before', '2026-13-01'],
      ['updated_since', '2026-03-01T10:00Z'],
      ['q', ''],
      ['q', '   '],
      ['q', 'x'.repeat(201)],
      ['sort', ''],
      ['sort', 'due'],
      ['limit', '0'],
    ])('returns 400 invalid-parameter naming %s for %j', async (name, value) => {
      const response = await get(`${name}=${encodeURIComponent(value)}`);
      expectProblem(response, 400, 'invalid-parameter', { pointer: name });
    });

    it('returns 400 unknown-parameter for a filter that does not exist', async () => {
      const response = await get('label=work');
      expectProblem(response, 400, 'unknown-parameter', { pointer: 'label' });
    });
  });
});
