import { sql, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import { preparedQuery } from '../db/prepared-query.js';
import type { NewTodoEvent } from './todo-events.js';
import type { TodoEventRow } from './todo-event.table.js';

/** Rows per INSERT: 7 parameters each stays far below SQLite's 32,766-parameter limit. */
const INSERT_CHUNK = 500;

// The statements of every single write, each compiled once (see `preparedQuery`).
const takeSeqs = preparedQuery(2, (db: Db, count: number, ownerId: string) =>
  db
    .updateTable('owner_usage')
    .set((eb) => ({ last_event_seq: eb('last_event_seq', '+', count) }))
    .where('owner_id', '=', ownerId)
    .returning('last_event_seq'),
);

const insertEvent = preparedQuery(
  7,
  (
    db: Db,
    owner_id: string,
    seq: number,
    id: string,
    type: TodoEventRow['type'],
    todo_id: string,
    occurred_at: string,
    data: string,
  ) => db.insertInto('todo_events').values({ owner_id, seq, id, type, todo_id, occurred_at, data }),
);

/** All SQL over `todo_events`, the outbox. */
export const todoEventsRepository = {
  /**
   * Appends `events` after the owner's last `seq`, in the caller's write transaction. Taking the
   * numbers updates the owner's `owner_usage` row, which stays locked until the transaction
   * ends: the next writer numbers after this one, and only once it has committed.
   */
  async append(
    db: Db,
    ownerId: string,
    events: readonly NewTodoEvent[],
    occurredAt: string,
    newId: () => string,
  ): Promise<TodoEventRow[]> {
    if (events.length === 0) return [];
    const [numbered] = await takeSeqs(db, events.length, ownerId);
    if (!numbered) throw new Error(`owner ${ownerId} has no owner_usage row`);
    const first = numbered.last_event_seq - events.length + 1;
    const rows = events.map((event, i): TodoEventRow => ({
      owner_id: ownerId,
      seq: first + i,
      id: `evt_${newId()}`,
      type: event.type,
      todo_id: event.data.todo.id,
      occurred_at: occurredAt,
      data: JSON.stringify(event.data),
    }));
    const [only] = rows;
    if (rows.length === 1 && only) {
      const { owner_id, seq, id, type, todo_id, occurred_at, data } = only;
      await insertEvent(db, owner_id, seq, id, type, todo_id, occurred_at, data);
      return rows;
    }
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await db
        .insertInto('todo_events')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
    }
    return rows;
  },

  /** The owner's events after `afterSeq`, oldest first. */
  after(db: Db, ownerId: string, afterSeq: number, limit: number): Promise<TodoEventRow[]> {
    return db
      .selectFrom('todo_events')
      .selectAll()
      .where('owner_id', '=', ownerId)
      .where('seq', '>', afterSeq)
      .orderBy('seq')
      .limit(limit)
      .execute();
  },

  /** The `seq` of the owner's latest event, 0 before the first. */
  async lastSeq(db: Db, ownerId: string): Promise<number> {
    const row = await db
      .selectFrom('owner_usage')
      .select('last_event_seq')
      .where('owner_id', '=', ownerId)
      .executeTakeFirst();
    return row?.last_event_seq ?? 0;
  },

  /**
   * Whether every event of the owner after `seen` is still kept, `last` being the latest: the
   * next one exists (the purge removes the oldest first), or there is none yet. A `seen` past
   * `last` comes from before a restore from backup: not resumable either.
   */
  async keptAfter(db: Db, ownerId: string, seen: number, last: number): Promise<boolean> {
    if (seen >= last) return seen === last;
    const next = await db
      .selectFrom('todo_events')
      .select('seq')
      .where('owner_id', '=', ownerId)
      .where('seq', '=', seen + 1)
      .executeTakeFirst();
    return next !== undefined;
  },

  /** Deletes up to `batch` events older than `cutoff`; returns how many. */
  async purgeOlderThan(db: Db, cutoff: string, batch: number): Promise<number> {
    const result = await db
      .deleteFrom('todo_events')
      .where(
        (eb) =>
          sql<SqlBool>`(owner_id, seq) in (${eb
            .selectFrom('todo_events')
            .select(['owner_id', 'seq'])
            .where('occurred_at', '<', cutoff)
            .limit(batch)})`,
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  },
};
