import type { FastifyBaseLogger } from 'fastify';
import { ownerFingerprint } from '../auth/owner.js';
import type { Database } from '../db/database.js';

/**
 * Wake-ups for event streams: "this owner may have new events". A wake-up carries no event;
 * streams read the outbox for what follows their last sequence, so a wake-up lost or doubled
 * never loses or repeats an event. With several instances on PostgreSQL, every instance's
 * streams are woken through LISTEN/NOTIFY.
 */
export interface EventBus {
  /** Adds a stream of `ownerId`; returns the function that removes it. */
  subscribe(ownerId: string, subscriber: StreamSubscriber): () => void;
  /** How many streams `ownerId` has open on this instance. */
  streamsOf(ownerId: string): number;
  /** After a commit that may have written events of `ownerId`. */
  published(ownerId: string): void;
  /** Ends every stream and stops listening. */
  close(): Promise<void>;
}

export interface StreamSubscriber {
  /** New events may be waiting. */
  wake(): void;
  /** The service is shutting down: finish the response. */
  end(): void;
}

const CHANNEL = 'todo_events';

export async function createEventBus(
  database: Database,
  log: FastifyBaseLogger,
): Promise<EventBus> {
  const streams = new Map<string, Set<StreamSubscriber>>();
  const wake = (tag: string) => {
    for (const stream of streams.get(tag) ?? []) stream.wake();
  };
  const wakeAll = () => {
    for (const tag of streams.keys()) wake(tag);
  };
  const { notifications } = database;
  const stopListening = await notifications?.listen(CHANNEL, wake, wakeAll);

  return {
    subscribe(ownerId, subscriber) {
      const tag = ownerFingerprint(ownerId);
      const owned = streams.get(tag) ?? new Set();
      owned.add(subscriber);
      streams.set(tag, owned);
      return () => {
        owned.delete(subscriber);
        if (owned.size === 0) streams.delete(tag);
      };
    },

    streamsOf(ownerId) {
      return streams.get(ownerFingerprint(ownerId))?.size ?? 0;
    },

    published(ownerId) {
      const tag = ownerFingerprint(ownerId);
      wake(tag);
      notifications?.notify(CHANNEL, tag).catch((error: unknown) => {
        // Other instances' streams catch up at their next poll.
        log.warn({ err: error }, 'could not notify other instances of new events');
      });
    },

    async close() {
      for (const owned of streams.values()) for (const stream of owned) stream.end();
      streams.clear();
      await stopListening?.();
    },
  };
}
