import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../src/db/create-database.js';
import { spawnServer, type ServerProcess } from './helpers/spawn-server.js';
import { START_NODE_ARGS } from './helpers/start-command.js';
import {
  TEST_DIALECT,
  createTestDatabase,
  tableNames,
  type TestDatabase,
} from './helpers/test-database.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

const children: ServerProcess[] = [];
const databases: TestDatabase[] = [];
const sockets: Socket[] = [];
const servers: Server[] = [];

async function testDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase('todo-api-lifecycle-');
  databases.push(database);
  return database;
}

/** The server never opened the database: no SQLite file, or no table in the schema. */
async function expectUntouched(database: TestDatabase): Promise<void> {
  if (database.directory !== undefined) {
    expect(existsSync(join(database.directory, 'todos.db'))).toBe(false);
    return;
  }
  const opened = createDatabase(database.url);
  try {
    expect(await tableNames(opened.db)).toEqual([]);
  } finally {
    await opened.close();
  }
}

async function start(env: Readonly<Record<string, string>>): Promise<ServerProcess> {
  const server = await spawnServer(env);
  children.push(server);
  return server;
}

/** Rejects when `promise` has not settled within `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what} did not happen within ${ms} ms`));
    }, ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the server like `npm start` for a configuration it should refuse; kills it after 15 s. */
async function runToExit(env: Readonly<Record<string, string>>): Promise<Exit> {
  const child = spawn(process.execPath, START_NODE_ARGS, {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  try {
    const [code] = (await once(child, 'exit')) as [number | null];
    return { code, stdout, stderr };
  } finally {
    clearTimeout(killer);
  }
}

/** Resolves once nothing accepts connections on `port` any more (polls for at most 3 s). */
async function waitUntilRefused(port: number): Promise<void> {
  const deadline = Date.now() + 3000;
  while (Date.now() < deadline) {
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(port, '127.0.0.1');
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', () => {
        resolve(true);
      });
    });
    if (refused) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`port ${port} still accepts connections`);
}

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) server.close();
  for (const child of children.splice(0)) {
    if (child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill('SIGKILL');
      await within(child.exited, 5000, 'killing the server');
    }
  }
  for (const database of databases.splice(0)) await database.drop();
});

describe('graceful shutdown', () => {
  it('finishes a request in flight at SIGTERM, exits 0 and checkpoints the WAL', async () => {
    const database = await testDatabase();
    // SQLite only: the WAL file beside the database, which a clean stop folds back.
    const wal =
      database.directory === undefined ? undefined : join(database.directory, 'todos.db-wal');
    const env = { DATABASE_URL: database.url };
    const server = await start(env);
    const port = Number(new URL(server.baseUrl).port);

    const before = await fetch(`${server.baseUrl}/api/todos`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'before' }),
    });
    expect(before.status).toBe(201);
    if (wal !== undefined) expect(statSync(wal).size).toBeGreaterThan(0);

    // A request whose body is only half sent when the signal arrives.
    const body = JSON.stringify({ title: 'in flight' });
    const socket = connect(port, '127.0.0.1');
    sockets.push(socket);
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', () => {
      // asserted through `received` below
    });
    const closed = once(socket, 'close');
    await within(once(socket, 'connect'), 2000, 'connecting');
    socket.write(
      'POST /api/todos HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 8)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));

    const signalledAt = Date.now();
    server.child.kill('SIGTERM');
    // Shutdown has begun: the listener is closed while our request is still open.
    await waitUntilRefused(port);
    expect(server.child.exitCode).toBeNull();

    socket.write(body.slice(8));
    await within(closed, 5000, 'the in-flight response');
    expect(received).toMatch(/^HTTP\/1\.1 201 /);
    expect(received).toMatch(/\r\nconnection: close\r\n/i);
    expect(received).toContain('"title":"in flight"');

    const code = await within(server.exited, 10_000 - (Date.now() - signalledAt), 'exiting');
    expect(code).toBe(0);
    expect(Date.now() - signalledAt).toBeLessThan(10_000);
    if (wal !== undefined) expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);

    // Both acknowledged writes survive a restart.
    const restarted = await start(env);
    const list = await fetch(`${restarted.baseUrl}/api/todos`);
    const titles = ((await list.json()) as { title: string }[]).map((todo) => todo.title);
    expect(titles.sort()).toEqual(['before', 'in flight']);
    expect(await within(restarted.stop(), 10_000, 'stopping')).toBe(0);
  }, 60_000);

  it('exits 0 promptly on SIGINT when idle', async () => {
    const database = await testDatabase();
    const server = await start({ DATABASE_URL: database.url });
    const stoppedAt = Date.now();
    expect(await within(server.stop('SIGINT'), 10_000, 'exiting')).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
  }, 30_000);
});

describe('startup', () => {
  it('refuses PORT=abc with exit code 1 and one line naming PORT', async () => {
    const database = await testDatabase();
    const result = await runToExit({ PORT: 'abc', DATABASE_URL: database.url });
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/\bPORT\b/);
    expect(lines[0]).toContain('abc');
    expect(result.stdout).toBe('');
    await expectUntouched(database);
  }, 30_000);

  it('requires a token on HOST=0.0.0.0 by default, while health stays public', async () => {
    const database = await testDatabase();
    const server = await start({ HOST: '0.0.0.0', DATABASE_URL: database.url });
    expect((await fetch(`${server.baseUrl}/readyz`)).status).toBe(200);
    const response = await fetch(`${server.baseUrl}/api/todos`);
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="todo-api"$/);
    expect(((await response.json()) as { code: string }).code).toBe('unauthenticated');
  }, 30_000);

  it('refuses an unknown AUTH_MODE', async () => {
    const database = await testDatabase();
    const result = await runToExit({ AUTH_MODE: 'none', DATABASE_URL: database.url });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/\bAUTH_MODE\b/);
  }, 30_000);

  it('starts on HOST=0.0.0.0 with AUTH_MODE=anonymous and logs a warning', async () => {
    const database = await testDatabase();
    const server = await start({
      HOST: '0.0.0.0',
      AUTH_MODE: 'anonymous',
      DATABASE_URL: database.url,
    });
    const response = await fetch(`${server.baseUrl}/readyz`);
    expect(response.status).toBe(200);
    const warning = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .find((entry) => entry.msg.includes('AUTH_MODE=anonymous'));
    expect(warning?.level).toBe(40);
  }, 30_000);

  it.runIf(TEST_DIALECT === 'sqlite')(
    'creates the SQLite file and its directories on first start',
    async () => {
      const directory = (await testDatabase()).directory ?? '';
      const databasePath = join(directory, 'nested', 'deeper', 'todos.db');
      expect(existsSync(join(directory, 'nested'))).toBe(false);
      const server = await start({ DATABASE_URL: `sqlite:${databasePath}` });
      expect(existsSync(databasePath)).toBe(true);
      const created = await fetch(`${server.baseUrl}/api/todos`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'first' }),
      });
      expect(created.status).toBe(201);
      expect(await within(server.stop(), 10_000, 'stopping')).toBe(0);
      expect(statSync(databasePath).size).toBeGreaterThan(0);
    },
    30_000,
  );

  it('exits 1 when the port is already taken', async () => {
    const database = await testDatabase();
    const blocker = createServer();
    servers.push(blocker);
    blocker.listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const port = (blocker.address() as AddressInfo).port;
    const result = await runToExit({
      PORT: String(port),
      DATABASE_URL: database.url,
    });
    expect(result.code).toBe(1);
    expect(result.stdout + result.stderr).toMatch(/EADDRINUSE|could not start listening/);
  }, 30_000);
});
