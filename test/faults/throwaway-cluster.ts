/**
 * A PostgreSQL cluster that belongs to one test file: `initdb` into a temporary folder on a real
 * disk, a postmaster on a free loopback port, and nothing shared with the machine's own server.
 * Fault tests stop, crash and restart it at will; `destroy()` stops it and deletes the folder.
 *
 * PostgreSQL refuses to run as root, so when the tests run as root every binary is started as
 * the `postgres` user through `runuser`. Binaries come from `PG_BIN_DIR`, else from the newest
 * `/usr/lib/postgresql/<version>/bin` (Debian keeps them off PATH).
 */
import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { makeDiskTempDir } from '../helpers/disk-temp-dir.js';
import { freePort } from '../helpers/spawn-server.js';

const run = promisify(execFile);

/** How a cluster is stopped: `fast` disconnects clients cleanly, `immediate` is a crash. */
export type StopMode = 'smart' | 'fast' | 'immediate';

const COMMAND_TIMEOUT_MS = 30_000;
const BINARIES = ['initdb', 'pg_ctl', 'postgres'] as const;

function binDirectory(): string | undefined {
  const configured = process.env.PG_BIN_DIR;
  if (configured !== undefined && configured !== '') return configured;
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  return versions.map((version) => join(base, version, 'bin')).find((dir) => existsSync(dir));
}

interface Account {
  readonly uid: number;
  readonly gid: number;
}

function postgresAccount(): Account | undefined {
  let passwd: string;
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return undefined;
  }
  const fields = passwd
    .split('\n')
    .map((line) => line.split(':'))
    .find((entry) => entry[0] === 'postgres');
  if (fields === undefined) return undefined;
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

const isRoot = () => process.getuid?.() === 0;

/**
 * Why no throwaway cluster can be made here, or `undefined` when one can. Tests skip with this
 * reason instead of failing on a machine without PostgreSQL's server binaries.
 */
export function clusterUnavailableReason(): string | undefined {
  if (process.platform !== 'linux') return `throwaway clusters need Linux (${process.platform})`;
  const bin = binDirectory();
  if (bin === undefined) return 'no PostgreSQL binaries (set PG_BIN_DIR)';
  const missing = BINARIES.filter((name) => !existsSync(join(bin, name)));
  if (missing.length > 0) return `${bin} lacks ${missing.join(', ')}`;
  if (isRoot()) {
    if (postgresAccount() === undefined) return 'running as root and no postgres user exists';
    if (spawnSync('runuser', ['--help'], { stdio: 'ignore' }).error !== undefined) {
      return 'running as root and runuser is missing';
    }
  }
  return undefined;
}

/**
 * Why a suite that brings its own cluster does not run here, or `undefined`. Such a suite does
 * not depend on the vitest project's database, so it runs once, in the SQLite project.
 */
export function ownClusterSkipReason(): string | undefined {
  if (process.env.TEST_DIALECT === 'postgres') {
    return 'it brings its own cluster and runs once, in the sqlite project';
  }
  return clusterUnavailableReason();
}

export interface ThrowawayCluster {
  readonly port: number;
  /** The temporary folder: data directory, socket and server log. */
  readonly directory: string;
  /** File system type of `directory` (never tmpfs). */
  readonly fileSystem: string;
  /** A `DATABASE_URL` for `database` on this cluster. */
  url(database?: string): string;
  /** Whether a postmaster is running, as far as this helper started and stopped it. */
  readonly running: boolean;
  /** Starts the postmaster; resolves once it accepts connections (pg_ctl -w). */
  start(): Promise<void>;
  /** Stops the postmaster; `immediate` kills it without a shutdown checkpoint (crash). */
  stop(mode?: StopMode): Promise<void>;
  /** `stop(mode)` then `start()`. */
  restart(mode?: StopMode): Promise<void>;
  /** Runs one statement on `database` over a connection of its own. */
  query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
    database?: string,
  ): Promise<Row[]>;
  /** `CREATE DATABASE name`. */
  createDatabase(name: string): Promise<void>;
  /** The server log so far (for failure messages). */
  log(): string;
  /** Stops the postmaster however it can and deletes the folder. Safe to call twice. */
  destroy(): Promise<void>;
}

const live = new Set<{ readonly dataDir: string; readonly directory: string }>();
let exitHookInstalled = false;

/** Last resort when a test process exits without its afterAll: no cluster outlives it. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const cluster of live) {
      killPostmaster(cluster.dataDir);
      rmSync(cluster.directory, { recursive: true, force: true });
    }
  });
}

/** SIGKILLs the postmaster recorded in `postmaster.pid` (a process this helper started). */
function killPostmaster(dataDir: string): void {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 1) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/**
 * `initdb` a new cluster in a fresh folder and start it on a free port. The caller must
 * `destroy()` it (in `afterAll`).
 */
export async function createThrowawayCluster(prefix = 'todo-api-pg-'): Promise<ThrowawayCluster> {
  const reason = clusterUnavailableReason();
  if (reason !== undefined) throw new Error(`no throwaway cluster: ${reason}`);
  const bin = binDirectory() ?? '';
  const temp = makeDiskTempDir(prefix);
  const directory = temp.path;
  const dataDir = join(directory, 'data');
  const logFile = join(directory, 'postgres.log');
  const account = isRoot() ? postgresAccount() : undefined;
  if (account !== undefined) chownSync(directory, account.uid, account.gid);
  const entry = { dataDir, directory };
  live.add(entry);
  installExitHook();

  const exec = async (binary: string, args: readonly string[]): Promise<string> => {
    const path = join(bin, binary);
    const [file, argv] =
      account === undefined ? [path, args] : ['runuser', ['-u', 'postgres', '--', path, ...args]];
    try {
      const { stdout } = await run(file, argv, {
        timeout: COMMAND_TIMEOUT_MS,
        env: { ...process.env, LC_ALL: 'C' },
      });
      return stdout;
    } catch (error) {
      const { stderr } = error as { stderr?: string };
      throw new Error(`${binary} ${args.join(' ')} failed: ${stderr ?? String(error)}`, {
        cause: error,
      });
    }
  };

  const port = await freePort();
  let running = false;
  // fsync, synchronous_commit and full_page_writes keep their defaults (on): the durability
  // tests must run against what a production cluster promises. --no-sync only skips initdb's
  // own final flush of the template files, which no test here depends on.
  await exec('initdb', [
    '-A',
    'trust',
    '-U',
    'postgres',
    '-D',
    dataDir,
    '--encoding=UTF8',
    '--locale=C',
    '--no-sync',
  ]);

  const cluster: ThrowawayCluster = {
    port,
    directory,
    fileSystem: temp.fileSystem,
    get running() {
      return running;
    },
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    async start() {
      // -l: without a log file the postmaster would inherit our stdout and pg_ctl never returns.
      await exec('pg_ctl', [
        '-D',
        dataDir,
        '-l',
        logFile,
        '-o',
        `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1`,
        '-w',
        '-t',
        '30',
        'start',
      ]);
      running = true;
    },
    async stop(mode = 'fast') {
      await exec('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop']);
      running = false;
    },
    async restart(mode = 'fast') {
      await cluster.stop(mode);
      await cluster.start();
    },
    async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
      text: string,
      values: unknown[] = [],
      database = 'postgres',
    ) {
      const client = new pg.Client({
        connectionString: cluster.url(database),
        connectionTimeoutMillis: 5000,
      });
      // A connection error must reject the query, not crash the test process.
      client.on('error', () => undefined);
      await client.connect();
      try {
        return (await client.query<Row>(text, values)).rows;
      } finally {
        await client.end().catch(() => undefined);
      }
    },
    async createDatabase(name) {
      await cluster.query(`create database ${pg.escapeIdentifier(name)}`);
    },
    log() {
      try {
        return readFileSync(logFile, 'utf8');
      } catch {
        return '';
      }
    },
    async destroy() {
      if (!live.has(entry)) return;
      if (existsSync(join(dataDir, 'postmaster.pid'))) {
        await cluster.stop('immediate').catch(() => {
          killPostmaster(dataDir);
        });
      }
      running = false;
      live.delete(entry);
      rmSync(directory, { recursive: true, force: true });
    },
  };

  try {
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
