/**
 * Child processes of the benchmark (the service and the ceiling server), CPU pinning and the
 * sampling of a child's memory and CPU time from /proc.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

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
 * Starts `node --import tsx <script>` (under `taskset -c 1` when pinning) and waits until
 * `readyPath` answers 200.
 */
export async function startNodeServer(options: {
  readonly script: string;
  readonly env: Readonly<Record<string, string>>;
  readonly pin: boolean;
  readonly readyPath: string;
  readonly timeoutMs?: number;
  /** Extra options for node, e.g. `--cpu-prof`. */
  readonly nodeArgs?: readonly string[];
}): Promise<ServerChild> {
  const port = await freePort();
  const nodeArgs = [...(options.nodeArgs ?? []), '--import', 'tsx', options.script];
  const [command, args] = options.pin
    ? ['taskset', ['-c', String(SERVER_CORE), process.execPath, ...nodeArgs]]
    : [process.execPath, nodeArgs];
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { ...process.env, ...options.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
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

/** Samples a child's RSS every `intervalMs` until stopped; reports the peak. */
export function startRssSampler(pid: number, intervalMs = 200) {
  let peak = rssOf(pid) ?? 0;
  const timer = setInterval(() => {
    const rss = rssOf(pid);
    if (rss !== undefined && rss > peak) peak = rss;
  }, intervalMs);
  return {
    stop(): number {
      clearInterval(timer);
      const rss = rssOf(pid);
      return Math.max(peak, rss ?? 0);
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

/**
 * Measures how much CPU everything but this process and the server `pid` uses: other work on
 * the machine (a test run, a compiler) takes cores from the benchmark and skews its figures.
 */
export function startForeignCpuMeter(pid: number) {
  const machine = machineCpuSeconds();
  const server = cpuSecondsOf(pid) ?? 0;
  const self = process.cpuUsage();
  const started = performance.now();
  return {
    /** Average cores used by other processes since the start, and steal time per second. */
    read(): { foreign: number; steal: number } {
      const wall = (performance.now() - started) / 1000;
      const now = machineCpuSeconds();
      if (!machine || !now || wall <= 0) return { foreign: Number.NaN, steal: Number.NaN };
      const own = process.cpuUsage(self);
      const ours = (cpuSecondsOf(pid) ?? server) - server + (own.user + own.system) / 1e6;
      return {
        foreign: Math.max(0, (now.busy - machine.busy - ours) / wall),
        steal: (now.steal - machine.steal) / wall,
      };
    },
  };
}

/**
 * Waits, up to `maxSeconds`, until other processes use less than `threshold` cores over one
 * second. Returns the cores they used in the last second measured.
 */
export async function waitForIdle(
  pid: number,
  maxSeconds: number,
  threshold: number,
  log: (line: string) => void,
): Promise<number> {
  const deadline = performance.now() + maxSeconds * 1000;
  let logged = false;
  for (;;) {
    const meter = startForeignCpuMeter(pid);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const { foreign } = meter.read();
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
