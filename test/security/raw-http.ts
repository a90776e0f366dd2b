import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';
import type { Problem } from '../../src/http/problem.js';
import { PROBLEM_CODES, type ProblemCode } from '../../src/http/problem-codes.js';

/**
 * Hand-written HTTP/1.1 over a raw TCP socket: the only way to send what a well-behaved client
 * library refuses to (bad framing, CR/LF in a header value, a body dripping one byte at a time)
 * and to see exactly what the server wrote back and when it closed the connection.
 */

/** Everything the server sent on one connection, with the first response parsed. */
export interface RawResponse {
  /** Status of the first response; 0 when the server sent nothing. */
  readonly status: number;
  /** Headers of the first response, names lower-cased. */
  readonly headers: Readonly<Record<string, string>>;
  /** Body of the first response (by Content-Length when given). */
  readonly body: string;
  /** Every byte received, as latin1 text. */
  readonly raw: string;
  /** How many responses the server started on this connection. */
  readonly responses: number;
  /** Milliseconds from connecting until the connection closed (or the deadline). */
  readonly elapsedMs: number;
  /** Whether the server closed or reset the connection before the deadline. */
  readonly closedByServer: boolean;
}

function parse(raw: string, elapsedMs: number, closedByServer: boolean): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0)
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  const rest = end === -1 ? '' : raw.slice(end + 4);
  const length = headers['content-length'];
  return {
    status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0),
    headers,
    body: length === undefined ? rest : rest.slice(0, Number(length)),
    raw,
    responses: raw.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0,
    elapsedMs,
    closedByServer,
  };
}

/** Lets a driver write to the socket and see what arrived so far. */
export type Driver = (socket: Socket, received: () => string) => void;

export interface RawClient {
  /**
   * Connects, lets `drive` write, and resolves once the server closes the connection, or at
   * `deadlineMs` at the latest (then `closedByServer` is false).
   */
  exchange(drive: Driver, deadlineMs?: number): Promise<RawResponse>;
  /** Sends `request` in one write. */
  send(request: string | Buffer, deadlineMs?: number): Promise<RawResponse>;
  /** Writes `piece` every `everyMs` until `times` writes or the socket closes. */
  drip(socket: Socket, piece: string, everyMs: number, times: number): void;
  /** Destroys every socket and clears every timer this client still has open. */
  close(): void;
}

export function rawClient(port: number): RawClient {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  const client: RawClient = {
    exchange(drive, deadlineMs = 5000) {
      return new Promise((resolve) => {
        const started = Date.now();
        const socket = connect(port, '127.0.0.1');
        sockets.add(socket);
        let received = '';
        let done = false;
        const finish = (closedByServer: boolean) => {
          if (done) return;
          done = true;
          clearTimeout(deadline);
          timers.delete(deadline);
          socket.destroy();
          sockets.delete(socket);
          resolve(parse(received, Date.now() - started, closedByServer));
        };
        const deadline = setTimeout(() => {
          finish(false);
        }, deadlineMs);
        timers.add(deadline);
        socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
        socket.on('close', () => {
          finish(true);
        });
        socket.on('error', () => {
          // A reset after the answer: what arrived is kept, and 'close' follows.
        });
        socket.once('connect', () => {
          drive(socket, () => received);
        });
      });
    },

    send(request, deadlineMs) {
      return client.exchange((socket) => {
        socket.write(request);
      }, deadlineMs);
    },

    drip(socket, piece, everyMs, times) {
      let sent = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || sent >= times) {
          clearInterval(timer);
          timers.delete(timer);
          return;
        }
        socket.write(piece);
        sent++;
      }, everyMs);
      timers.add(timer);
    },

    close() {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
  return client;
}

/**
 * Asserts that the first response on the connection is the RFC 9457 problem `code` with its
 * status, as the service writes even for errors Node raises before a request exists.
 */
export function expectRawProblem(response: RawResponse, code: ProblemCode): Problem {
  const status = PROBLEM_CODES[code].status;
  expect(response.status, response.raw.slice(0, 500)).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(response.headers['cache-control']).toBe('no-store');
  const problem = JSON.parse(response.body) as Problem;
  expect(problem).toMatchObject({
    type: `/problems/${code}`,
    title: PROBLEM_CODES[code].title,
    status,
    code,
  });
  expect(problem.request_id).toBe(response.headers['x-request-id']);
  return problem;
}
