import { Type, type Static } from 'typebox';
import { PROBLEM_CODES, type ProblemCode } from './problem-codes.js';
import type { FieldError, ProblemExtensions } from './app-error.js';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** RFC 9457 problem document with this service's extension members. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI reference `/problems/{code}` documenting the code.' }),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    detail: Type.String(),
    instance: Type.String({ description: 'The request path that produced the problem.' }),
    code: Type.Enum(Object.keys(PROBLEM_CODES) as ProblemCode[]),
    request_id: Type.String(),
    errors: Type.Optional(
      Type.Array(
        Type.Object({ pointer: Type.String(), code: Type.String(), detail: Type.String() }),
      ),
    ),
    current_status: Type.Optional(Type.String()),
    allowed_transitions: Type.Optional(Type.Array(Type.String())),
    required_scope: Type.Optional(
      Type.String({ description: '`insufficient-scope`: the scope the operation needs.' }),
    ),
    limit: Type.Optional(
      Type.Integer({ description: '`quota-exceeded`: the most todos an owner may keep.' }),
    ),
  },
  { additionalProperties: false },
);

export type Problem = Static<typeof ProblemSchema>;

export interface ProblemInput {
  readonly code: ProblemCode;
  readonly detail: string;
  readonly instance: string;
  readonly requestId: string;
  readonly errors?: readonly FieldError[] | undefined;
  readonly extensions?: ProblemExtensions | undefined;
}

/** Builds the problem document; the one place its shape is decided. */
export function problemDocument(input: ProblemInput): Problem {
  const entry = PROBLEM_CODES[input.code];
  return {
    type: `/problems/${input.code}`,
    title: entry.title,
    status: entry.status,
    detail: input.detail,
    instance: input.instance,
    code: input.code,
    request_id: input.requestId,
    ...(input.errors && input.errors.length > 0 ? { errors: [...input.errors] } : {}),
    ...(input.extensions as Partial<Problem> | undefined),
  };
}
