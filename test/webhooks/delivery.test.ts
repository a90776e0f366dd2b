import { afterEach, describe, expect, it } from 'vitest';
import type { TodoEvent } from '../../src/events/todo-event.schemas.js';
import type {
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from '../../src/webhooks/webhook.schemas.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import {
  startReceiver,
  verify,
  type Answer,
  type WebhookReceiver,
} from '../helpers/webhook-receiver.js';

/**
 * Issue 6 items 5 and 7: deliveries to a receiver on loopback, every one verified with the
 * Standard Webhooks reference library; retries, timeouts, 410, Retry-After, the retry schedule
 * (time-scaled), rotation, test events, the delivery log and redelivery.
 */

const FAST = {
  WEBHOOK_ALLOW_LOOPBACK: 'true',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_TIMEOUT_MS: '500',
  // The 24 h schedule in about 2 s.
  WEBHOOK_RETRY_SCALE: '0.00002',
};

const opened: { t: TestApp; receivers: WebhookReceiver[] }[] = [];
afterEach(async () => {
  for (const { t, receivers } of opened.splice(0)) {
    await t.close();
    for (const receiver of receivers) await receiver.close();
  }
});

async function setUp(answer?: Answer, env: Record<string, string> = {}) {
  const t = await buildTestApp({ env: { ...FAST, ...env } });
  const receiver = await startReceiver(answer);
  opened.push({ t, receivers: [receiver] });
  const created = await t.inject({
    method: 'POST',
    url: '/api/webhooks',
    payload: { url: receiver.url },
  });
  expect(created.statusCode, created.body).toBe(201);
  const endpoint = created.json<WebhookEndpointWithSecret>();
  const createTodo = async (title: string) =>
    (await t.inject({ method: 'POST', url: '/api/todos', payload: { title } })).json<{
      id: string;
    }>();
  const log = async () =>
    (
      await t.inject({ method: 'GET', url: `/api/webhooks/${endpoint.id}/deliveries?limit=100` })
    ).json<WebhookDelivery[]>();
  return { t, receiver, endpoint, createTodo, log };
}

/** Polls `check` until it passes or `timeoutMs` runs out. */
async function eventually<T>(check: () => Promise<T>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

describe('webhook deliveries', () => {
  it('deliver every event, signed as Standard Webhooks says', async () => {
    const { t, receiver, endpoint, createTodo } = await setUp();
    const todo = await createTodo('Hooked');
    await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/complete` });
    const received = await receiver.waitFor(3);
    const events = received.map((request) => verify(endpoint.secret, request) as TodoEvent);
    expect(events.map((event) => event.type).sort()).toEqual(
      ['todo.completed', 'todo.created', 'todo.status_changed'].sort(),
    );
    for (const [i, request] of received.entries()) {
      expect(request.headers['webhook-id']).toBe(events[i]?.id);
      expect(request.headers['content-type']).toBe('application/json');
      expect(Number(request.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    }
    expect(events.every((event) => event.data.todo.id === todo.id)).toBe(true);
  });

  it('refuses a replay whose timestamp was moved 6 minutes back (consumer contract)', async () => {
    const { receiver, endpoint, createTodo } = await setUp();
    await createTodo('Replayed');
    const [request] = await receiver.waitFor(1);
    if (!request) throw new Error('nothing received');
    const old = String(Number(request.headers['webhook-timestamp']) - 360);
    expect(() =>
      verify(endpoint.secret, {
        ...request,
        headers: { ...request.headers, 'webhook-timestamp': old },
      }),
    ).toThrow();
  });

  it('retries failures with the same webhook-id, each attempt signed anew, then delivers', async () => {
    const { receiver, endpoint, createTodo, log } = await setUp((index) => ({
      status: index < 2 ? 500 : 200,
    }));
    await createTodo('Flaky receiver');
    const received = await receiver.waitFor(3);
    const ids = new Set(received.map((request) => request.headers['webhook-id']));
    expect(ids.size).toBe(1);
    // Each attempt carries its own timestamp (whole seconds, so quick retries may share one).
    const stamps = received.map((request) => Number(request.headers['webhook-timestamp']));
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    for (const request of received) expect(() => verify(endpoint.secret, request)).not.toThrow();

    const [delivery] = await eventually(async () => {
      const entries = await log();
      expect(entries[0]?.status).toBe('delivered');
      return entries;
    });
    expect(delivery?.attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 200]);
  });

  it('counts a receiver that does not answer in time as a failure', async () => {
    const { receiver, createTodo, log } = await setUp((index) => ({
      status: 200,
      delayMs: index === 0 ? 2000 : 0,
    }));
    await createTodo('Slow receiver');
    await receiver.waitFor(2);
    const [delivery] = await eventually(async () => {
      const entries = await log();
      expect(entries[0]?.status).toBe('delivered');
      return entries;
    });
    expect(delivery?.attempts[0]?.status_code).toBeNull();
    expect(delivery?.attempts[0]?.error).toMatch(/abort|timeout/i);
    expect(delivery?.attempts[0]?.duration_ms).toBeLessThan(1500);
  });

  it('disables the endpoint when the receiver answers 410 Gone', async () => {
    const { t, receiver, endpoint, createTodo } = await setUp(() => ({ status: 410 }));
    await createTodo('Gone');
    await receiver.waitFor(1);
    const state = await eventually(async () => {
      const response = await t.inject({ method: 'GET', url: `/api/webhooks/${endpoint.id}` });
      const body = response.json<WebhookEndpoint>();
      expect(body.enabled).toBe(false);
      return body;
    });
    expect(state.disabled_reason).toMatch(/410/);
    await createTodo('Not sent');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(1);
  });

  it('waits as long as Retry-After says on 429 and 503', async () => {
    const { receiver, createTodo } = await setUp((index) => ({
      status: index === 0 ? 429 : index === 1 ? 503 : 200,
      ...(index < 2 ? { headers: { 'retry-after': '1' } } : {}),
    }));
    await createTodo('Busy receiver');
    const received = await receiver.waitFor(3, 10_000);
    const gaps = [1, 2].map((i) => (received[i]?.at ?? 0) - (received[i - 1]?.at ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(950);
  });

  it('gives up after the last attempt of the schedule (ten in all)', async () => {
    const { receiver, createTodo, log } = await setUp(() => ({ status: 500 }));
    await createTodo('Never accepted');
    await receiver.waitFor(10, 15_000);
    const [delivery] = await eventually(async () => {
      const entries = await log();
      expect(entries[0]?.status).toBe('failed');
      return entries;
    }, 15_000);
    expect(delivery?.attempts).toHaveLength(10);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(10);
  });

  it('signs with both secrets for a day after a rotation, each verifying on its own', async () => {
    const { t, receiver, endpoint, createTodo } = await setUp();
    const rotated = (
      await t.inject({ method: 'POST', url: `/api/webhooks/${endpoint.id}/rotate-secret` })
    ).json<WebhookEndpointWithSecret>();
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(rotated.previous_secret_until).not.toBeNull();
    await createTodo('After rotation');
    const [request] = await receiver.waitFor(1);
    if (!request) throw new Error('nothing received');
    expect(String(request.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => verify(rotated.secret, request)).not.toThrow();
    expect(() => verify(endpoint.secret, request)).not.toThrow();
    // The secret is never shown again.
    const fetched = await t.inject({ method: 'GET', url: `/api/webhooks/${endpoint.id}` });
    expect(fetched.body).not.toContain(rotated.secret);
  });

  it('sends a test event, logs it, and sends it again on request', async () => {
    const { t, receiver, endpoint, log } = await setUp();
    const queued = await t.inject({ method: 'POST', url: `/api/webhooks/${endpoint.id}/test` });
    expect(queued.statusCode, queued.body).toBe(202);
    const delivery = queued.json<WebhookDelivery>();
    const [first] = await receiver.waitFor(1);
    if (!first) throw new Error('nothing received');
    expect(verify(endpoint.secret, first)).toMatchObject({ type: 'webhook.test' });
    await eventually(async () => {
      expect((await log())[0]?.status).toBe('delivered');
    });

    const again = await t.inject({
      method: 'POST',
      url: `/api/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`,
    });
    expect(again.statusCode, again.body).toBe(202);
    const [, second] = await receiver.waitFor(2);
    expect(second?.headers['webhook-id']).toBe(first.headers['webhook-id']);
    expect(second?.body).toBe(first.body);
    const entries = await eventually(async () => {
      const all = await log();
      expect(all[0]?.attempts).toHaveLength(2);
      return all;
    });
    expect(entries[0]?.attempts.map((attempt) => attempt.attempt)).toEqual([1, 2]);
  });

  it('delivers only the event types an endpoint asked for', async () => {
    const { t, receiver, endpoint, createTodo } = await setUp();
    await t.inject({
      method: 'PATCH',
      url: `/api/webhooks/${endpoint.id}`,
      payload: { event_types: ['todo.completed'] },
    });
    const todo = await createTodo('Filtered');
    await t.inject({ method: 'POST', url: `/api/todos/${todo.id}/complete` });
    const [only] = await receiver.waitFor(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(only?.body ?? '{}')).toMatchObject({ type: 'todo.completed' });
  });

  it('never follows a redirect', async () => {
    const target = await startReceiver();
    const { receiver, createTodo, log } = await setUp(() => ({
      status: 302,
      headers: { location: target.url },
    }));
    opened.at(-1)?.receivers.push(target);
    await createTodo('Redirected');
    await receiver.waitFor(1);
    const [delivery] = await eventually(async () => {
      const entries = await log();
      expect(entries[0]?.attempts[0]?.status_code).toBe(302);
      return entries;
    });
    expect(delivery?.status).not.toBe('delivered');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(target.received).toHaveLength(0);
  });

  it('sends at most WEBHOOK_ENDPOINT_CONCURRENCY attempts to one endpoint at once', async () => {
    const { receiver, createTodo } = await setUp(() => ({ status: 200, delayMs: 150 }), {
      WEBHOOK_ENDPOINT_CONCURRENCY: '2',
    });
    for (let i = 0; i < 8; i++) await createTodo(`capped ${i}`);
    await receiver.waitFor(8);
    expect(receiver.maxInFlight()).toBe(2);
  });

  it('pages the delivery log newest first with Link, and refuses a foreign cursor', async () => {
    const { t, receiver, endpoint } = await setUp();
    for (let i = 0; i < 3; i++) {
      await t.inject({ method: 'POST', url: `/api/webhooks/${endpoint.id}/test` });
    }
    await receiver.waitFor(3);
    const first = await t.inject({
      method: 'GET',
      url: `/api/webhooks/${endpoint.id}/deliveries?limit=2`,
    });
    const next = /<http:\/\/todo\.test([^>]+)>; rel="next"/.exec(String(first.headers.link))?.[1];
    expect(first.json<WebhookDelivery[]>()).toHaveLength(2);
    if (next === undefined) throw new Error('no next page');
    const second = await t.inject({ method: 'GET', url: next });
    expect(second.headers.link).toBeUndefined();
    const ids = [...first.json<WebhookDelivery[]>(), ...second.json<WebhookDelivery[]>()].map(
      (delivery) => delivery.id,
    );
    expect(new Set(ids).size).toBe(3);
    expect(ids).toEqual([...ids].sort().reverse());
    const other = (
      await t.inject({ method: 'POST', url: '/api/webhooks', payload: { url: receiver.url } })
    ).json<WebhookEndpoint>();
    const cursor = new URL(`http://x${next}`).searchParams.get('cursor') ?? '';
    const foreign = await t.inject({
      method: 'GET',
      url: `/api/webhooks/${other.id}/deliveries?cursor=${encodeURIComponent(cursor)}`,
    });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json<{ code: string }>().code).toBe('invalid-cursor');
  });
});
