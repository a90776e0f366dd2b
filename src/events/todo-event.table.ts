import type { Selectable } from 'kysely';

/**
 * The outbox: one row per event, written in the transaction of the change it describes
 * (migration 0010). `seq` counts per owner without gaps and in commit order.
 */
export interface TodoEventTable {
  owner_id: string;
  seq: number;
  /** `evt_<UUIDv7>`: stable, so that every consumer can de-duplicate by it. */
  id: string;
  type: string;
  todo_id: string;
  occurred_at: string;
  /** JSON of `StoredEventData`. */
  data: string;
}

export type TodoEventRow = Selectable<TodoEventTable>;
