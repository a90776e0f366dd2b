import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDatabase } from '../src/db/create-database.js';
import type { Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrator.js';
import { createTestDatabase, type TestDatabase } from './helpers/test-database.js';

/** The service's pino logger, writing into memory so that tests can read every line. */
describe('request logging', () => {
  let testDatabase: TestDatabase;
  let database: Database;
  let app: FastifyInstance;
  let lines: Record<string, unknown>[];

  beforeEach(async () => {
    testDatabase = await createTestDatabase('todo-api-log-');
    const config = loadConfig({ DATABASE_URL: testDatabase.url });
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
    await testDatabase.drop();
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
    // Renamed rather than dropped: on PostgreSQL, todo_labels' foreign key would block a drop.
    await database.db.schema.alterTable('todos').renameTo('todos_gone').execute();
    const response = await app.inject({ method: 'GET', url: '/api/todos' });
    expect(response.statusCode).toBe(500);
    expect(response.body).not.toMatch(/SQLITE|no such table|does not exist|select |at .*\.ts/i);
    const failure = lines.find((line) => line.msg === 'request failed');
    expect(JSON.stringify(failure)).toMatch(
      /no such table: todos|relation \\"todos\\" does not exist/,
    );
  });
});
