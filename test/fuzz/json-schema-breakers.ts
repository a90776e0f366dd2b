import fc from 'fast-check';
import { DATE_TEXTS, ODD_NUMBERS, ODD_NUMBER_TEXTS, junkString } from './fuzz-values.js';
import {
  LONGEST_BOUNDARY,
  asParameterText,
  extraMembers,
  rangeOf,
  repeatedTo,
  typesOf,
  validObject,
  validValue,
  type SchemaContext,
} from './json-schema-arbitraries.js';
import type { JsonSchema } from './openapi-operations.js';

/**
 * Values a JSON Schema most likely refuses: a type it does not admit, one constraint broken
 * (a length, a bound, a pattern, an enum), an unknown or a missing member, or plain junk.
 */

const UNKNOWN_MEMBER_NAMES = [
  'unknown',
  'colour',
  'Title',
  'ID',
  '',
  ' ',
  '$where',
  'constructor.',
];

const JSON_TYPES = ['string', 'number', 'integer', 'boolean', 'null', 'array', 'object'] as const;

function valueOfType(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom('1', 'true', 'null', ''));
    case 'number':
      return fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.constantFrom(...ODD_NUMBERS),
      );
    case 'integer':
      return fc.integer();
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 });
    default:
      return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), {
        maxKeys: 3,
      });
  }
}

/** Values of every JSON type the schema does not admit. */
function typeConfused(schema: JsonSchema, context: SchemaContext): fc.Arbitrary<unknown>[] {
  const allowed = typesOf(schema, context);
  if (allowed.length === 0) return [];
  const admits = (type: string) =>
    allowed.includes(type) || (type === 'integer' && allowed.includes('number'));
  return JSON_TYPES.filter((type) => !admits(type)).map(valueOfType);
}

function stringBreakers(schema: JsonSchema): fc.Arbitrary<unknown>[] {
  const breakers: fc.Arbitrary<unknown>[] = [];
  if (schema.maxLength !== undefined && schema.maxLength < LONGEST_BOUNDARY) {
    breakers.push(repeatedTo(schema.maxLength + 1));
  }
  if (schema.minLength !== undefined && schema.minLength > 0) {
    breakers.push(repeatedTo(schema.minLength - 1));
  }
  if (schema.pattern !== undefined || schema.format !== undefined) {
    breakers.push(junkString(), fc.constantFrom(...DATE_TEXTS));
  }
  return breakers;
}

function numberBreakers(schema: JsonSchema, integer: boolean): fc.Arbitrary<unknown>[] {
  const { min, max } = rangeOf(schema, integer);
  const outside = [
    ...(min > -Number.MAX_VALUE ? [min - 1, min - Math.abs(min) - 1] : []),
    ...(max < Number.MAX_VALUE ? [max + 1, max + Math.abs(max) + 1] : []),
    ...ODD_NUMBERS.filter((value) => value < min || value > max),
    ...(integer ? [0.5, 1.5, -2.5] : []),
  ].filter((value) => Number.isFinite(value));
  return outside.length > 0 ? [fc.constantFrom(...outside)] : [];
}

function objectBreakers(schema: JsonSchema, context: SchemaContext): fc.Arbitrary<unknown>[] {
  const valid = validObject(schema, context);
  const names = Object.keys(schema.properties ?? {});
  const unknownNames = UNKNOWN_MEMBER_NAMES.filter((name) => !names.includes(name));
  const breakers: fc.Arbitrary<unknown>[] = [
    fc
      .tuple(valid, fc.constantFrom(...unknownNames), fc.jsonValue({ maxDepth: 1 }))
      .map(([object, name, value]) => ({ ...object, [name]: value })),
  ];
  const required = schema.required ?? [];
  if (required.length > 0) {
    breakers.push(
      fc.tuple(valid, fc.constantFrom(...required)).map(([object, name]) => {
        const { [name]: _dropped, ...rest } = object;
        return rest;
      }),
    );
  }
  if (names.length > 0) {
    breakers.push(
      fc
        .constantFrom(...names)
        .chain((name) =>
          fc
            .tuple(valid, invalidValue(schema.properties?.[name] ?? {}, context))
            .map(([object, value]) => ({ ...object, [name]: value })),
        ),
    );
  }
  if (schema.maxProperties !== undefined && typeof schema.additionalProperties === 'object') {
    breakers.push(extraMembers(schema, context, schema.maxProperties + 1));
  }
  if (schema.propertyNames) {
    breakers.push(
      fc
        .tuple(valid, fc.constantFrom('', 'a b', 'x'.repeat(100), 'é', '__proto__', 'constructor'))
        .map(([object, name]) => ({ ...object, [name]: 'v' })),
    );
  }
  return breakers;
}

/** Values the schema most likely refuses: wrong type, one constraint broken, or junk. */
export function invalidValue(schema: JsonSchema, context: SchemaContext): fc.Arbitrary<unknown> {
  const resolved = context.resolve(schema);
  const breakers: fc.Arbitrary<unknown>[] = [...typeConfused(resolved, context)];
  const enumMembers = resolved.enum?.filter(
    (member): member is string => typeof member === 'string',
  );
  if (enumMembers && enumMembers.length > 0) {
    const outside = [
      ...enumMembers.map((member) => member.toUpperCase()),
      ...enumMembers.map((member) => ` ${member}`),
      'not-a-member',
      '',
    ].filter((text) => !resolved.enum?.includes(text));
    breakers.push(fc.constantFrom(...outside));
  }
  for (const branch of resolved.anyOf ?? resolved.oneOf ?? []) {
    breakers.push(invalidValue(branch, context));
  }
  const types = typesOf(resolved, context);
  if (!resolved.enum && !resolved.anyOf && !resolved.oneOf) {
    if (types.includes('string')) breakers.push(...stringBreakers(resolved));
    if (types.includes('integer')) breakers.push(...numberBreakers(resolved, true));
    if (types.includes('number')) breakers.push(...numberBreakers(resolved, false));
    if (types.includes('object')) breakers.push(...objectBreakers(resolved, context));
    if (types.includes('array')) {
      const item = resolved.items ?? {};
      breakers.push(fc.array(invalidValue(item, context), { minLength: 1, maxLength: 3 }));
      if (resolved.maxItems !== undefined && resolved.maxItems < 1000) {
        const count = resolved.maxItems + 1;
        breakers.push(fc.array(validValue(item, context), { minLength: count, maxLength: count }));
      }
    }
  }
  return fc.oneof(
    { weight: 4, arbitrary: fc.oneof(...breakers, fc.jsonValue({ maxDepth: 2 })) },
    { weight: 1, arbitrary: fc.jsonValue() },
  );
}

/** Parameter text the schema most likely refuses, odd number spellings included. */
export function invalidParameterText(
  schema: JsonSchema,
  context: SchemaContext,
): fc.Arbitrary<string> {
  const resolved = context.resolve(schema);
  const tooLong =
    resolved.maxLength !== undefined && resolved.maxLength < LONGEST_BOUNDARY
      ? [repeatedTo(resolved.maxLength + 1)]
      : [];
  return fc.oneof(
    invalidValue(resolved, context).map(asParameterText),
    fc.constantFrom(...ODD_NUMBER_TEXTS),
    junkString(),
    ...tooLong,
  );
}
