import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyBaseLogger, FastifyReply } from 'fastify';
import type { Db } from '../db/database.js';
import type { EventBus } from './event-bus.js';
import type { TodoEventRow } from './todo-event.table.js';
import { todoEventOf } from './todo-events.js';
import { todoEventsRepository as events } from './todo-events.repository.js';

export interface EventStreamSettings {
  /** Between comment lines that keep proxies from closing an idle stream; also a poll. */
  readonly heartbeatMs: number;
  /** How long a client may leave a full buffer unread before it is dropped. */
  readonly drainTimeoutMs: number;
}

export interface EventStreamStart {
  readonly db: Db;
  readonly bus: EventBus;
  readonly ownerId: string;
  readonly baseUrl: string;
  /** The sequence the client has seen everything up to. */
  readonly after: number;
  /** The client asked to resume from events no longer kept: tell it to list again first. */
  readonly reset: boolean;
  readonly settings: EventStreamSettings;
  readonly log: FastifyBaseLogger;
}

/** Events read from the outbox per query. */
const BATCH = 100;
/** What EventSource waits before it reconnects (with `Last-Event-ID`). */
const RECONNECT_MS = 2000;

function frame(row: TodoEventRow, baseUrl: string): string {
  return `id: ${row.seq}\nevent: ${row.type}\ndata: ${JSON.stringify(todoEventOf(row, baseUrl))}\n\n`;
}

/**
 * Answers with a `text/event-stream`: the events after `start.after`, then each new one as the
 * bus announces it. Reads are pulled from the outbox, one batch at a time and only once the
 * previous batch left the buffer, so memory per stream stays bounded; a client that leaves the
 * buffer full for `drainTimeoutMs` is disconnected (it resumes later with `Last-Event-ID`).
 */
export function streamEvents(reply: FastifyReply, start: EventStreamStart): void {
  const { db, bus, ownerId, baseUrl, settings, log } = start;
  const res = reply.raw;
  let cursor = start.after;
  // Changed from callbacks (a wake-up, the socket closing) while a pump is waiting.
  const state = { pumping: false, closed: false };
  /** Wake-ups so far: a pump goes round again when one came while it read. */
  let wakes = 0;

  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined) headers[name] = value;
  }
  reply.hijack();
  res.writeHead(200, {
    ...headers,
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    // nginx and similar proxies buffer responses unless told not to.
    'x-accel-buffering': 'no',
  });
  res.write(`retry: ${RECONNECT_MS}\n\n`);
  if (start.reset) {
    res.write(
      `id: ${cursor}\nevent: reset\ndata: ${JSON.stringify({ reason: 'The events after your Last-Event-ID are no longer kept. List the todos again; the stream goes on from here.' })}\n\n`,
    );
  }

  const finish = () => {
    if (state.closed) return;
    state.closed = true;
    clearInterval(heartbeat);
    unsubscribe();
    res.end();
  };
  res.on('close', () => {
    state.closed = true;
    clearInterval(heartbeat);
    unsubscribe();
  });

  /** Resolves once the buffer drained; drops the client when it does not in time. */
  const drained = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        log.info({ ownerId }, 'event stream dropped: the client did not read its events in time');
        res.destroy();
        resolve();
      }, settings.drainTimeoutMs);
      const done = () => {
        clearTimeout(timer);
        res.off('drain', done);
        res.off('close', done);
        resolve();
      };
      res.on('drain', done);
      res.on('close', done);
    });

  const pump = async (): Promise<void> => {
    wakes++;
    if (state.pumping) return;
    state.pumping = true;
    try {
      let seen: number;
      do {
        seen = wakes;
        let rows: TodoEventRow[];
        do {
          rows = await events.after(db, ownerId, cursor, BATCH);
          for (const row of rows) {
            if (state.closed) return;
            cursor = row.seq;
            if (!res.write(frame(row, baseUrl))) await drained();
          }
        } while (rows.length === BATCH && !state.closed);
      } while (seen !== wakes && !state.closed);
    } catch (error) {
      // The database is unreachable, say: the client reconnects and resumes where it was.
      log.warn({ err: error }, 'event stream ended: reading events failed');
      finish();
    } finally {
      state.pumping = false;
    }
  };

  const unsubscribe = bus.subscribe(ownerId, { wake: () => void pump(), end: finish });
  const heartbeat = setInterval(() => {
    res.write(': heartbeat\n\n');
    void pump();
  }, settings.heartbeatMs);
  void pump();
}
