import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { SERVICE_ENV, defaultHeaderLines, withDefaults } from './defaults.js';
import { expectRawProblem, rawClient, type RawClient } from './raw-http.js';
import { startServer, type ServerUnderAttack } from './server-process.js';

/**
 * RELIABILITY.md §5 row 13: a body over the limit (64 KiB) is refused with 413 whether or not
 * it announces its length, and the server never buffers it: a 50 MB stream leaves its memory
 * where it was.
 */

const BODY_LIMIT = 64 * 1024;
const FIFTY_MB = 50 * 1024 * 1024;
const RSS_GROWTH_LIMIT_MIB = 20;
/** The server must refuse long before the end: at most this much may be on the wire by then. */
const ACCEPTED_BEFORE_413_LIMIT = 8 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 'a');
const CHUNKED_PIECE = Buffer.concat([
  Buffer.from(`${CHUNK.length.toString(16)}\r\n`),
  CHUNK,
  Buffer.from('\r\n'),
]);
const STREAM_DEADLINE_MS = 15_000;
/** How long a client announcing 50 MB waits for an early refusal before it starts sending. */
const ANSWER_WAIT_MS = 1000;

/** A JSON body of exactly `bytes` bytes: a todo whose description fills it up. */
function jsonBodyOf(bytes: number): string {
  const prefix = '{"title":"a","description":"';
  const body = prefix + 'x'.repeat(bytes - prefix.length - 2) + '"}';
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

const POST_HEAD = (framing: string) =>
  `POST /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}` +
  `Content-Type: application/json\r\n${framing}\r\n`;

/**
 * A listening client pauses after each round of this many bytes (just over the limit, so that
 * the server can decide after the first) to hear an early answer.
 */
const ROUND_BYTES = 2 * CHUNK.length;
const LISTEN_MS = 200;

/**
 * Writes up to `total` bytes of `piece`s with back-pressure, and returns how many it wrote.
 * A `listening` client, as a well-behaved one, pauses after every round to hear an early answer
 * and stops once there is one (writing on into a connection the server has reset makes Node drop
 * the answer unread); a rude one keeps pushing until the server cuts the connection.
 */
function pump(
  socket: Socket,
  received: () => string,
  piece: Buffer,
  total: number,
  listening: boolean,
): { written(): number } {
  let written = 0;
  let round = 0;
  const next = () => {
    if (socket.destroyed || written >= total || (listening && received() !== '')) return;
    if (listening && written - round >= ROUND_BYTES) {
      round = written;
      setTimeout(next, LISTEN_MS);
      return;
    }
    const roundEnd = listening ? round + ROUND_BYTES : total;
    for (let i = 0; i < 4 && written < Math.min(total, roundEnd); i++) {
      socket.write(piece);
      written += piece.length;
    }
    if (socket.writableLength > 1024 * 1024) socket.once('drain', () => setTimeout(next, 1));
    else setTimeout(next, 1);
  };
  next();
  return { written: () => written };
}

/** Samples the server's RSS every 10 ms until stopped; resolves the peak. */
function rssPeak(server: ServerUnderAttack): { stop(): number } {
  let peak = server.rssMiB();
  const timer = setInterval(() => {
    peak = Math.max(peak, server.rssMiB());
  }, 10);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, server.rssMiB());
    },
  };
}

describe('oversized bodies against the real server (row 13)', () => {
  let server: ServerUnderAttack;
  let raw: RawClient;
  let baselineMiB: number;

  beforeAll(async () => {
    server = await startServer();
    raw = rawClient(server.port);
    // Warm up both paths (a todo stored, a 413) so that first-use allocations are not counted.
    const created = await fetch(`${server.baseUrl}/api/todos`, {
      method: 'POST',
      headers: withDefaults({ 'content-type': 'application/json' }),
      body: '{"title":"kept"}',
    });
    expect(created.status).toBe(201);
    const refused = await fetch(`${server.baseUrl}/api/todos`, {
      method: 'POST',
      headers: withDefaults({ 'content-type': 'application/json' }),
      body: jsonBodyOf(BODY_LIMIT + 1),
    });
    expect(refused.status).toBe(413);
    baselineMiB = server.rssMiB();
  });

  afterAll(async () => {
    raw.close();
    await server.stop();
  });

  it('answers 64 KiB + 1 with Content-Length with 413 and stores nothing', async () => {
    const body = jsonBodyOf(BODY_LIMIT + 1);
    const response = await raw.send(POST_HEAD(`Content-Length: ${body.length}\r\n`) + body);
    expectRawProblem(response, 'payload-too-large');
    expect(await server.todoCount()).toBe(1);
  });

  it('answers 64 KiB + 1 sent chunked, without Content-Length, with 413 and stores nothing', async () => {
    const body = jsonBodyOf(BODY_LIMIT + 1);
    const chunks = [body.slice(0, 40_000), body.slice(40_000)]
      .map((chunk) => `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`)
      .join('');
    const response = await raw.send(
      POST_HEAD('Transfer-Encoding: chunked\r\n') + `${chunks}0\r\n\r\n`,
    );
    expectRawProblem(response, 'payload-too-large');
    expect(await server.todoCount()).toBe(1);
  });

  it(`answers a declared 50 MB body with 413 before reading it; RSS grows < ${RSS_GROWTH_LIMIT_MIB} MB`, async () => {
    const memory = rssPeak(server);
    let stream: { written(): number } | undefined;
    const response = await raw.exchange((socket, received) => {
      socket.write(POST_HEAD(`Content-Length: ${FIFTY_MB}\r\n`));
      // Like a client that sent `Expect: 100-continue`: give the server a moment to refuse.
      const start = setTimeout(() => {
        stream = pump(socket, received, CHUNK, FIFTY_MB, true);
      }, ANSWER_WAIT_MS);
      socket.on('close', () => {
        clearTimeout(start);
      });
    }, STREAM_DEADLINE_MS);
    const peak = memory.stop();

    expectRawProblem(response, 'payload-too-large');
    expect(response.closedByServer).toBe(true);
    expect(response.elapsedMs).toBeLessThan(ANSWER_WAIT_MS);
    expect(stream?.written() ?? 0).toBe(0);
    expect(peak - baselineMiB).toBeLessThan(RSS_GROWTH_LIMIT_MIB);
    expect(await server.todoCount()).toBe(1);
  });

  it(`answers a 50 MB chunked stream with 413 and closes it long before the end; RSS grows < ${RSS_GROWTH_LIMIT_MIB} MB`, async () => {
    const memory = rssPeak(server);
    let stream: { written(): number } | undefined;
    const response = await raw.exchange((socket, received) => {
      socket.write(POST_HEAD('Transfer-Encoding: chunked\r\n'));
      stream = pump(socket, received, CHUNKED_PIECE, FIFTY_MB, true);
    }, STREAM_DEADLINE_MS);
    const peak = memory.stop();

    expectRawProblem(response, 'payload-too-large');
    expect(response.closedByServer).toBe(true);
    expect(stream?.written()).toBeLessThan(ACCEPTED_BEFORE_413_LIMIT);
    expect(peak - baselineMiB).toBeLessThan(RSS_GROWTH_LIMIT_MIB);
    expect(await server.todoCount()).toBe(1);
  });

  it(`cuts off a client that keeps pushing a 50 MB chunked stream after the 413; RSS grows < ${RSS_GROWTH_LIMIT_MIB} MB`, async () => {
    const memory = rssPeak(server);
    let stream: { written(): number } | undefined;
    const response = await raw.exchange((socket, received) => {
      socket.write(POST_HEAD('Transfer-Encoding: chunked\r\n'));
      stream = pump(socket, received, CHUNKED_PIECE, FIFTY_MB, false);
    }, STREAM_DEADLINE_MS);
    const peak = memory.stop();

    // The answer may be lost to the reset that cuts the stream; the cut itself is the point.
    expect(response.closedByServer).toBe(true);
    expect(stream?.written()).toBeLessThan(FIFTY_MB);
    if (response.raw !== '') expectRawProblem(response, 'payload-too-large');
    expect(peak - baselineMiB).toBeLessThan(RSS_GROWTH_LIMIT_MIB);
    expect(await server.todoCount()).toBe(1);
  });
});

describe('oversized bodies on every route that reads one (row 13, inject)', () => {
  let t: TestApp;
  let todoId: string;

  beforeAll(async () => {
    t = await buildTestApp({ env: SERVICE_ENV });
    const created = await t.inject({
      method: 'POST',
      url: '/api/todos',
      headers: withDefaults({ 'content-type': 'application/json' }),
      payload: '{"title":"kept"}',
    });
    expect(created.statusCode).toBe(201);
    todoId = created.json<{ id: string }>().id;
  });

  afterAll(async () => {
    await t.close();
  });

  it('answers 64 KiB + 1 with 413 payload-too-large on every POST, PUT and PATCH route, and changes nothing', async () => {
    const routes = t.app.routeIndex
      .routes()
      .filter(({ method }) => ['POST', 'PUT', 'PATCH'].includes(method));
    expect(routes.length).toBeGreaterThanOrEqual(3);
    const payload = jsonBodyOf(BODY_LIMIT + 1);
    for (const { method, url: template } of routes) {
      const url = template.replace(':id', todoId);
      const response = await t.inject({
        method,
        url,
        headers: withDefaults({ 'content-type': 'application/json' }),
        payload,
      });
      expectProblem(response, 413, 'payload-too-large', { instance: url });
    }
    const todo = await t.inject({
      method: 'GET',
      url: `/api/todos/${todoId}`,
      headers: withDefaults(),
    });
    expect(todo.json()).toMatchObject({ title: 'kept', version: 1, status: 'open' });
    const list = await t.inject({ method: 'GET', url: '/api/todos', headers: withDefaults() });
    expect(list.json<unknown[]>()).toHaveLength(1);
  });
});
