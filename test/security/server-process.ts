import { readFileSync } from 'node:fs';
import { spawnServer, type ServerProcess } from '../helpers/spawn-server.js';
import { createTestDatabase } from '../helpers/test-database.js';
import { SERVICE_ENV, withDefaults } from './defaults.js';

/** Longest a stop may take before the child is killed: the suite must never hang on it. */
const STOP_GRACE_MS = 5000;

/** The real service in a child process, on a free loopback port, over its own database. */
export interface ServerUnderAttack {
  readonly baseUrl: string;
  readonly port: number;
  readonly pid: number;
  /** Resident set size of the server process now, in MiB (from `/proc/<pid>/status`). */
  rssMiB(): number;
  /** Number of todos stored, asked over HTTP. */
  todoCount(): Promise<number>;
  /** SIGTERM, SIGKILL after a grace period; drops the database. */
  stop(): Promise<void>;
}

/** Resident set size of process `pid` in MiB, from `VmRSS` in `/proc/<pid>/status`. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) / 1024;
}

export async function startServer(
  env: Readonly<Record<string, string>> = {},
): Promise<ServerUnderAttack> {
  const database = await createTestDatabase('todo-api-security-');
  let server: ServerProcess;
  try {
    server = await spawnServer({
      DATABASE_URL: database.url,
      SHUTDOWN_TIMEOUT_MS: '2000',
      ...SERVICE_ENV,
      ...env,
    });
  } catch (error) {
    await database.drop();
    throw error;
  }
  const { child, baseUrl } = server;
  const pid = child.pid;
  if (pid === undefined) throw new Error('the server process has no pid');

  return {
    baseUrl,
    port: Number(new URL(baseUrl).port),
    pid,
    rssMiB: () => rssMiB(pid),
    async todoCount() {
      const response = await fetch(`${baseUrl}/api/todos?limit=1`, {
        headers: withDefaults({ prefer: 'count=exact' }),
      });
      if (!response.ok) throw new Error(`counting todos answered ${response.status}`);
      return Number(response.headers.get('x-total-count'));
    },
    async stop() {
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      try {
        await server.stop('SIGTERM');
      } finally {
        clearTimeout(killer);
        await database.drop();
      }
    },
  };
}
