import { Type, type Static, type TSchema } from 'typebox';

/**
 * The todo resource's shapes. Each schema drives request validation, response serialization,
 * the TypeScript types (`Static<>`) and the OpenAPI document at once.
 */

export const TODO_STATUSES = [
  'open',
  'in_progress',
  'blocked',
  'deferred',
  'completed',
  'cancelled',
] as const;
export const TODO_PRIORITIES = ['none', 'low', 'normal', 'high', 'urgent'] as const;

export type TodoStatus = (typeof TODO_STATUSES)[number];
export type TodoPriority = (typeof TODO_PRIORITIES)[number];

export const LIMITS = {
  titleLength: 500,
  descriptionLength: 10_000,
  labels: 20,
  labelLength: 64,
  metadataKeys: 50,
  metadataKeyLength: 40,
  metadataValueLength: 500,
  /** `order` stays within the integers a double represents exactly. */
  orderMagnitude: 2 ** 53,
} as const;

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * A string or null, for responses: one `type: ["string", "null"]` instead of an `anyOf`, which
 * fast-json-stringify serializes by validating the value against each branch with Ajv (format
 * checks included) — measured at about 5 % of a list's time.
 */
const StringOrNull = (options: { readonly format?: string; readonly description?: string } = {}) =>
  Type.Unsafe<string | null>({ ...options, type: ['string', 'null'] });

const StatusSchema = Type.Enum(TODO_STATUSES, {
  description: 'Lifecycle state; transitions follow the published table.',
});
const PrioritySchema = Type.Enum(TODO_PRIORITIES);
const TIMESTAMP = { format: 'date-time', description: 'RFC 3339, UTC, ms.' } as const;
const TimestampSchema = Type.String(TIMESTAMP);

const TitleSchema = Type.String({
  minLength: 1,
  maxLength: LIMITS.titleLength,
  description: 'Trimmed and NFC-normalised; 1–500 characters; no control characters.',
});
const DescriptionSchema = Type.String({
  maxLength: LIMITS.descriptionLength,
  description: 'NFC-normalised; tabs and line breaks allowed, other control characters not.',
});
const OrderSchema = Type.Number({
  minimum: -LIMITS.orderMagnitude,
  maximum: LIMITS.orderMagnitude,
  description: 'Client-controlled position, returned exactly as sent. Default: last + 1024.',
});
const LabelsSchema = Type.Array(Type.String({ minLength: 1, maxLength: LIMITS.labelLength }), {
  maxItems: LIMITS.labels,
  description: 'Trimmed, NFC; duplicates that differ only in case are dropped (first kept).',
});
const DueDateSchema = Type.String({
  format: 'date',
  description: 'All-day due date (YYYY-MM-DD). Not together with due_at.',
});
const DueAtSchema = Type.String({
  format: 'date-time',
  description: 'Timed due (RFC 3339 with offset); stored and returned in UTC.',
});
const MetadataKeys = {
  maxProperties: LIMITS.metadataKeys,
  propertyNames: {
    pattern: `^[A-Za-z0-9_.-]{1,${LIMITS.metadataKeyLength}}$`,
  },
};
const MetadataValue = Type.String({ maxLength: LIMITS.metadataValueLength });
const MetadataSchema = Type.Record(Type.String(), MetadataValue, {
  ...MetadataKeys,
  description: 'Free-form string pairs: ≤ 50 keys of [A-Za-z0-9_.-]{1,40}, values ≤ 500 chars.',
});

export const TodoSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid', description: 'UUIDv7, lowercase.' }),
    url: Type.String({ format: 'uri', description: 'Absolute address of this todo.' }),
    title: Type.String(),
    description: StringOrNull(),
    status: StatusSchema,
    completed: Type.Boolean({ description: 'Alias of status == "completed".' }),
    completed_at: StringOrNull(TIMESTAMP),
    priority: PrioritySchema,
    order: Type.Number(),
    labels: Type.Array(Type.String()),
    due_date: StringOrNull({ format: 'date' }),
    due_at: StringOrNull(TIMESTAMP),
    metadata: Type.Record(Type.String(), Type.String()),
    version: Type.Integer({ minimum: 1, description: '1 on create, +1 on every change.' }),
    created_at: TimestampSchema,
    updated_at: TimestampSchema,
    deleted_at: StringOrNull({
      format: 'date-time',
      description:
        'When the todo was deleted; null unless it is. A deleted todo answers 404, leaves lists (see `include_deleted`) and can be restored until it is purged.',
    }),
  },
  { additionalProperties: false },
);
export type Todo = Static<typeof TodoSchema>;

/**
 * Read-only fields a client may send back unchanged (a GET-modify-PUT round trip). The service
 * compares them with the stored todo; a changed value is a 422.
 */
const ReadOnlyEcho = {
  id: Type.Optional(Type.String()),
  url: Type.Optional(Type.String()),
  completed_at: Type.Optional(Nullable(Type.String())),
  version: Type.Optional(Type.Integer()),
  created_at: Type.Optional(Type.String()),
  updated_at: Type.Optional(Type.String()),
  deleted_at: Type.Optional(Nullable(Type.String())),
};
export const READ_ONLY_FIELDS = Object.keys(ReadOnlyEcho) as (keyof typeof ReadOnlyEcho)[];

/** POST and PUT body: every writable field; omitted optional fields take their defaults. */
export const TodoWriteSchema = Type.Object(
  {
    title: TitleSchema,
    description: Type.Optional(Nullable(DescriptionSchema)),
    status: Type.Optional(StatusSchema),
    completed: Type.Optional(Type.Boolean()),
    priority: Type.Optional(PrioritySchema),
    order: Type.Optional(OrderSchema),
    labels: Type.Optional(LabelsSchema),
    due_date: Type.Optional(Nullable(DueDateSchema)),
    due_at: Type.Optional(Nullable(DueAtSchema)),
    metadata: Type.Optional(MetadataSchema),
    ...ReadOnlyEcho,
  },
  { additionalProperties: false },
);
export type TodoWrite = Static<typeof TodoWriteSchema>;

/**
 * PATCH body, a JSON Merge Patch (RFC 7396): members present are changed, `null` removes
 * (resets to the default), `metadata` merges key by key.
 */
export const TodoPatchSchema = Type.Object(
  {
    title: Type.Optional(TitleSchema),
    description: Type.Optional(Nullable(DescriptionSchema)),
    status: Type.Optional(StatusSchema),
    completed: Type.Optional(Type.Boolean()),
    priority: Type.Optional(Nullable(PrioritySchema)),
    order: Type.Optional(OrderSchema),
    labels: Type.Optional(Nullable(LabelsSchema)),
    due_date: Type.Optional(Nullable(DueDateSchema)),
    due_at: Type.Optional(Nullable(DueAtSchema)),
    metadata: Type.Optional(
      Nullable(
        Type.Record(Type.String(), Nullable(MetadataValue), {
          ...MetadataKeys,
          description: 'Merged key by key; a null value removes that key.',
        }),
      ),
    ),
    ...ReadOnlyEcho,
  },
  { additionalProperties: false },
);
export type TodoPatch = Static<typeof TodoPatchSchema>;

/** Action endpoints take no input; an empty body or `{}` is accepted. */
export const ActionBodySchema = Type.Optional(Type.Object({}, { additionalProperties: false }));

export const TodoIdParamsSchema = Type.Object({
  id: Type.String({
    pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
    description: 'The todo id (UUID). A malformed id answers 404, like an unknown one.',
  }),
});

export const LIST_LIMIT = { default: 50, max: 200 } as const;

/** Keys `sort` accepts. */
export const SORT_FIELDS = [
  'order',
  'created_at',
  'updated_at',
  'due_at',
  'priority',
  'title',
  'status',
] as const;
export type SortField = (typeof SORT_FIELDS)[number];

const BooleanParameter = (description: string) => Type.Enum(['true', 'false'], { description });

const INSTANT =
  'RFC 3339 date-time with any offset (`2026-03-01T09:30:00Z`; send `+` as `%2B`) or a date `YYYY-MM-DD`, which means that day at 00:00 UTC.';
const DUE_MOMENT =
  'A todo with `due_at` is due at that moment; one with an all-day `due_date` at the end of that day in UTC (`23:59:59.999Z`); one with neither never matches.';

const InstantParameter = (description: string) =>
  Type.String({ maxLength: 64, description: `${description} ${INSTANT}` });

const LabelListParameter = (description: string) =>
  Type.String({
    minLength: 1,
    maxLength: 2000,
    description: `${description} Comma-separated, at most ${LIMITS.labels}; compared like labels are de-duplicated: trimmed, NFC, ignoring case.`,
  });

/** Filters shared by GET and DELETE on the collection. Every filter given must hold (AND). */
const ListFilters = {
  status: Type.Optional(
    Type.String({
      description: `Comma-separated statuses to include (any of): ${TODO_STATUSES.join(', ')}.`,
      maxLength: 200,
    }),
  ),
  completed: Type.Optional(
    BooleanParameter('Only completed (`true`) or only not completed (`false`) todos.'),
  ),
  priority: Type.Optional(
    Type.String({
      description: `Comma-separated priorities to include (any of): ${TODO_PRIORITIES.join(', ')}.`,
      maxLength: 200,
    }),
  ),
  labels: Type.Optional(LabelListParameter('Only todos that have **all** of these labels.')),
  labels_any: Type.Optional(
    LabelListParameter('Only todos that have **at least one** of these labels.'),
  ),
  due_before: Type.Optional(
    InstantParameter(`Only todos due strictly before this moment. ${DUE_MOMENT}`),
  ),
  due_after: Type.Optional(
    InstantParameter(`Only todos due at or after this moment. ${DUE_MOMENT}`),
  ),
  overdue: Type.Optional(
    BooleanParameter(
      '`true`: only todos due before now (see `due_before` for all-day todos) that are not completed or cancelled; `false`: only the others.',
    ),
  ),
  created_after: Type.Optional(
    InstantParameter('Only todos created at or after this moment (`created_at >= value`).'),
  ),
  created_before: Type.Optional(
    InstantParameter('Only todos created strictly before this moment (`created_at < value`).'),
  ),
  updated_since: Type.Optional(
    InstantParameter('Only todos last changed at or after this moment (`updated_at >= value`).'),
  ),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'Full-text search over title and description, at most 200 characters. The query is split into words at whitespace; a todo matches when **every** word matches the **start** of a word in its title or description (`mil` finds "milk"), ignoring case and accents (`cafe` finds "Café"). Only letters and digits count: punctuation separates words, so `e-mail` finds "e-mail" and "e mail" (adjacent words), and search syntax such as `"`, `*`, `OR`, `NEAR`, `-` or `:` is matched literally as text. A query without any letter or digit matches nothing.',
    }),
  ),
};

export const ListFiltersQuerySchema = Type.Object(ListFilters, { additionalProperties: false });
export type ListFiltersQuery = Static<typeof ListFiltersQuerySchema>;

export const ListQuerySchema = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: `Page size, 1–${LIST_LIMIT.max} (default ${LIST_LIMIT.default}); larger values are capped at ${LIST_LIMIT.max}.`,
      }),
    ),
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 4096,
        description:
          'Opaque; from the `Link: rel="next"` header of the previous page. Valid only with the same filters, `q` and `sort`.',
      }),
    ),
    sort: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: `Comma-separated sort keys, each optionally prefixed with \`-\` for descending: ${SORT_FIELDS.join(', ')}. Default \`order,created_at\`; \`id\` always breaks the remaining ties (in the direction of the last key). \`priority\` sorts by urgency (none < low < normal < high < urgent), \`status\` by lifecycle (open, in_progress, blocked, deferred, completed, cancelled), \`title\` ignoring case and accents by code point, \`due_at\` by the due moment (all-day \`due_date\` = end of that day, UTC) with todos without a due last in both directions. A key may appear once.`,
      }),
    ),
    include_deleted: Type.Optional(
      BooleanParameter(
        '`true`: deleted todos (not yet purged) are listed too, with their `deleted_at`; they match filters like the others.',
      ),
    ),
    ...ListFilters,
  },
  { additionalProperties: false },
);
export type ListQuery = Static<typeof ListQuerySchema>;
