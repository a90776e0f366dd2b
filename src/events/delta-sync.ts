import { ownerFingerprint } from '../auth/owner.js';
import type { Db } from '../db/database.js';
import { AppError } from '../http/app-error.js';
import type { TokenSealer } from '../http/sealed-token.js';
import { todosRepository } from '../todos/todos.repository.js';
import { todoRowToTodo, type RequestContext } from '../todos/todos.service.js';
import { CHANGES_LIMIT, type Change, type ChangesPage } from './todo-event.schemas.js';
import { todoEventsRepository as events } from './todo-events.repository.js';

/**
 * Delta sync over the outbox: a token is an owner's event `seq`, sealed. A page reads the events
 * after it and answers each todo they touch once, as it is now (or a tombstone), so applying
 * pages in order — even one that overlaps a later change — ends with exactly the server's todos.
 */

interface SyncTokenPayload {
  /** The event `seq` the client has seen everything up to. */
  readonly s: number;
  /** Whose events: a fingerprint of the owner. */
  readonly o: string;
}

function isPayload(value: unknown): value is SyncTokenPayload {
  if (typeof value !== 'object' || value === null) return false;
  const { s, o } = value as Record<string, unknown>;
  return typeof s === 'number' && Number.isSafeInteger(s) && s >= 0 && typeof o === 'string';
}

function invalidSince(detail: string): AppError {
  return new AppError('invalid-parameter', `since ${detail}.`, {
    errors: [{ pointer: 'since', code: 'invalid-token', detail }],
  });
}

function expired(): AppError {
  return new AppError(
    'sync-token-expired',
    'Changes since this token are no longer kept. List the todos again, then sync from a new token.',
  );
}

export function createDeltaSync(sealer: TokenSealer) {
  const tokenOf = (ownerId: string, seq: number) =>
    sealer.seal({ s: seq, o: ownerFingerprint(ownerId) } satisfies SyncTokenPayload);

  function seqOf(token: string, ownerId: string): number {
    const opened = sealer.open(token);
    if (
      !opened.ok ||
      !isPayload(opened.payload) ||
      opened.payload.o !== ownerFingerprint(ownerId)
    ) {
      throw invalidSince('is not a token this service gave you');
    }
    return opened.payload.s;
  }

  return {
    /** Changes after the `since` token, at most `limit` events' worth; no token: "now". */
    async changes(
      db: Db,
      ctx: RequestContext,
      since: string | undefined,
      requestedLimit: number | undefined,
    ): Promise<ChangesPage> {
      const last = await events.lastSeq(db, ctx.ownerId);
      if (since === undefined) {
        return { changes: [], next_since: tokenOf(ctx.ownerId, last), has_more: false };
      }
      const seen = seqOf(since, ctx.ownerId);
      if (!(await events.keptAfter(db, ctx.ownerId, seen, last))) throw expired();
      const limit = Math.min(requestedLimit ?? CHANGES_LIMIT.default, CHANGES_LIMIT.max);
      const rows = await events.after(db, ctx.ownerId, seen, limit + 1);
      const page = rows.slice(0, limit);
      // Each todo once, where its latest change in the page puts it.
      const touched = new Set<string>();
      for (const row of page) {
        touched.delete(row.todo_id);
        touched.add(row.todo_id);
      }
      const ids = [...touched];
      const todos = new Map(
        (await todosRepository.findByIds(db, ctx.ownerId, ids)).map((row) => [row.id, row]),
      );
      const changes = ids.map((id): Change => {
        const row = todos.get(id);
        return row && row.deleted_at === null
          ? { id, deleted: false, todo: todoRowToTodo(row, ctx.baseUrl) }
          : { id, deleted: true };
      });
      return {
        changes,
        next_since: tokenOf(ctx.ownerId, page.at(-1)?.seq ?? seen),
        has_more: rows.length > limit,
      };
    },
  };
}

export type DeltaSync = ReturnType<typeof createDeltaSync>;
