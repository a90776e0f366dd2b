/**
 * The ceiling: a bare `node:http` server that answers `GET /api/todos/<id>` with the same todo
 * JSON the service sends (taken from the service, in `TODO_JSON`), from memory: no framework,
 * no validation, no database. Whatever the service achieves is measured against this, on the
 * same core, with the same load generator settings.
 *
 * Started by the benchmark as `node --import tsx bench/ceiling-server.ts` with `PORT`.
 */
import { createServer } from 'node:http';

const template = JSON.parse(process.env.TODO_JSON ?? '{}') as Record<string, unknown>;
const port = Number(process.env.PORT ?? 0);
const PREFIX = '/api/todos/';

const server = createServer((request, response) => {
  const url = request.url ?? '/';
  if (request.method === 'GET' && url.startsWith(PREFIX)) {
    const id = url.slice(PREFIX.length);
    const body = JSON.stringify({
      ...template,
      id,
      url: `http://${request.headers.host ?? 'localhost'}${PREFIX}${id}`,
    });
    response.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      etag: '"1"',
      'cache-control': 'private, no-cache',
    });
    response.end(body);
    return;
  }
  if (url === '/healthz') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end('{"status":"ok"}');
    return;
  }
  response.writeHead(404);
  response.end();
});
server.keepAliveTimeout = 5000;
server.listen(port, '127.0.0.1');

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
