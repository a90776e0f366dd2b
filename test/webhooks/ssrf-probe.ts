/**
 * Sends one attempt to each URL through the webhook sender and prints the outcomes as JSON:
 * run by test/webhooks/ssrf.test.ts inside a network namespace of its own (`unshare -n`),
 * where nothing but a down loopback exists, so a target the guard missed fails with the
 * network's error instead of the guard's.
 *
 * Usage: node --import tsx test/webhooks/ssrf-probe.ts '<json {"policy":…,"urls":[…]}>'
 */
import { createWebhookSender } from '../../src/webhooks/webhook-sender.js';
import type { TargetPolicy } from '../../src/webhooks/target-guard.js';

const { policy, urls } = JSON.parse(process.argv[2] ?? '{}') as {
  policy: TargetPolicy;
  urls: string[];
};
const sender = createWebhookSender(policy, 2000);
const outcomes: Record<string, string> = {};
for (const url of urls) {
  const outcome = await sender.send(url, {}, '{}');
  outcomes[url] = outcome.error ?? `status ${String(outcome.statusCode)}`;
}
await sender.close();
process.stdout.write(JSON.stringify(outcomes));
