/**
 * Child processes of the benchmark (the service, the ceiling server, the data-layer run), CPU
 * pinning and the sampling of a child's memory and CPU time from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { START_NODE_ARGS } from '../test/helpers/start-command.js';

export const ROOT = fileURLToPath(new URL('../', import.meta.url));

/** Core of the load generator (this process) and core of the server under test. */
export const LOADGEN_CORE = 0;
export const SERVER_CORE = 1;

export interface Pinning {
  readonly used: boolean;
  readonly detail: string;
}

/**
 * Pins every thread of this process to the load generator's core, when `taskset` works and
 * there are at least two cores. Threads and processes started later inherit the mask; servers
 * are started under `taskset -c 1`.
 */
export function pinSelf(wanted: boolean): Pinning {
  if (!wanted) return { used: false, detail: 'disabled (--no-pin)' };
  if (cpus().length < 2) return { used: false, detail: 'fewer than 2 cores' };
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(LOADGEN_CORE), String(process.pid)], {
      stdio: 'ignore',
    });
    execFileSync('taskset', ['-c', String(SERVER_CORE), 'true'], { stdio: 'ignore' });
    return {
      used: true,
      detail: `load generator on core ${LOADGEN_CORE}, server on core ${SERVER_CORE} (taskset)`,
    };
  } catch (error) {
    return { used: false, detail: `taskset unavailable: ${(error as Error).message}` };
  }
}

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface ServerChild {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly baseUrl: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * The service as `npm start` runs it: compiled into `dist/`, on plain Node with the options of
 * the start script. (Through tsx it would also carry tsx's loader thread: about 40 MB more
 * resident memory, measured.)
 */
export const SERVICE_SCRIPT = START_NODE_ARGS.at(-1) as string;
export const SERVICE_NODE_ARGS = START_NODE_ARGS.slice(0, -1);

/**
 * The command that runs `node <script>`: through tsx when it is TypeScript, after the given
 * `--import`s, and under `taskset -c 1` when pinning.
 */
function nodeCommand(options: {
  readonly script: string;
  readonly pin: boolean;
  readonly nodeArgs?: readonly string[];
  readonly imports?: readonly string[];
}): [string, string[]] {
  const nodeArgs = [
    ...(options.nodeArgs ?? []),
    ...(options.script.endsWith('.ts') ? ['--import', 'tsx'] : []),
    ...(options.imports ?? []).flatMap((module) => ['--import', module]),
    options.script,
  ];
  return options.pin
    ? ['taskset', ['-c', String(SERVER_CORE), process.execPath, ...nodeArgs]]
    : [process.execPath, nodeArgs];
}

/**
 * Starts `node <script>` (through tsx when it is TypeScript; under `taskset -c 1` when pinning)
 * and waits until `readyPath` answers 200.
 */
export async function startNodeServer(options: {
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
  readonly pin: boolean;
  readonly readyPath: string;
  readonly timeoutMs?: number;
  /** Extra options for node, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
  /** Modules to preload after tsx (so they may be TypeScript), e.g. `./soak/gc-probe.ts`. */
  readonly imports?: readonly string[];
  /** Open an IPC channel to the child (`child.send`, `process.on('message')` in the child). */
  readonly ipc?: boolean;
}): Promise<ServerChild> {
  const port = await freePort();
  // taskset execs node in its own place, so the IPC descriptor reaches node unchanged.
  const [command, args] = nodeCommand(options);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...options.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const state = { exited: false };
  const exited = new Promise<void>((resolve) => {
    child.on('exit', () => {
      state.exited = true;
      resolve();
    });
  });

  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    if (state.exited) throw new Error(`${options.script} exited during startup:\n${output}`);
    try {
      const response = await fetch(`${baseUrl}${options.readyPath}`);
      await response.arrayBuffer();
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.script} did not become ready:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error('child has no pid');
  return {
    child,
    pid,
    baseUrl,
    output: () => output,
    async stop() {
      if (!state.exited) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Runs `node <script>` (see `nodeCommand`) to its end and returns what it printed on stdout;
 * throws with its stderr when it fails.
 */
export async function runNodeScript(options: {
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
  readonly pin: boolean;
  readonly nodeArgs?: readonly string[];
}): Promise<string> {
  const [command, args] = nodeCommand(options);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-20_000)));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`${options.script} exited with ${code}:\n${stderr}`);
  return stdout;
}

/** Resident set size of `pid` in bytes (VmRSS), or undefined once it is gone. */
export function rssOf(pid: number): number | undefined {
  return statusField(pid, 'VmRSS');
}

/** Peak resident set size of `pid` since it started (VmHWM), in bytes. */
export function peakRssOf(pid: number): number | undefined {
  return statusField(pid, 'VmHWM');
}

function statusField(pid: number, field: string): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    return match?.[1] === undefined ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

const CLOCK_TICKS = 100;

/** User + system CPU seconds `pid` has used, from /proc/<pid>/stat. */
export function cpuSecondsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const user = Number(fields[11]);
    const system = Number(fields[12]);
    return (user + system) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** CPU seconds of every process in `pids` together (those gone count 0). */
export function cpuSecondsOfAll(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + (cpuSecondsOf(pid) ?? 0), 0);
}

/**
 * CPU seconds of every PostgreSQL process on the machine (`comm` = `postgres`: the postmaster,
 * its backends and workers), by pid. The server is a shared system service: other clients'
 * queries count here too.
 */
export function postgresCpuSeconds(): Map<number, number> {
  const seconds = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return seconds;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const open = stat.indexOf('(');
      const close = stat.lastIndexOf(')');
      if (stat.slice(open + 1, close) !== 'postgres') continue;
      const fields = stat.slice(close + 2).split(' ');
      seconds.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS);
    } catch {
      // gone meanwhile
    }
  }
  return seconds;
}

/** PostgreSQL CPU seconds used since `before` (processes that exited meanwhile are lost). */
function postgresCpuSince(before: ReadonlyMap<number, number>): number {
  let total = 0;
  for (const [pid, seconds] of postgresCpuSeconds()) total += seconds - (before.get(pid) ?? 0);
  return total;
}

/** Samples the RSS of some children every `intervalMs` until stopped; reports the largest. */
export function startRssSampler(pids: readonly number[], intervalMs = 200) {
  const largest = () => Math.max(0, ...pids.map((pid) => rssOf(pid) ?? 0));
  let peak = largest();
  const timer = setInterval(() => {
    peak = Math.max(peak, largest());
  }, intervalMs);
  return {
    stop(): number {
      clearInterval(timer);
      return Math.max(peak, largest());
    },
  };
}

/** Busy CPU seconds of the whole machine (all cores), and steal time, from /proc/stat. */
export function machineCpuSeconds(): { busy: number; steal: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
    const busy = (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0);
    return { busy: busy / CLOCK_TICKS, steal: (steal ?? 0) / CLOCK_TICKS };
  } catch {
    return undefined;
  }
}

export interface CpuShares {
  /** Cores used by other processes (neither ours nor, when measured, PostgreSQL's). */
  readonly foreign: number;
  /** CPU steal time (the hypervisor running something else) per second. */
  readonly steal: number;
  /** Cores used by PostgreSQL's processes; NaN when not measured. */
  readonly database: number;
}

/**
 * Measures how much CPU everything but this process and the servers `pids` uses: other work on
 * the machine (a test run, a compiler) takes cores from the benchmark and skews its figures.
 * With `database`, PostgreSQL's processes are counted apart from the others.
 */
export function startForeignCpuMeter(pids: readonly number[], database = false) {
  const machine = machineCpuSeconds();
  const servers = cpuSecondsOfAll(pids);
  const postgres = database ? postgresCpuSeconds() : undefined;
  const self = process.cpuUsage();
  const started = performance.now();
  return {
    /** Average cores used since the start. */
    read(): CpuShares {
      const wall = (performance.now() - started) / 1000;
      const now = machineCpuSeconds();
      if (!machine || !now || wall <= 0) {
        return { foreign: Number.NaN, steal: Number.NaN, database: Number.NaN };
      }
      const own = process.cpuUsage(self);
      const ours = cpuSecondsOfAll(pids) - servers + (own.user + own.system) / 1e6;
      const db = postgres ? postgresCpuSince(postgres) : 0;
      return {
        foreign: Math.max(0, (now.busy - machine.busy - ours - db) / wall),
        steal: (now.steal - machine.steal) / wall,
        database: postgres ? db / wall : Number.NaN,
      };
    },
  };
}

/**
 * Waits, up to `maxSeconds`, until other processes (PostgreSQL's included, when `database`)
 * use less than `threshold` cores over one second. Returns the cores they used in the last
 * second measured.
 */
export async function waitForIdle(
  pids: readonly number[],
  maxSeconds: number,
  threshold: number,
  log: (line: string) => void,
  database = false,
): Promise<number> {
  const deadline = performance.now() + maxSeconds * 1000;
  let logged = false;
  for (;;) {
    const meter = startForeignCpuMeter(pids, database);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const shares = meter.read();
    const foreign = shares.foreign + (database ? shares.database : 0);
    if (!(foreign >= threshold)) return foreign;
    if (performance.now() >= deadline) {
      log(`    other processes still use ${foreign.toFixed(2)} cores; measuring anyway`);
      return foreign;
    }
    if (!logged) {
      log(`    other processes use ${foreign.toFixed(2)} cores; waiting up to ${maxSeconds} s…`);
      logged = true;
    }
  }
}

/**
 * Waits (up to `maxSeconds`) until the server `pid` has been idle for 300 ms: requests still
 * queued when a load run ends finish before the benchmark touches the database itself.
 */
export async function waitForServerIdle(pid: number, maxSeconds = 10): Promise<void> {
  const deadline = performance.now() + maxSeconds * 1000;
  while (performance.now() < deadline) {
    const before = cpuSecondsOf(pid);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = cpuSecondsOf(pid);
    if (before === undefined || after === undefined || after - before < 0.03) return;
  }
}
