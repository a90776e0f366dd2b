import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/create-database.js';
import type { WebhookEndpointWithSecret } from '../../src/webhooks/webhook.schemas.js';
import { spawnServer, type ServerProcess } from '../helpers/spawn-server.js';
import { createTestDatabase, type TestDatabase } from '../helpers/test-database.js';
import { startReceiver, verify, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * RELIABILITY.md §8.2: a worker killed mid-delivery loses no event. The service is killed with
 * SIGKILL while deliveries are in flight (the receiver answers slowly), restarted, and every
 * committed event must reach the receiver: delivered ids ⊇ committed events.
 */

const ROUNDS = 3;
const TODOS_PER_ROUND = 12;

describe('webhook delivery across a kill -9', () => {
  let testDatabase: TestDatabase | undefined;
  let receiver: WebhookReceiver | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await server?.exited;
    await receiver?.close();
    await testDatabase?.drop();
  });

  it('delivers every committed event at least once', async () => {
    testDatabase = await createTestDatabase('todo-api-webhook-kill-');
    receiver = await startReceiver(() => ({ status: 200, delayMs: 150 }));
    const env = {
      DATABASE_URL: testDatabase.url,
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_ALLOW_HTTP: 'true',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_SCALE: '0.0001',
      WEBHOOK_ENDPOINT_CONCURRENCY: '2',
    };
    server = await spawnServer(env);
    const created = await fetch(`${server.baseUrl}/api/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(created.status).toBe(201);
    const { secret } = (await created.json()) as WebhookEndpointWithSecret;

    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < TODOS_PER_ROUND; i++) {
        const response = await fetch(`${server.baseUrl}/api/todos`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ title: `round ${round} todo ${i}` }),
        });
        expect(response.status).toBe(201);
      }
      // Deliveries are in flight (each takes 150 ms, two at a time): kill now.
      server.child.kill('SIGKILL');
      await server.exited;
      server = await spawnServer(env);
    }

    const database = createDatabase(testDatabase.url);
    let committed: string[];
    try {
      committed = (await database.db.selectFrom('todo_events').select('id').execute()).map(
        (row) => row.id,
      );
    } finally {
      await database.close();
    }
    expect(committed).toHaveLength(ROUNDS * TODOS_PER_ROUND);

    const deadline = Date.now() + 30_000;
    const delivered = new Set<string>();
    while (Date.now() < deadline) {
      for (const request of receiver.received) {
        delivered.add(String(request.headers['webhook-id']));
      }
      if (committed.every((id) => delivered.has(id))) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(committed.filter((id) => !delivered.has(id))).toEqual([]);
    // Every delivery, first or repeated, is a valid signature.
    for (const request of receiver.received) expect(() => verify(secret, request)).not.toThrow();
    console.log(
      `webhook kill -9: ${committed.length} events, ${receiver.received.length} deliveries received (${receiver.received.length - delivered.size} repeats), lost 0`,
    );
  }, 90_000);
});
