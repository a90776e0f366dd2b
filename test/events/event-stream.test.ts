import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { TodoEvent } from '../../src/events/todo-event.schemas.js';
import { purgeExpired } from '../../src/maintenance/purges.js';
import type { Todo } from '../../src/todos/todo.schemas.js';
import { openSse, type SseStream } from '../helpers/sse-client.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Issue 6 item 3: `GET /api/todos/events` over a real socket — live delivery, resume with
 * `Last-Event-ID` without gaps or duplicates, `reset` past the retention, heartbeats, the
 * per-owner cap, slow consumers dropped, and shutdown with streams open.
 */

interface Served {
  readonly t: TestApp;
  readonly base: string;
  readonly clock: { now: Date };
  stream(headers?: Record<string, string>): Promise<SseStream>;
  create(title: string, extra?: object): Promise<Todo>;
}

const opened: { t: TestApp; streams: SseStream[] }[] = [];
afterEach(async () => {
  for (const { t, streams } of opened.splice(0)) {
    for (const stream of streams) stream.close();
    await t.close();
  }
});

async function serve(env: Record<string, string> = {}): Promise<Served> {
  const clock = { now: new Date('2026-11-21T10:00:00Z') };
  const t = await buildTestApp({ env, now: () => clock.now });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const streams: SseStream[] = [];
  opened.push({ t, streams });
  return {
    t,
    base,
    clock,
    async stream(headers = {}) {
      const stream = await openSse(`${base}/api/todos/events`, headers);
      streams.push(stream);
      return stream;
    },
    async create(title, extra = {}) {
      const response = await fetch(`${base}/api/todos`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title, ...extra }),
      });
      expect(response.status).toBe(201);
      return (await response.json()) as Todo;
    },
  };
}

const eventOf = (data: string) => JSON.parse(data) as TodoEvent;

describe('the event stream', () => {
  it('delivers each committed change as it happens, as documented', async () => {
    const s = await serve();
    const stream = await s.stream();
    expect(stream.status).toBe(200);
    expect(stream.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(stream.headers.get('cache-control')).toBe('no-store');
    expect(stream.headers.get('x-request-id')).toBeTruthy();

    const todo = await s.create('Streamed');
    const created = await stream.next();
    expect(created.event).toBe('todo.created');
    const event = eventOf(created.data);
    expect(created.id).toBe(String(event.sequence));
    expect(event).toMatchObject({
      type: 'todo.created',
      timestamp: todo.created_at,
      data: { todo: { ...todo } },
    });
    expect(event.id).toMatch(/^evt_/);

    await fetch(`${s.base}/api/todos/${todo.id}/complete`, { method: 'POST' });
    expect((await stream.next()).event).toBe('todo.status_changed');
    expect((await stream.next()).event).toBe('todo.completed');
  });

  it('resumes after Last-Event-ID with every later event, once each, in order', async () => {
    const s = await serve();
    const first = await s.stream();
    for (const title of ['a', 'b', 'c']) await s.create(title);
    const seen = [await first.next(), await first.next(), await first.next()];
    first.close();
    for (const title of ['d', 'e']) await s.create(title);

    const resumed = await s.stream({ 'last-event-id': seen[1]?.id ?? '' });
    const titles = [];
    for (let i = 0; i < 3; i++) titles.push(eventOf((await resumed.next()).data).data.todo.title);
    expect(titles).toEqual(['c', 'd', 'e']);
    await expect(resumed.next(300)).rejects.toThrow(/no event/);
  });

  it('starts with a reset when the events after Last-Event-ID are no longer kept', async () => {
    const s = await serve({ EVENT_RETENTION_HOURS: '24' });
    await s.create('old');
    s.clock.now = new Date('2026-11-22T11:00:00Z');
    await s.create('new');
    await purgeExpired({
      database: s.t.database,
      now: () => s.clock.now,
      deletedRetentionDays: 30,
      eventRetentionHours: 24,
    });
    const stream = await s.stream({ 'last-event-id': '0' });
    const reset = await stream.next();
    expect(reset.event).toBe('reset');
    expect(reset.id).toBe('2');
    await s.create('after');
    expect(eventOf((await stream.next()).data)).toMatchObject({ sequence: 3 });

    // An id ahead of the server (a database restored from backup) is no better.
    const ahead = await s.stream({ 'last-event-id': '99' });
    expect((await ahead.next()).event).toBe('reset');
  });

  it('sends heartbeat comments while idle', async () => {
    const s = await serve({ SSE_HEARTBEAT_MS: '100' });
    const stream = await s.stream();
    await new Promise((resolve) => setTimeout(resolve, 450));
    expect(stream.comments()).toBeGreaterThanOrEqual(3);
  });

  it('caps the streams of one owner, and frees a slot when one closes', async () => {
    const s = await serve({ SSE_MAX_STREAMS: '2' });
    const streams = [await s.stream(), await s.stream()];
    const third = await s.stream();
    expect(third.status).toBe(429);
    const problem = JSON.parse((await third.next()).data) as { code: string };
    expect(problem.code).toBe('too-many-streams');

    streams[0]?.close();
    let status = 429;
    for (let i = 0; i < 50 && status === 429; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const retry = await s.stream();
      status = retry.status;
      if (status !== 200) retry.close();
    }
    expect(status).toBe(200);
  });

  it('answers 406 to a client that does not accept text/event-stream', async () => {
    const s = await serve();
    const response = await fetch(`${s.base}/api/todos/events`, {
      headers: { accept: 'application/json' },
    });
    expect(response.status).toBe(406);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });

  it('refuses a malformed Last-Event-ID with a problem', async () => {
    const s = await serve();
    const stream = await s.stream({ 'last-event-id': 'abc' });
    expect(stream.status).toBe(400);
  });

  it('drops a client that stops reading instead of buffering for it', async () => {
    const s = await serve({ SSE_MAX_STREAMS: '1', SSE_DRAIN_TIMEOUT_MS: '300' });
    const { port } = new URL(s.base);
    // A client that sends the request, then never reads a byte.
    const socket = connect(Number(port), '127.0.0.1');
    socket.pause();
    socket.write(
      'GET /api/todos/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n',
    );
    // Wait until the stream holds the owner's only slot.
    for (let i = 0; i < 100; i++) {
      const probe = await s.stream();
      probe.close();
      if (probe.status === 429) break;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    // ~36 KB per event: far more than the socket buffers hold.
    const metadata = Object.fromEntries(
      Array.from({ length: 50 }, (_, i) => [`key${i}`, 'x'.repeat(500)]),
    );
    const description = 'y'.repeat(10_000);
    for (let i = 0; i < 600; i++) await s.create(`big ${i}`, { description, metadata });

    // The slot frees once the server has given up on the reader.
    let status = 429;
    for (let i = 0; i < 100 && status === 429; i++) {
      const next = await s.stream();
      status = next.status;
      next.close();
      if (status === 429) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(status).toBe(200);
    socket.destroy();
  }, 60_000);

  it('ends open streams when the service shuts down', async () => {
    const s = await serve();
    const stream = await s.stream();
    await s.create('before shutdown');
    await stream.next();
    const started = Date.now();
    await s.t.app.close();
    await stream.ended;
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
