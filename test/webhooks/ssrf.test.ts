import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TargetPolicy } from '../../src/webhooks/target-guard.js';
import { createWebhookSender } from '../../src/webhooks/webhook-sender.js';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * RELIABILITY.md §8.3 at connection time: every attempt goes through the guard, which refuses
 * non-public targets with its own error code (`EBLOCKEDTARGET`) before any packet leaves. The
 * corpus runs in a network namespace of its own where `unshare` works (as root), with a hosts
 * file that maps a name to a private address; elsewhere in this process (said in the output).
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STRICT: TargetPolicy = { allowLoopback: false, allowHttp: true, ports: [80, 443] };

const CORPUS = [
  'http://127.0.0.1/',
  'http://127.1/',
  'http://0x7f000001/',
  'http://2130706433/',
  'http://017700000001/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://[::ffff:7f00:1]/',
  'http://0.0.0.0/',
  'http://[::]/',
  'http://10.0.0.1/',
  'http://172.16.0.1/',
  'http://192.168.0.1/',
  'http://100.64.0.1/',
  'http://169.254.169.254/latest/meta-data/',
  'http://[fd00::1]/',
  'http://[fe80::1]/',
  'http://localhost/',
  'http://internal.test/',
  'http://user@93.184.215.14/',
  'file:///etc/passwd',
  'gopher://93.184.215.14/',
  'ftp://93.184.215.14/',
];

/** Runs the probe in a fresh network + mount namespace, with `internal.test` → 10.0.0.5. */
function probeInNamespace(urls: readonly string[]): Record<string, string> | undefined {
  if (spawnSync('unshare', ['-nm', 'true']).status !== 0) return undefined;
  const directory = mkdtempSync(join(tmpdir(), 'todo-api-ssrf-'));
  try {
    const hosts = join(directory, 'hosts');
    writeFileSync(hosts, '127.0.0.1 localhost\n::1 localhost\n10.0.0.5 internal.test\n');
    const script = `mount --bind ${hosts} /etc/hosts && exec "${process.execPath}" --import tsx test/webhooks/ssrf-probe.ts "$0"`;
    const output = execFileSync(
      'unshare',
      ['-nm', 'sh', '-c', script, JSON.stringify({ policy: STRICT, urls })],
      { cwd: ROOT, encoding: 'utf8', timeout: 30_000 },
    );
    return JSON.parse(output) as Record<string, string>;
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

describe('the SSRF guard at connection time', () => {
  it('refuses the whole corpus with its own error, inside a network namespace', async () => {
    let outcomes = probeInNamespace(CORPUS);
    if (outcomes === undefined) {
      console.log(
        'ssrf corpus: unshare unavailable here; ran in this process without internal.test',
      );
      const sender = createWebhookSender(STRICT, 2000);
      outcomes = {};
      for (const url of CORPUS.filter((u) => !u.includes('internal.test'))) {
        outcomes[url] = (await sender.send(url, {}, '{}')).error ?? 'delivered';
      }
      await sender.close();
    }
    for (const [url, outcome] of Object.entries(outcomes)) {
      expect(outcome, url).toMatch(/^EBLOCKEDTARGET: /);
    }
    expect(Object.keys(outcomes).length).toBeGreaterThanOrEqual(CORPUS.length - 1);
  }, 60_000);
});

describe('with WEBHOOK_ALLOW_LOOPBACK', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  it('delivers to loopback forms only; every other range stays refused', async () => {
    const port = new URL(receiver.url).port;
    // `localhost` is a name, so its port must be allowed like any other's.
    const policy = { ...STRICT, allowLoopback: true, ports: [80, 443, Number(port)] };
    const sender = createWebhookSender(policy, 2000);
    try {
      for (const host of ['127.0.0.1', '127.1', '0x7f000001', '2130706433', 'localhost']) {
        const outcome = await sender.send(`http://${host}:${port}/hook`, {}, '{}');
        expect(outcome.statusCode, `${host}: ${outcome.error ?? ''}`).toBe(204);
      }
      for (const url of CORPUS.filter((u) =>
        /10\.|172\.16|192\.168|100\.64|169\.254|fd00|fe80|0\.0\.0\.0|\[::\]/.test(u),
      )) {
        expect((await sender.send(url, {}, '{}')).error, url).toMatch(/^EBLOCKEDTARGET: /);
      }
    } finally {
      await sender.close();
    }
  });
});
