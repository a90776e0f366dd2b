import type { Generated } from 'kysely';

/** Per-owner counters, in the writer's transaction (migrations 0009, 0010). */
export interface OwnerUsageTable {
  owner_id: string;
  /** Todos kept and not deleted, maintained by triggers on `todos`. */
  todo_count: number;
  /** The `seq` of the owner's latest event; the row is locked while a writer takes the next. */
  last_event_seq: Generated<number>;
}
