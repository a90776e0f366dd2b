import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRateLimiter, rateLimitHeaders, type RateLimiter } from './rate-limiter.js';

/** The Redis the test environment provides; tests that kill Redis start their own. */
const SHARED_REDIS_URL = 'redis://127.0.0.1:6379';

/** Far above the ~100 ms a failing Redis may cost, far below a hang. */
const FAIL_OPEN_BUDGET_MS = 500;

// Each test counts under its own prefix, so runs (and parallel runs) never share counters.
function uniquePrefix(): string {
  return `test:ratelimit:${randomUUID()}`;
}

function recordingLog() {
  const warnings: unknown[][] = [];
  const infos: unknown[][] = [];
  return {
    warnings,
    infos,
    warn: (...args: unknown[]) => {
      warnings.push(args);
    },
    info: (...args: unknown[]) => {
      infos.push(args);
    },
  };
}

const opened: RateLimiter[] = [];

function limiter(options: Parameters<typeof createRateLimiter>[0]): RateLimiter {
  const created = createRateLimiter(options);
  opened.push(created);
  return created;
}

afterEach(async () => {
  await Promise.all(opened.splice(0).map((each) => each.close()));
});

async function timedConsume(rateLimiter: RateLimiter, key: string) {
  const started = performance.now();
  const decision = await rateLimiter.consume(key);
  return { decision, ms: performance.now() - started };
}

/** Waits (at most 5 s) until the limiter answers from Redis: its store errors stop growing. */
async function untilShared(rateLimiter: RateLimiter): Promise<void> {
  const deadline = performance.now() + 5000;
  while (performance.now() < deadline) {
    const before = rateLimiter.storeErrors();
    await rateLimiter.consume('probe');
    if (rateLimiter.storeErrors() === before) return;
    await sleep(50);
  }
  throw new Error('the limiter never answered from Redis');
}

/** Spends `max` on `a` under a fresh key, then asks `b`: refused only if they share counters. */
async function sharesBudget(a: RateLimiter, b: RateLimiter, key: string, max: number) {
  for (let i = 0; i < max; i++) await a.consume(key);
  return !(await b.consume(key)).allowed;
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

function startRedis(port: number): ChildProcess {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  return spawn('redis-server', args, { cwd: tmpdir(), stdio: 'ignore' });
}

async function answersPing(port: number): Promise<boolean> {
  const socket = createConnection({ port, host: '127.0.0.1' });
  try {
    await once(socket, 'connect');
    socket.write('PING\r\n');
    const [reply] = (await Promise.race([once(socket, 'data'), sleep(500, [''])])) as unknown[];
    return String(reply).startsWith('+PONG');
  } catch {
    return false;
  } finally {
    socket.destroy();
  }
}

async function untilRedisAnswers(port: number): Promise<void> {
  const deadline = performance.now() + 5000;
  while (performance.now() < deadline) {
    if (await answersPing(port)) return;
    await sleep(25);
  }
  throw new Error(`redis-server on port ${port} did not start`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGKILL');
  await exited;
}

describe('createRateLimiter without Redis (in memory)', () => {
  it('allows exactly max requests per key, then refuses with a Retry-After', async () => {
    const memory = limiter({
      max: 3,
      windowSeconds: 2,
      log: recordingLog(),
      keyPrefix: uniquePrefix(),
    });

    const allowed = [];
    for (let i = 0; i < 3; i++) allowed.push(await memory.consume('owner:alice'));
    const refused = await memory.consume('owner:alice');

    expect(allowed.map((d) => d.allowed)).toEqual([true, true, true]);
    expect(allowed.map((d) => d.remaining)).toEqual([2, 1, 0]);
    for (const d of allowed) {
      expect(d).toMatchObject({ limit: 3, windowSeconds: 2 });
      expect(d.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(d.resetSeconds).toBeLessThanOrEqual(2);
    }
    expect(refused).toMatchObject({ allowed: false, limit: 3, remaining: 0, windowSeconds: 2 });
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.resetSeconds).toBeLessThanOrEqual(2);
    expect(rateLimitHeaders(refused)['Retry-After']).toBe(String(refused.resetSeconds));
    expect(memory.storeErrors()).toBe(0);
  });

  it('counts each key on its own', async () => {
    const memory = limiter({
      max: 2,
      windowSeconds: 60,
      log: recordingLog(),
      keyPrefix: uniquePrefix(),
    });

    await memory.consume('ip:127.0.0.1');
    await memory.consume('ip:127.0.0.1');

    expect((await memory.consume('ip:127.0.0.1')).allowed).toBe(false);
    expect(await memory.consume('ip:127.0.0.2')).toMatchObject({ allowed: true, remaining: 1 });
  });

  it('allows requests again once the window has passed', async () => {
    const memory = limiter({
      max: 1,
      windowSeconds: 1,
      log: recordingLog(),
      keyPrefix: uniquePrefix(),
    });
    await memory.consume('owner:bob');
    expect((await memory.consume('owner:bob')).allowed).toBe(false);

    await sleep(1100);

    expect(await memory.consume('owner:bob')).toMatchObject({ allowed: true, remaining: 0 });
  });

  it.each([0, -1, 1.5, Number.NaN])('rejects max = %s (the caller turns limiting off)', (max) => {
    expect(() => createRateLimiter({ max, windowSeconds: 60, log: recordingLog() })).toThrow(
      RangeError,
    );
  });
});

describe('createRateLimiter with Redis', () => {
  it('shares one budget between instances on the same Redis', async () => {
    const keyPrefix = uniquePrefix();
    const options = { max: 4, windowSeconds: 30, redisUrl: SHARED_REDIS_URL, keyPrefix };
    const a = limiter({ ...options, log: recordingLog() });
    const b = limiter({ ...options, log: recordingLog() });
    await untilShared(a);
    await untilShared(b);
    const errorsBefore = [a.storeErrors(), b.storeErrors()];

    const decisions = [];
    for (const instance of [a, b, a, b]) decisions.push(await instance.consume('owner:carol'));
    const refusedByA = await a.consume('owner:carol');
    const refusedByB = await b.consume('owner:carol');

    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
      [true, 3],
      [true, 2],
      [true, 1],
      [true, 0],
    ]);
    for (const refused of [refusedByA, refusedByB]) {
      expect(refused).toMatchObject({ allowed: false, limit: 4, remaining: 0, windowSeconds: 30 });
      expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
      expect(refused.resetSeconds).toBeLessThanOrEqual(30);
    }
    expect([a.storeErrors(), b.storeErrors()]).toEqual(errorsBefore);
  });

  it('fails open to the in-memory limit, fast, when nothing listens at the Redis URL', async () => {
    const log = recordingLog();
    const unreachable = limiter({
      max: 5,
      windowSeconds: 30,
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
      log,
      keyPrefix: uniquePrefix(),
    });

    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await timedConsume(unreachable, 'owner:dave'));

    for (const { ms } of answers) expect(ms).toBeLessThan(FAIL_OPEN_BUDGET_MS);
    expect(answers.map(({ decision }) => decision.allowed)).toEqual([
      ...Array<boolean>(5).fill(true),
      false, // the per-instance fallback still limits
    ]);
    expect(unreachable.storeErrors()).toBe(6);
    expect(log.warnings).toHaveLength(1); // throttled: one line, not one per request
  });
});

describe('createRateLimiter when its Redis dies and comes back', () => {
  const children: ChildProcess[] = [];

  afterAll(async () => {
    await Promise.all(children.map(kill));
  });

  it('answers fast from memory while Redis is down, then shares the limit within 5 s of its return', async () => {
    const port = await freePort();
    children.push(startRedis(port));
    await untilRedisAnswers(port);
    const log = recordingLog();
    const options = { max: 3, windowSeconds: 30, redisUrl: `redis://127.0.0.1:${port}`, log };
    const keyPrefix = uniquePrefix();
    const a = limiter({ ...options, keyPrefix });
    const b = limiter({ ...options, keyPrefix });
    await untilShared(a);
    await untilShared(b);
    expect(await sharesBudget(a, b, 'before-outage', 3)).toBe(true);
    const errorsBeforeOutage = [a.storeErrors(), b.storeErrors()];

    await Promise.all(children.map(kill));
    const duringOutage = [];
    for (let i = 0; i < 5; i++) {
      duringOutage.push(await timedConsume(a, `outage-${i}`), await timedConsume(b, `outage-${i}`));
    }

    for (const { decision, ms } of duringOutage) {
      expect(ms).toBeLessThan(FAIL_OPEN_BUDGET_MS);
      expect(decision.allowed).toBe(true);
    }
    expect(a.storeErrors()).toBeGreaterThan(errorsBeforeOutage[0] ?? 0);
    expect(b.storeErrors()).toBeGreaterThan(errorsBeforeOutage[1] ?? 0);

    children.push(startRedis(port));
    const restartedAt = performance.now();
    let shared = false;
    for (let attempt = 0; !shared && performance.now() - restartedAt < 5000; attempt++) {
      shared = await sharesBudget(a, b, `after-outage-${attempt}`, 3);
      if (!shared) await sleep(100);
    }

    expect(shared).toBe(true);
    expect(performance.now() - restartedAt).toBeLessThan(5000);
    expect(log.infos.length).toBeGreaterThan(0); // said that the store is back
  });
});
