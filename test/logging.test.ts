import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/create-database.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';

/** The service's pino logger, writing into memory so that tests can read every line. */
describe('request logging', () => {
  let directory: string;
  let database: Database;
  let app: FastifyInstance;
  let lines: Record<string, unknown>[];

  beforeEach(async () => {
    directory = mkdtempSync(join(tmpdir(), 'todo-api-log-'));
    const config = loadConfig({ DATABASE_URL: `sqlite:${join(directory, 'todos.db')}` });
    database = createDatabase(config.databaseUrl);
    await migrateToLatest(database.db);
    lines = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) {
          if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
        }
        done();
      },
    });
    app = await buildApp({
      config,
      database,
      logStream: stream,
    });
  });
  afterEach(async () => {
    await app.close();
    await database.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it('logs each request under the client-supplied X-Request-Id', async () => {
    await app.inject({ method: 'GET', url: '/api/todos', headers: { 'x-request-id': 'trace-42' } });
    const tagged = lines.filter((line) => line.reqId === 'trace-42');
    expect(tagged.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
  });

  it('never writes a bearer token to the log', async () => {
    await app.inject({
      method: 'GET',
      url: '/api/todos',
      headers: { authorization: 'Bearer tdk_supersecretvalue' },
    });
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain('supersecretvalue');
  });

  it('logs the cause of a 500 while the client sees none of it', async () => {
    await database.db.schema.dropTable('todos').execute();
    const response = await app.inject({ method: 'GET', url: '/api/todos' });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toMatch(/SQLITE|no such table|select |at .*\.ts/i);
    const failure = lines.find((line) => line.msg === 'request failed');
    expect(JSON.stringify(failure)).toMatch(/no such table/);
  });
});
