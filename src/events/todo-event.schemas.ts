import { Type, type Static } from 'typebox';
import { TODO_STATUSES, TodoSchema } from '../todos/todo.schemas.js';
import { TODO_EVENT_TYPES } from './todo-event-types.js';

/** The shapes of events (stream, webhooks) and of the delta-sync feed. */

const TodoIdSchema = Type.String({ format: 'uuid' });
const StatusSchema = Type.Enum(TODO_STATUSES);

export const TodoEventSchema = Type.Object(
  {
    id: Type.String({
      description: '`evt_<UUIDv7>`; the same on every delivery of the event: de-duplicate by it.',
    }),
    sequence: Type.Integer({
      minimum: 1,
      description:
        "Per owner, from 1, without gaps, in commit order; the stream's `id:` and `Last-Event-ID`.",
    }),
    type: Type.Enum(TODO_EVENT_TYPES),
    timestamp: Type.String({ format: 'date-time', description: 'When the change committed.' }),
    data: Type.Object(
      {
        todo: TodoSchema,
        changed: Type.Optional(
          Type.Array(Type.String(), {
            description: '`todo.updated`: the fields whose value changed.',
          }),
        ),
        from: Type.Optional(StatusSchema),
        to: Type.Optional(StatusSchema),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type TodoEvent = Static<typeof TodoEventSchema>;

const LiveChangeSchema = Type.Object(
  {
    id: TodoIdSchema,
    deleted: Type.Literal(false),
    todo: TodoSchema,
  },
  { additionalProperties: false, description: 'The todo as it is now: add or replace it.' },
);
const TombstoneSchema = Type.Object(
  { id: TodoIdSchema, deleted: Type.Literal(true) },
  { additionalProperties: false, description: 'The todo is deleted: remove it.' },
);
export const ChangeSchema = Type.Union([LiveChangeSchema, TombstoneSchema]);
export type Change = Static<typeof ChangeSchema>;

export const CHANGES_LIMIT = { default: 100, max: 1000 } as const;

export const ChangesQuerySchema = Type.Object(
  {
    since: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1024,
        description:
          'The `next_since` of your previous call. Without it, nothing is returned but a token for "now": take it, list the todos, then poll with it.',
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `Most events read per call, 1–${CHANGES_LIMIT.max} (default ${CHANGES_LIMIT.default}); larger values are capped.`,
      }),
    ),
  },
  { additionalProperties: false },
);
export type ChangesQuery = Static<typeof ChangesQuerySchema>;

export const ChangesPageSchema = Type.Object(
  {
    changes: Type.Array(ChangeSchema, {
      description:
        'Each todo changed since `since`, once, in the order of its latest change, with its current state or a tombstone.',
    }),
    next_since: Type.String({ description: 'Pass it as `since` next time.' }),
    has_more: Type.Boolean({ description: 'More changes are waiting: call again at once.' }),
  },
  { additionalProperties: false },
);
export type ChangesPage = Static<typeof ChangesPageSchema>;
