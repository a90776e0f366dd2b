/** Todos kept per owner, maintained by triggers on `todos` (migration 0009). */
export interface OwnerUsageTable {
  owner_id: string;
  todo_count: number;
}
