import { hash } from 'node:crypto';
import stringify from 'safe-stable-stringify';
import type { Db } from '../db/database.js';
import { eventOf, eventsOfChange, type NewTodoEvent } from '../events/todo-events.js';
import { todoEventsRepository } from '../events/todo-events.repository.js';
import { enqueueDeliveries } from '../webhooks/webhook-fanout.js';
import { AppError, notFound, validationError, type FieldError } from '../http/app-error.js';
import { satisfies, type VersionPrecondition } from '../http/conditional.js';
import type { CursorCodec } from './todo-cursor.js';
import { FIELD_DEFAULTS, normalizeFields, type TodoFields } from './todo-fields.js';
import { parseFilter, parseSort, type SortKey, type TodoFilter } from './todo-list-query.js';
import { fieldMembersOf, listedTodosJson } from './todo-json.js';
import { assertTransition } from './todo-status.js';
import { ACTIONS, type TodoAction } from './todo-transitions.js';
import {
  LIMITS,
  LIST_LIMIT,
  READ_ONLY_FIELDS,
  type ListFiltersQuery,
  type ListQuery,
  type Todo,
  type TodoPatch,
  type TodoStatus,
  type TodoWrite,
} from './todo.schemas.js';
import type { TodoRow, TodoRowChanges } from './todo.table.js';
import { todoUrl } from './todo-url.js';
import { todosRepository as repository } from './todos.repository.js';

/** Gap left between a new todo's `order` and the last one, so clients can insert between. */
const ORDER_STEP = 1024;

/** Who is asking and how they reach us: the owner scopes every query, the base builds `url`. */
export interface RequestContext {
  readonly ownerId: string;
  readonly baseUrl: string;
}

export interface TodosServiceDeps {
  readonly cursors: CursorCodec;
  readonly now: () => Date;
  readonly newId: () => string;
  /** Most todos one owner may keep. */
  readonly todoQuota: number;
}

export interface TodoPage {
  /** The page's todos as the JSON array the API sends (see `listedTodosJson`). */
  readonly json: string;
  readonly nextCursor: string | undefined;
  /** All todos matching the filters, ignoring paging; only when asked for. */
  readonly totalCount: number | undefined;
}

/**
 * The one mapper from a stored row to the API object; lists build the same JSON in
 * `todo-json.ts`.
 */
export function todoRowToTodo(row: TodoRow, baseUrl: string): Todo {
  return {
    id: row.id,
    url: todoUrl(baseUrl, row.id),
    ...fieldMembersOf(row),
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

/** The stored columns of `fields` and the change's bookkeeping. */
function rowChangesOf(
  fields: TodoFields,
  completedAt: string | null,
  version: number,
  updatedAt: string,
): TodoRowChanges {
  return {
    title: fields.title,
    description: fields.description,
    status: fields.status,
    priority: fields.priority,
    position: fields.order,
    labels: JSON.stringify(fields.labels),
    due_date: fields.due_date,
    due_at: fields.due_at,
    metadata: JSON.stringify(fields.metadata),
    completed_at: completedAt,
    version,
    updated_at: updatedAt,
  };
}

function fieldsOf(todo: Todo): TodoFields {
  return {
    title: todo.title,
    description: todo.description,
    status: todo.status,
    priority: todo.priority,
    order: todo.order,
    labels: todo.labels,
    due_date: todo.due_date,
    due_at: todo.due_at,
    metadata: todo.metadata,
  };
}

/**
 * The status a write asks for. `completed` is an alias: `true` completes; `false` reopens a
 * completed todo and leaves any other status alone. Sent together, the two must agree.
 */
function requestedStatus(
  body: { status?: TodoStatus | undefined; completed?: boolean | undefined },
  base: TodoStatus,
  errors: FieldError[],
): TodoStatus {
  const { status, completed } = body;
  if (status !== undefined) {
    if (completed !== undefined && completed !== (status === 'completed')) {
      errors.push({
        pointer: '/completed',
        code: 'conflict',
        detail: `completed=${String(completed)} contradicts status "${status}"`,
      });
    }
    return status;
  }
  if (completed === true) return 'completed';
  if (completed === false && base === 'completed') return 'open';
  return base;
}

/** Read-only fields may be echoed back unchanged; any difference is reported. */
function checkReadOnlyEcho(
  body: Partial<Record<(typeof READ_ONLY_FIELDS)[number], unknown>>,
  current: Todo | undefined,
  errors: FieldError[],
): void {
  for (const field of READ_ONLY_FIELDS) {
    const sent = body[field];
    if (sent === undefined) continue;
    const same =
      current !== undefined &&
      (field === 'url'
        ? typeof sent === 'string' && sent.endsWith(`/api/todos/${current.id}`)
        : sent === current[field]);
    if (!same) {
      errors.push({
        pointer: `/${field}`,
        code: 'read-only',
        detail: current
          ? 'is read-only; send it unchanged or leave it out'
          : 'is read-only and set by the server',
      });
    }
  }
}

function checkPrecondition(precondition: VersionPrecondition | undefined, current: Todo): void {
  if (precondition && !satisfies(precondition, current.version)) {
    throw new AppError(
      'precondition-failed',
      `If-Match does not match the current ETag "${current.version}"; the todo changed since you read it.`,
    );
  }
}

/**
 * What a cursor is bound to: the owner, the filters (but the clock behind `overdue`), `q` and
 * the sort, as a short fingerprint. The version changes whenever the meaning of a keyset
 * changes, so that older cursors are refused instead of misread.
 */
function bindingOf(ownerId: string, filter: TodoFilter, sort: readonly SortKey[]): string {
  const { overdue, ...rest } = filter;
  const canonical =
    stringify({ v: 3, owner: ownerId, filter: { ...rest, overdue: overdue?.value }, sort }) ?? '';
  return hash('sha256', canonical, 'base64url').slice(0, 22);
}

export function createTodosService(deps: TodosServiceDeps) {
  const { cursors, now, newId, todoQuota } = deps;

  /**
   * The todo as it is now (deleted ones only with `includeDeleted`). For a change
   * (`forUpdate`), the row is locked until the write transaction ends, so that concurrent
   * changes apply one after another: each sees the version the previous one left, and
   * `If-Match` answers 412 instead of losing an update. (Locks go todo rows first, then the
   * owner's row — taken by the event numbering at the end — so that no two writes wait on
   * each other in a circle; a create, which locks no existing row, takes the owner first.)
   */
  async function load(
    db: Db,
    ctx: RequestContext,
    id: string,
    options: { readonly forUpdate: boolean; readonly includeDeleted?: boolean },
  ): Promise<Todo> {
    const row = await repository.findById(db, ctx.ownerId, id, options);
    if (!row) throw notFound();
    return todoRowToTodo(row, ctx.baseUrl);
  }

  /**
   * Writes the change's events to the outbox, and their webhook deliveries, in the change's
   * transaction.
   */
  async function emit(
    db: Db,
    ctx: RequestContext,
    events: readonly NewTodoEvent[],
    at: string,
  ): Promise<void> {
    const rows = await todoEventsRepository.append(db, ctx.ownerId, events, at, newId);
    await enqueueDeliveries(db, ctx.ownerId, rows, ctx.baseUrl, newId, at);
  }

  /** 422 `quota-exceeded` when the owner already keeps the most todos allowed. */
  async function assertBelowQuota(db: Db, ctx: RequestContext): Promise<void> {
    if ((await repository.todoCount(db, ctx.ownerId)) >= todoQuota) {
      throw new AppError(
        'quota-exceeded',
        `You already keep ${todoQuota} todos, the most allowed; delete some first.`,
        { extensions: { limit: todoQuota } },
      );
    }
  }

  /**
   * Stores `target` over `current`: validates the transition, keeps `completed_at` in step, and
   * bumps `version` only when something changed (a same-state write is a no-op).
   */
  async function save(
    db: Db,
    ctx: RequestContext,
    current: Todo,
    target: TodoFields,
  ): Promise<Todo> {
    assertTransition(current.status, target.status);
    if (stringify(target) === stringify(fieldsOf(current))) return current;
    const timestamp = now().toISOString();
    const completedAt =
      target.status === 'completed'
        ? current.status === 'completed'
          ? current.completed_at
          : timestamp
        : null;
    const row = await repository.update(
      db,
      ctx.ownerId,
      current.id,
      rowChangesOf(target, completedAt, current.version + 1, timestamp),
      rowChangesOf(fieldsOf(current), current.completed_at, current.version, current.updated_at),
    );
    const saved = todoRowToTodo(row, ctx.baseUrl);
    await emit(db, ctx, eventsOfChange(current, saved), timestamp);
    return saved;
  }

  return {
    /** One page; with `count`, also the number of all matching todos (`Prefer: count=exact`). */
    async list(
      db: Db,
      ctx: RequestContext,
      query: ListQuery,
      options: { readonly count: boolean },
    ): Promise<TodoPage> {
      const filter: TodoFilter = {
        ...parseFilter(query, now()),
        ...(query.include_deleted === 'true' ? { includeDeleted: true } : {}),
      };
      const sort = parseSort(query.sort);
      const binding = bindingOf(ctx.ownerId, filter, sort);
      const after = query.cursor === undefined ? undefined : cursors.decode(query.cursor, binding);
      if (after && after.length !== repository.keysetLength(sort)) {
        // Only a cursor signed by an older version of the service can get here.
        throw new AppError('invalid-cursor', 'The cursor is from an older version; start again.', {
          errors: [{ pointer: 'cursor', code: 'invalid-cursor', detail: 'is outdated' }],
        });
      }
      const limit = Math.min(query.limit ?? LIST_LIMIT.default, LIST_LIMIT.max);
      // One connection for both statements, so that no other write of this process lands between.
      const { rows, totalCount } = await db.connection().execute(async (conn) => ({
        // One extra row tells whether a next page exists without a count.
        rows: await repository.list(conn, ctx.ownerId, { filter, sort, after, limit: limit + 1 }),
        totalCount: options.count ? await repository.count(conn, ctx.ownerId, filter) : undefined,
      }));
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const nextCursor =
        rows.length > limit && last
          ? cursors.encode(repository.keysetOf(last, sort), binding)
          : undefined;
      return {
        json: listedTodosJson(page, ctx.baseUrl),
        nextCursor,
        totalCount,
      };
    },

    get(db: Db, ctx: RequestContext, id: string): Promise<Todo> {
      return load(db, ctx, id, { forUpdate: false });
    },

    async create(db: Db, ctx: RequestContext, body: TodoWrite): Promise<Todo> {
      await repository.lockOwner(db, ctx.ownerId);
      const errors: FieldError[] = [];
      checkReadOnlyEcho(body, undefined, errors);
      const status = requestedStatus(body, FIELD_DEFAULTS.status, errors);
      const fields = normalizeFields(
        {
          ...FIELD_DEFAULTS,
          ...body,
          status,
          // Capped at the largest allowed `order`, so that the todo can be sent back in a PUT.
          order:
            body.order ??
            Math.min(
              ((await repository.maxOrder(db, ctx.ownerId)) ?? 0) + ORDER_STEP,
              LIMITS.orderMagnitude,
            ),
        },
        errors,
      );
      if (errors.length > 0) throw validationError(errors);
      // Exact under concurrency: the owner is locked for the rest of the write transaction.
      await assertBelowQuota(db, ctx);
      const timestamp = now().toISOString();
      const completedAt = fields.status === 'completed' ? timestamp : null;
      const row = await repository.insert(db, {
        id: newId(),
        owner_id: ctx.ownerId,
        created_at: timestamp,
        ...rowChangesOf(fields, completedAt, 1, timestamp),
      });
      const created = todoRowToTodo(row, ctx.baseUrl);
      await emit(db, ctx, [eventOf('todo.created', created)], timestamp);
      return created;
    },

    /** PUT: every writable field from the body, omitted ones reset to their defaults. */
    async replace(
      db: Db,
      ctx: RequestContext,
      id: string,
      body: TodoWrite,
      precondition: VersionPrecondition | undefined,
    ): Promise<Todo> {
      const current = await load(db, ctx, id, { forUpdate: true });
      checkPrecondition(precondition, current);
      const errors: FieldError[] = [];
      checkReadOnlyEcho(body, current, errors);
      const status = requestedStatus(body, FIELD_DEFAULTS.status, errors);
      // `order` has no static default; an omitted one keeps the todo where it is.
      const target = normalizeFields(
        { ...FIELD_DEFAULTS, ...body, status, order: body.order ?? current.order },
        errors,
      );
      if (errors.length > 0) throw validationError(errors);
      return save(db, ctx, current, target);
    },

    /** PATCH: a JSON Merge Patch (RFC 7396) over the writable fields. */
    async patch(
      db: Db,
      ctx: RequestContext,
      id: string,
      patch: TodoPatch,
      precondition: VersionPrecondition | undefined,
    ): Promise<Todo> {
      const current = await load(db, ctx, id, { forUpdate: true });
      checkPrecondition(precondition, current);
      const errors: FieldError[] = [];
      checkReadOnlyEcho(patch, current, errors);
      const merged: TodoFields = {
        title: patch.title ?? current.title,
        description: patch.description !== undefined ? patch.description : current.description,
        status: requestedStatus(patch, current.status, errors),
        priority: patch.priority === undefined ? current.priority : (patch.priority ?? 'none'),
        order: patch.order ?? current.order,
        labels: patch.labels === undefined ? current.labels : (patch.labels ?? []),
        due_date: patch.due_date !== undefined ? patch.due_date : current.due_date,
        due_at: patch.due_at !== undefined ? patch.due_at : current.due_at,
        metadata: mergeMetadata(current.metadata, patch.metadata),
      };
      const target = normalizeFields(merged, errors);
      if (errors.length > 0) throw validationError(errors);
      return save(db, ctx, current, target);
    },

    async applyAction(
      db: Db,
      ctx: RequestContext,
      id: string,
      action: TodoAction,
      precondition: VersionPrecondition | undefined,
    ): Promise<Todo> {
      const current = await load(db, ctx, id, { forUpdate: true });
      checkPrecondition(precondition, current);
      return save(db, ctx, current, { ...fieldsOf(current), status: ACTIONS[action] });
    },

    /** Soft delete: the todo leaves lists and answers 404 until restored or purged. */
    async delete(
      db: Db,
      ctx: RequestContext,
      id: string,
      precondition: VersionPrecondition | undefined,
    ): Promise<void> {
      const current = await load(db, ctx, id, { forUpdate: true });
      checkPrecondition(precondition, current);
      const timestamp = now().toISOString();
      const row = await repository.setDeleted(db, ctx.ownerId, id, timestamp, timestamp);
      await emit(db, ctx, [eventOf('todo.deleted', todoRowToTodo(row, ctx.baseUrl))], timestamp);
    },

    /** Undoes a delete; 409 `not-deleted` for a todo that is not deleted. */
    async restore(
      db: Db,
      ctx: RequestContext,
      id: string,
      precondition: VersionPrecondition | undefined,
    ): Promise<Todo> {
      const current = await load(db, ctx, id, { forUpdate: true, includeDeleted: true });
      checkPrecondition(precondition, current);
      if (current.deleted_at === null) {
        throw new AppError('not-deleted', 'This todo is not deleted; there is nothing to restore.');
      }
      // A restored todo counts again: checked under the owner's lock, like a create.
      await repository.lockOwner(db, ctx.ownerId);
      await assertBelowQuota(db, ctx);
      const timestamp = now().toISOString();
      const row = await repository.setDeleted(db, ctx.ownerId, id, null, timestamp);
      const restored = todoRowToTodo(row, ctx.baseUrl);
      await emit(db, ctx, [eventOf('todo.restored', restored)], timestamp);
      return restored;
    },

    /** Soft-deletes every todo matching the filters; returns how many. */
    async deleteMatching(db: Db, ctx: RequestContext, query: ListFiltersQuery): Promise<number> {
      const at = now();
      const timestamp = at.toISOString();
      const filter = parseFilter(query, at);
      // Rows first, owner (by the count trigger, then the events) after, as every write.
      await repository.lockMatching(db, ctx.ownerId, filter);
      const rows = await repository.deleteMatching(db, ctx.ownerId, filter, timestamp);
      const events = rows.map((row) => eventOf('todo.deleted', todoRowToTodo(row, ctx.baseUrl)));
      await emit(db, ctx, events, timestamp);
      return rows.length;
    },
  };
}

/** RFC 7396 on the one nested object: `null` removes the whole map, a `null` value one key. */
function mergeMetadata(
  current: Readonly<Record<string, string>>,
  patch: TodoPatch['metadata'],
): Record<string, string> {
  if (patch === undefined) return { ...current };
  if (patch === null) return {};
  const merged = new Map(Object.entries(current));
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) merged.delete(key);
    else merged.set(key, value);
  }
  return Object.fromEntries(merged);
}

export type TodosService = ReturnType<typeof createTodosService>;
