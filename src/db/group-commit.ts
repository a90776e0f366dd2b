import { CompiledQuery } from 'kysely';
import type { Db } from './database.js';

/** Most writes one commit carries, so that one batch cannot delay its members without bound. */
export const MAX_BATCH = 256;

interface PendingWrite {
  readonly work: (trx: Db) => Promise<unknown>;
  readonly resolve: (value: unknown) => void;
  readonly reject: (reason: unknown) => void;
}

// Each write's savepoint, as plain statements: Kysely's savepoint API builds a new
// transaction object per call, a measurable share of a small write.
const SAVEPOINT = CompiledQuery.raw('savepoint write');
const RELEASE = CompiledQuery.raw('release savepoint write');
const ROLLBACK_TO = CompiledQuery.raw('rollback to savepoint write');

/**
 * Undoes one failed write. When its error took the whole transaction down (disk full, I/O
 * error) the savepoint is gone too; then the write's own error fails the whole batch.
 */
async function rollBackTo(trx: Db, cause: unknown): Promise<void> {
  try {
    await trx.executeQuery(ROLLBACK_TO);
    await trx.executeQuery(RELEASE);
  } catch {
    throw cause;
  }
}

/**
 * Group commit. With `synchronous=FULL` every commit costs one fsync, so committing each write
 * on its own caps a server at the disk's fsync rate. Instead, the writes that arrive together
 * (within one turn of the event loop) run in one transaction, each inside its own savepoint, and
 * share one commit:
 *
 * - a write whose work throws is rolled back to its savepoint and fails alone;
 * - a write that succeeds is acknowledged only after the shared commit returned, that is, once
 *   it is durable; if the commit fails, every write of the batch fails with it;
 * - an error that aborts the whole transaction (disk full, I/O error) fails the whole batch.
 *
 * Returns a `writeTransaction` with the same contract as running each write in a transaction of
 * its own: the work sees a transaction, and the promise settles once the outcome is final.
 */
export function createGroupCommit(db: Db): <T>(work: (trx: Db) => Promise<T>) => Promise<T> {
  const queue: PendingWrite[] = [];
  let scheduled = false;

  /** Runs each write in its own savepoint; settles every write of the batch, never throws. */
  async function runBatch(batch: readonly PendingWrite[]): Promise<void> {
    const succeeded: { write: PendingWrite; value: unknown }[] = [];
    let trx;
    try {
      trx = await db.startTransaction().execute();
      for (const write of batch) {
        await trx.executeQuery(SAVEPOINT);
        let value: unknown;
        try {
          value = await write.work(trx);
        } catch (error) {
          await rollBackTo(trx, error);
          write.reject(error);
          continue;
        }
        await trx.executeQuery(RELEASE);
        succeeded.push({ write, value });
      }
      await trx.commit().execute();
    } catch (error) {
      await trx
        ?.rollback()
        .execute()
        .catch(() => undefined);
      // Writes that already failed on their own keep that answer: a second reject is a no-op.
      for (const write of batch) write.reject(error);
      return;
    }
    for (const { write, value } of succeeded) write.resolve(value);
  }

  async function flush(): Promise<void> {
    while (queue.length > 0) {
      await runBatch(queue.splice(0, MAX_BATCH));
    }
    scheduled = false;
  }

  return <T>(work: (trx: Db) => Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (scheduled) return;
      scheduled = true;
      // After the current I/O phase, so that every request read in it joins this batch.
      setImmediate(() => void flush());
    });
}
