import type { AddressInfo } from 'node:net';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Problem } from '../src/http/problem.js';
import { buildTestApp, type TestApp } from './helpers/test-app.js';

/** What came back on a raw connection, parsed just enough to assert on. */
interface RawResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Milliseconds from connecting to the connection closing (or the deadline). */
  readonly elapsedMs: number;
}

function parseResponse(raw: string, elapsedMs: number): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0);
  return { status, headers, body: end === -1 ? '' : raw.slice(end + 4), elapsedMs };
}

const sockets = new Set<Socket>();
const timers = new Set<NodeJS.Timeout>();

/**
 * Opens a raw TCP connection, lets `drive` write to it, and resolves with what the server sent
 * once it closes the connection, or after `deadlineMs` at the latest.
 */
function rawExchange(
  port: number,
  drive: (socket: Socket) => void,
  deadlineMs = 5000,
): Promise<RawResponse> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    sockets.add(socket);
    let received = '';
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      timers.delete(deadline);
      socket.destroy();
      resolve(parseResponse(received, Date.now() - started));
    };
    const deadline = setTimeout(finish, deadlineMs);
    timers.add(deadline);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', finish);
    socket.on('error', () => {
      // The server may reset the connection after answering; what it sent is kept.
    });
    socket.once('connect', () => {
      drive(socket);
    });
  });
}

/** Sends `request` in one write. */
function send(port: number, request: string, deadlineMs?: number): Promise<RawResponse> {
  return rawExchange(
    port,
    (socket) => {
      socket.write(request);
    },
    deadlineMs,
  );
}

function problemOf(response: RawResponse): Problem {
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  const problem = JSON.parse(response.body) as Problem;
  expect(problem.status).toBe(response.status);
  expect(problem.type).toBe(`/problems/${problem.code}`);
  expect(problem.request_id).toBe(response.headers['x-request-id']);
  return problem;
}

describe('HTTP server over real sockets', () => {
  let t: TestApp | undefined;

  afterEach(async () => {
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    await t?.close();
    t = undefined;
  });

  async function listen(env: Readonly<Record<string, string>> = {}): Promise<number> {
    t = await buildTestApp({ env });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    return (t.app.server.address() as AddressInfo).port;
  }

  async function todoCount(): Promise<number> {
    const rows = await t?.database.db.selectFrom('todos').select('id').execute();
    return rows?.length ?? -1;
  }

  describe('request head limits', () => {
    it('accepts headers just under 16 KiB', async () => {
      const port = await listen();
      const response = await send(
        port,
        `GET /api/todos HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Big: ${'a'.repeat(15 * 1024)}\r\n\r\n`,
      );
      expect(response.status).toBe(200);
      expect(response.body).toBe('[]');
    });

    it('applies MAX_HEADER_SIZE to the Node server (431 for 10 KiB at an 8 KiB limit)', async () => {
      const port = await listen({ MAX_HEADER_SIZE: '8192' });
      const response = await send(
        port,
        `GET /api/todos HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(10 * 1024)}\r\n\r\n`,
      );
      expect(response.status).toBe(431);
      expect(problemOf(response).code).toBe('headers-too-large');
    });

    it('returns 414 for a request target over 8 KiB on the wire', async () => {
      const port = await listen();
      const response = await send(
        port,
        `GET /api/todos?q=${'a'.repeat(8200)} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      expect(response.status).toBe(414);
      expect(problemOf(response).code).toBe('uri-too-long');
    });
  });

  describe('request framing', () => {
    it('accepts a small chunked body without Content-Length', async () => {
      const port = await listen();
      const json = '{"title":"chunked"}';
      const response = await send(
        port,
        'POST /api/todos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
          `Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${json.length.toString(16)}\r\n${json}\r\n0\r\n\r\n`,
      );
      expect(response.status).toBe(201);
      expect(await todoCount()).toBe(1);
    });

    it('returns 400 for a request line that is not HTTP', async () => {
      const port = await listen();
      const response = await send(port, 'HELLO THERE\r\n\r\n');
      expect(response.status).toBe(400);
      expect(problemOf(response).code).toBe('malformed-request');
    });
  });
});
