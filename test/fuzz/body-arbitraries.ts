import fc from 'fast-check';
import { BAD_JSON_TEXTS, CONTENT_TYPES, OVERFLOWING_NUMBER_LITERALS } from './fuzz-values.js';
import { invalidValue } from './json-schema-breakers.js';
import { validValue, type SchemaContext } from './json-schema-arbitraries.js';
import type { JsonSchema, OperationSpec } from './openapi-operations.js';
import type { BodyPlan } from './request-plan.js';

/**
 * Request bodies for one operation: valid ones from its request body schema (or a todo's last
 * representation sent back with some members changed), and hostile ones — values the schema
 * refuses, JSON that is no JSON, numbers JSON.parse overflows, bodies over the size limit, the
 * wrong media type.
 */

type Arb<T> = fc.Arbitrary<T>;

/** Bodies around the usual 64 KiB limit, in bytes. */
const HUGE_BODY = { min: 60_000, max: 70_000 };

function asRecord(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** A valid object with one member's JSON replaced by a literal JSON.stringify cannot write. */
function withLiteralMember(value: unknown, literal: string): string {
  const marker = '\u0000fuzz-literal\u0000';
  const object = asRecord(value);
  const name = Object.keys(object)[0] ?? 'value';
  return JSON.stringify({ ...object, [name]: marker }).replace(JSON.stringify(marker), literal);
}

export function bodyArbitraries(operation: OperationSpec, context: SchemaContext) {
  const media = operation.body?.media ?? [];
  const schemaOf = (type: string): JsonSchema =>
    media.find((entry) => entry.type === type)?.schema ?? {};
  const mediaType =
    media.length > 0
      ? fc.constantFrom(...media.map((entry) => entry.type))
      : fc.constant('application/json');

  const json = (valueOf: (schema: JsonSchema) => Arb<unknown>) =>
    mediaType.chain((contentType) =>
      valueOf(schemaOf(contentType)).map((value): BodyPlan => ({
        kind: 'json',
        value,
        contentType,
      })),
    );
  const validJson = json((schema) => validValue(schema, context));
  const none = fc.constant<BodyPlan>({ kind: 'none' });

  const validBody: Arb<BodyPlan> =
    media.length === 0
      ? none
      : fc.oneof(
          { weight: 4, arbitrary: validJson },
          ...(operation.pathParameters.length > 0
            ? [
                {
                  weight: 2,
                  arbitrary: mediaType.chain((contentType) =>
                    validValue(schemaOf(contentType), context).map((value): BodyPlan => ({
                      kind: 'echo',
                      overrides: asRecord(value),
                      contentType,
                    })),
                  ),
                },
              ]
            : []),
          ...(operation.body?.required === true ? [] : [{ weight: 1, arbitrary: none }]),
        );

  const text = (texts: Arb<string>, contentType: Arb<string | undefined> = mediaType) =>
    fc
      .tuple(texts, contentType)
      .map(([body, type]): BodyPlan => ({ kind: 'text', text: body, contentType: type }));
  const someValue =
    media.length > 0
      ? validJson
      : fc.constant<BodyPlan>({ kind: 'json', value: {}, contentType: 'application/json' });

  const invalidBody: Arb<BodyPlan> = fc.oneof(
    json((schema) => invalidValue(schema, context)),
    json(() => fc.jsonValue()),
    text(fc.string({ unit: 'binary', maxLength: 200 })),
    text(fc.constantFrom(...BAD_JSON_TEXTS)),
    fc
      .tuple(validJson, fc.constantFrom(...OVERFLOWING_NUMBER_LITERALS), mediaType)
      .map(([body, literal, contentType]): BodyPlan => ({
        kind: 'text',
        text: withLiteralMember(body.kind === 'json' ? body.value : {}, literal),
        contentType,
      })),
    fc
      .tuple(validJson, fc.integer(HUGE_BODY), mediaType)
      .map(([body, size, contentType]): BodyPlan => ({
        kind: 'json',
        value: {
          ...(body.kind === 'json' ? asRecord(body.value) : {}),
          pad: 'x'.repeat(size),
        },
        contentType,
      })),
    // The right JSON under a wrong or missing media type, or no body at all.
    fc
      .tuple(someValue, fc.option(fc.constantFrom(...CONTENT_TYPES), { nil: undefined }))
      .map(([body, contentType]): BodyPlan => ({ ...body, contentType }) as BodyPlan),
    none,
    fc.constant<BodyPlan>({ kind: 'json', value: {}, contentType: 'application/json' }),
    text(fc.constantFrom('', ' ', '\n', 'null', '{}', '[]')),
  );
  return { validBody, invalidBody };
}
