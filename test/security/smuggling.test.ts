import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../helpers/problem-assertions.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { SERVICE_ENV, defaultHeaderLines, withDefaults } from './defaults.js';
import { expectRawProblem, rawClient, type RawClient, type RawResponse } from './raw-http.js';
import { startServer, type ServerUnderAttack } from './server-process.js';

/**
 * RELIABILITY.md §5 row 18: a request id or Host that is not safe to reflect is replaced, never
 * echoed into a header; ambiguous framing (request smuggling shapes) is refused with 400 before
 * any request is processed, so a request hidden in the body never runs; a head over 16 KiB is 431.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** `src/http/request-id.ts` keeps ids of 1–128 of these characters. */
const SAFE_ID_CHARACTERS = 'abcXYZ019._:@/+=-';

/** A complete, valid request that must never run when it hides behind a malformed one. */
const SMUGGLED_JSON = '{"title":"smuggled"}';
const SMUGGLED =
  `POST /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}Content-Type: application/json\r\n` +
  `Content-Length: ${SMUGGLED_JSON.length}\r\n\r\n${SMUGGLED_JSON}`;

const BODY = '{"title":"front"}';
const HEAD = (headers: string) =>
  `POST /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}Content-Type: application/json\r\n${headers}\r\n`;
/** `body` as one chunk and the last chunk. */
const chunked = (body: string) => `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;

/** No header of the response head was injected by the request. */
function expectNoInjectedHeader(response: RawResponse): void {
  const head = response.raw.split('\r\n\r\n')[0] ?? '';
  expect(head).not.toMatch(/^x-injected/im);
  expect(response.headers['x-injected']).toBeUndefined();
}

describe('request ids that are not safe to echo (row 18, inject)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await buildTestApp({ env: SERVICE_ENV });
  });

  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['200 characters', 'a'.repeat(200)],
    ['300 bytes', 'a'.repeat(300)],
    ['129 characters', 'a'.repeat(129)],
    ['spaces', 'abc 123'],
    ['a quote', 'abc"123'],
    ['markup', '<script>alert(1)</script>'],
    ['a percent-encoded CRLF', 'abc%0d%0aX-Injected:%201'],
    ['a semicolon', 'abc;def'],
    ['a comma (as two joined ids)', 'abc,def'],
    ['a tab', 'abc\tdef'],
    ['non-ASCII letters', 'café-😀'],
    ['a lookup template', '${jndi:ldap://x.example/a}'],
    ['backslashes', '..\\..\\etc'],
    ['nothing', ''],
  ])('replaces an X-Request-Id with %s by a generated one', async (_label, given) => {
    for (const url of ['/api/todos', '/nowhere']) {
      const response = await t.inject({
        method: 'GET',
        url,
        headers: withDefaults({ 'x-request-id': given }),
      });
      const id = String(response.headers['x-request-id']);
      expect(id).not.toBe(given);
      expect(id).toMatch(UUID);
      if (url === '/nowhere') expect(expectProblem(response, 404, 'not-found').request_id).toBe(id);
      else expect(response.statusCode).toBe(200);
    }
  });

  it.each([
    ['128 safe characters', SAFE_ID_CHARACTERS.repeat(8).slice(0, 128)],
    ['every safe character', SAFE_ID_CHARACTERS],
    ['one character', 'a'],
  ])('echoes an X-Request-Id of %s unchanged (the accepted pattern)', async (_label, given) => {
    const response = await t.inject({
      method: 'GET',
      url: '/nowhere',
      headers: withDefaults({ 'x-request-id': given }),
    });
    expect(response.headers['x-request-id']).toBe(given);
    expect(expectProblem(response, 404, 'not-found').request_id).toBe(given);
  });
});

describe('header injection and request smuggling against the real server (row 18)', () => {
  let server: ServerUnderAttack;
  let raw: RawClient;

  beforeAll(async () => {
    server = await startServer();
    raw = rawClient(server.port);
  });

  afterAll(async () => {
    raw.close();
    await server.stop();
  });

  it.each([
    ['a bare CR', 'abc\rX-Injected: 1'],
    ['a bare LF', 'abc\nX-Injected: 1'],
    ['a NUL', 'abc\0X-Injected: 1'],
    ['an obs-fold continuation', 'abc\r\n X-Injected: 1'],
  ])(
    'answers an X-Request-Id with %s with 400 malformed-request and injects no header',
    async (_label, value) => {
      const response = await raw.send(
        Buffer.from(
          `GET /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}X-Request-Id: ${value}\r\n\r\n`,
          'latin1',
        ),
      );
      expectRawProblem(response, 'malformed-request');
      expect(response.headers['x-request-id']).toMatch(UUID);
      expectNoInjectedHeader(response);
    },
  );

  it.each([
    ['a percent-encoded CRLF', 'abc%0d%0aX-Injected:%201'],
    ['latin1 bytes', 'caf\xe9'],
    ['300 bytes', 'b'.repeat(300)],
  ])(
    'replaces an X-Request-Id with %s on the wire and injects no header',
    async (_label, value) => {
      const response = await raw.send(
        Buffer.from(
          `GET /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}X-Request-Id: ${value}\r\n` +
            'Connection: close\r\n\r\n',
          'latin1',
        ),
      );
      expect(response.status).toBe(200);
      expect(response.headers['x-request-id']).toMatch(UUID);
      expectNoInjectedHeader(response);
    },
  );

  it.each([
    ['a space', 'a b'],
    ['a quote', 'a"b'],
    ['markup', '<x>'],
    ['a latin1 letter', 'caf\xe9'],
    ['a broken IPv6 literal', '[::1'],
    ['a path', 'x/../y'],
    ['a tab', 'a\tb'],
    ['a percent-encoded CRLF', 'a%0d%0aX-Injected:%201'],
  ])('never reflects a Host with %s into Location or url', async (_label, host) => {
    const response = await raw.send(
      Buffer.from(
        `POST /api/todos HTTP/1.1\r\nHost: ${host}\r\n${defaultHeaderLines()}` +
          `Content-Type: application/json\r\nContent-Length: ${BODY.length}\r\n` +
          `Connection: close\r\n\r\n${BODY}`,
        'latin1',
      ),
    );
    expect(response.status, response.raw.slice(0, 300)).toBe(201);
    const location = response.headers.location ?? '';
    expect(location).not.toContain(host);
    expect(new URL(location).pathname).toMatch(/^\/api\/todos\/[0-9a-f-]{36}$/);
    expect((JSON.parse(response.body) as { url: string }).url).toBe(location);
    expectNoInjectedHeader(response);
  });

  it('processes both of two well-formed pipelined requests (the control for the cases below)', async () => {
    const before = await server.todoCount();
    const response = await raw.send(
      HEAD(`Content-Length: ${BODY.length}\r\n`) +
        BODY +
        SMUGGLED.replace('\r\n\r\n', '\r\nConnection: close\r\n\r\n'),
    );
    expect(response.status).toBe(201);
    expect(response.responses).toBe(2);
    expect(await server.todoCount()).toBe(before + 2);
  });

  it.each([
    [
      'a duplicate Content-Length',
      HEAD(`Content-Length: ${BODY.length}\r\nContent-Length: ${BODY.length}\r\n`) + BODY,
    ],
    [
      'two different Content-Lengths',
      HEAD(`Content-Length: ${BODY.length}\r\nContent-Length: 5\r\n`) + BODY,
    ],
    ['a Content-Length list', HEAD(`Content-Length: ${BODY.length}, ${BODY.length}\r\n`) + BODY],
    ['a signed Content-Length', HEAD(`Content-Length: +${BODY.length}\r\n`) + BODY],
    ['a negative Content-Length', HEAD('Content-Length: -1\r\n') + BODY],
    [
      'Content-Length with Transfer-Encoding (CL.TE)',
      HEAD('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n') + '0\r\n\r\n',
    ],
    [
      'Transfer-Encoding with Content-Length (TE.CL)',
      HEAD(`Transfer-Encoding: chunked\r\nContent-Length: ${BODY.length + 9}\r\n`) + chunked(BODY),
    ],
    [
      'Transfer-Encoding twice',
      HEAD('Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n') + chunked(BODY),
    ],
    ['an unknown Transfer-Encoding', HEAD('Transfer-Encoding: xchunked\r\n') + chunked(BODY)],
    ['chunked not last', HEAD('Transfer-Encoding: chunked, identity\r\n') + chunked(BODY)],
    ['a space before the colon', HEAD('Transfer-Encoding : chunked\r\n') + chunked(BODY)],
    ['an obs-fold header', HEAD(`X-Folded: a\r\n b\r\nContent-Length: ${BODY.length}\r\n`) + BODY],
    ['an obs-folded Transfer-Encoding', HEAD('Transfer-Encoding:\r\n chunked\r\n') + chunked(BODY)],
    [
      'a chunk size that is not hex',
      HEAD('Transfer-Encoding: chunked\r\n') + `zz\r\n${BODY}\r\n0\r\n\r\n`,
    ],
    [
      'a negative chunk size',
      HEAD('Transfer-Encoding: chunked\r\n') +
        `-${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`,
    ],
    [
      'a 0x chunk size',
      HEAD('Transfer-Encoding: chunked\r\n') +
        `0x${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`,
    ],
    [
      'an overflowing chunk size',
      HEAD('Transfer-Encoding: chunked\r\n') + `ffffffffffffffffffff\r\n${BODY}\r\n0\r\n\r\n`,
    ],
    [
      'a chunk longer than its size',
      HEAD('Transfer-Encoding: chunked\r\n') + `3\r\n${BODY}\r\n0\r\n\r\n`,
    ],
    [
      'a space after the chunk size',
      HEAD('Transfer-Encoding: chunked\r\n') +
        `${BODY.length.toString(16)} \r\n${BODY}\r\n0\r\n\r\n`,
    ],
    [
      'bare LF chunk lines',
      HEAD('Transfer-Encoding: chunked\r\n') + `${BODY.length.toString(16)}\n${BODY}\n0\n\n`,
    ],
  ])(
    'answers %s with 400 malformed-request, closes, and never runs the request hidden behind it',
    async (_label, request) => {
      const before = await server.todoCount();
      const response = await raw.send(request + SMUGGLED);
      expectRawProblem(response, 'malformed-request');
      expect(response.headers.connection).toBe('close');
      expect(response.closedByServer).toBe(true);
      expect(response.responses).toBe(1);
      expect(await server.todoCount()).toBe(before);
    },
  );

  it.each([
    ['one 17 KiB header', `X-Big: ${'a'.repeat(17 * 1024)}\r\n`],
    ['one 64 KiB header', `X-Big: ${'a'.repeat(64 * 1024)}\r\n`],
    // Node counts the bytes of names and values, not the ": " and CRLF around them.
    [
      '1,000 small headers (over 16 KiB of names and values together)',
      Array.from({ length: 1000 }, (_, i) => `X-H${i}: ${'a'.repeat(20)}\r\n`).join(''),
    ],
  ])('answers %s with 431 headers-too-large and closes', async (_label, headers) => {
    const before = await server.todoCount();
    const response = await raw.send(
      `GET /api/todos HTTP/1.1\r\nHost: x\r\n${defaultHeaderLines()}${headers}\r\n` + SMUGGLED,
    );
    expectRawProblem(response, 'headers-too-large');
    expect(response.headers.connection).toBe('close');
    expect(response.closedByServer).toBe(true);
    expect(response.responses).toBe(1);
    expect(await server.todoCount()).toBe(before);
  });

  it.each([
    ['no Host', `GET /api/todos HTTP/1.1\r\n${defaultHeaderLines()}\r\n`],
    [
      'two Host headers',
      `GET /api/todos HTTP/1.1\r\nHost: a\r\nHost: b\r\n${defaultHeaderLines()}\r\n`,
    ],
  ])(
    'answers an HTTP/1.1 request with %s with a 400 problem (RFC 9112 §3.2)',
    async (_label, head) => {
      const response = await raw.send(head);
      const problem = expectRawProblem(response, 'malformed-request');
      expect(problem.detail).toContain('Host');
    },
  );
});
