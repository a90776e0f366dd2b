import fc from 'fast-check';
import { DATE_TEXTS } from './fuzz-values.js';
import type { JsonSchema } from './openapi-operations.js';

/**
 * JSON Schema → fast-check arbitraries of values the schema accepts, biased towards boundaries:
 * exact min/max lengths, min/max numbers, every enum member, formats. Their hostile
 * counterparts are in json-schema-breakers.ts. Neither has to be exact: the properties checked
 * never depend on whether a value was valid.
 */

export interface SchemaContext {
  /** Follows a `$ref` through the document; other schemas come back unchanged. */
  readonly resolve: (schema: JsonSchema) => JsonSchema;
  /** Enum members and property names of the whole document (see `vocabularyOf`). */
  readonly vocabulary: readonly string[];
}

/** Random strings stay short; long ones come only as exact boundary lengths. */
const RANDOM_LENGTH = 40;
/** Longest string built for a length boundary (bodies are limited to 64 KiB anyway). */
export const LONGEST_BOUNDARY = 20_000;
/** Units for boundary strings: Ajv counts code points, so an astral character is one. */
const BOUNDARY_UNITS = ['x', 'é', '😀', ' '] as const;

function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}

/** Cuts or pads (with `x`) a text to a length within [min, max] code points. */
function fitLength(text: string, min: number, max: number): string {
  const points = Array.from(text);
  if (points.length > max) return points.slice(0, max).join('');
  return points.length < min ? text + 'x'.repeat(min - points.length) : text;
}

export function repeatedTo(length: number): fc.Arbitrary<string> {
  return fc.constantFrom(...BOUNDARY_UNITS).map((unit) => unit.repeat(length));
}

/** The JSON types a schema admits; empty when it admits anything. */
export function typesOf(schema: JsonSchema, context: SchemaContext): string[] {
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches)
    return [...new Set(branches.flatMap((branch) => typesOf(context.resolve(branch), context)))];
  if (schema.enum ?? (schema.const !== undefined ? [schema.const] : undefined)) {
    const members = schema.enum ?? [schema.const];
    return [
      ...new Set(
        members.map((member) =>
          member === null ? 'null' : Array.isArray(member) ? 'array' : typeof member,
        ),
      ),
    ];
  }
  if (typeof schema.type === 'string')
    return schema.type === 'integer' ? ['integer'] : [schema.type];
  if (Array.isArray(schema.type)) return [...(schema.type as readonly string[])];
  if (schema.properties) return ['object'];
  return [];
}

/** Words and phrases made of the document's vocabulary, dates and ids. */
function interestingText(context: SchemaContext): fc.Arbitrary<string> {
  const fixed = fc.oneof(fc.constantFrom(...DATE_TEXTS), fc.uuid());
  if (context.vocabulary.length === 0) return fixed;
  const word = fc.constantFrom(...context.vocabulary);
  const signedWord = fc.oneof(
    word,
    word.map((w) => `-${w}`),
  );
  return fc.oneof(
    word,
    signedWord,
    fc.array(signedWord, { minLength: 1, maxLength: 4 }).map((words) => words.join(',')),
    fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' ')),
    fixed,
  );
}

const FORMATS: Readonly<Record<string, fc.Arbitrary<string>>> = {
  uuid: fc.uuid(),
  'date-time': fc
    .tuple(
      fc.date({ min: new Date('1900-01-01Z'), max: new Date('2999-12-31Z'), noInvalidDate: true }),
      fc.constantFrom('Z', '+00:00', '+02:00', '-14:00', '+05:45'),
      fc.boolean(),
    )
    .map(([date, offset, millis]) => {
      const text = date.toISOString().slice(0, millis ? 23 : 19);
      return `${text}${offset}`;
    }),
  date: fc
    .date({ min: new Date('1900-01-01Z'), max: new Date('2999-12-31Z'), noInvalidDate: true })
    .map((date) => date.toISOString().slice(0, 10)),
  uri: fc.webUrl(),
  email: fc.emailAddress(),
};

function validString(schema: JsonSchema, context: SchemaContext): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
  const fits = (text: string) => {
    const length = codePointLength(text);
    return length >= min && length <= max;
  };
  const format = schema.format === undefined ? undefined : FORMATS[schema.format];
  if (format) return format.filter(fits);
  if (schema.pattern !== undefined)
    return fc.stringMatching(new RegExp(schema.pattern)).filter(fits);

  const randomMax = Math.min(max, Math.max(min, RANDOM_LENGTH));
  const boundaries = [min, max].filter((length) => length <= LONGEST_BOUNDARY);
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: randomMax }) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: min, maxLength: randomMax }) },
    { weight: 3, arbitrary: interestingText(context).map((text) => fitLength(text, min, max)) },
    { weight: 1, arbitrary: fc.constantFrom(...boundaries).chain(repeatedTo) },
  );
}

interface NumberRange {
  readonly min: number;
  readonly max: number;
}

export function rangeOf(schema: JsonSchema, integer: boolean): NumberRange {
  const step = integer ? 1 : Number.EPSILON;
  const floor = integer ? Number.MIN_SAFE_INTEGER : -Number.MAX_VALUE;
  const ceiling = integer ? Number.MAX_SAFE_INTEGER : Number.MAX_VALUE;
  return {
    min:
      schema.minimum ??
      (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + step : floor),
    max:
      schema.maximum ??
      (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - step : ceiling),
  };
}

function validNumber(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const { min, max } = rangeOf(schema, integer);
  const inRange = (value: number) => value >= min && value <= max;
  const boundaries = [min, max, 0, 1, -1].filter(inRange);
  const random = integer
    ? fc.bigInt({ min: BigInt(Math.ceil(min)), max: BigInt(Math.floor(max)) }).map(Number)
    : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
  const small = integer
    ? fc.integer({ min: Math.max(min, -1000), max: Math.min(max, 1000) })
    : fc.double({ min: Math.max(min, -1000), max: Math.min(max, 1000), noNaN: true });
  return fc.oneof(random, small, fc.constantFrom(...boundaries));
}

type Member = readonly [string, unknown];

/** Members of an object; each optional one is included with weight `include` against 3. */
function members(
  entries: readonly (readonly [string, fc.Arbitrary<unknown>, boolean])[],
  include: number,
): fc.Arbitrary<Record<string, unknown>> {
  const each = entries.map(([name, arbitrary, required]) => {
    const member = arbitrary.map((value): Member => [name, value]);
    if (required) return member;
    if (include === 0) return fc.constant(undefined);
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant(undefined) },
      { weight: include, arbitrary: member },
    );
  });
  return fc
    .tuple(...each)
    .map((pairs) => Object.fromEntries(pairs.filter((pair) => pair !== undefined)));
}

export function extraMembers(schema: JsonSchema, context: SchemaContext, exactly?: number) {
  const additional = schema.additionalProperties;
  if (typeof additional !== 'object') return fc.constant({});
  const key = schema.propertyNames
    ? validString(context.resolve(schema.propertyNames), context)
    : fc.string();
  const value = validValue(additional, context);
  const count = exactly ?? Math.min(schema.maxProperties ?? 8, 8);
  return fc
    .uniqueArray(fc.tuple(key, value), {
      minLength: exactly ?? 0,
      maxLength: count,
      selector: ([name]) => name,
    })
    .map((pairs) => Object.fromEntries(pairs));
}

export function validObject(
  schema: JsonSchema,
  context: SchemaContext,
): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties ?? {}).map(
    ([name, property]) => [name, validValue(property, context), required.has(name)] as const,
  );
  // Optional members are mostly left out: a body carrying every optional member at once
  // rarely satisfies the rules between them, and would never get past validation.
  const known = fc.oneof(
    { weight: 2, arbitrary: members(entries, 0) },
    { weight: 4, arbitrary: members(entries, 1) },
    { weight: 1, arbitrary: members(entries, 3) },
  );
  const extras =
    schema.maxProperties !== undefined && schema.maxProperties <= 100
      ? fc.oneof(
          { weight: 4, arbitrary: extraMembers(schema, context) },
          { weight: 1, arbitrary: extraMembers(schema, context, schema.maxProperties) },
        )
      : extraMembers(schema, context);
  return fc.tuple(known, extras).map(([own, extra]) => ({ ...extra, ...own }));
}

function validArray(schema: JsonSchema, context: SchemaContext): fc.Arbitrary<unknown[]> {
  const item = validValue(schema.items ?? {}, context);
  const min = schema.minItems ?? 0;
  const max = schema.maxItems ?? 5;
  const random = fc.array(item, { minLength: min, maxLength: Math.min(max, Math.max(min, 5)) });
  if (max > 100) return random;
  return fc.oneof(
    { weight: 4, arbitrary: random },
    { weight: 1, arbitrary: fc.array(item, { minLength: max, maxLength: max }) },
  );
}

function validOfType(
  type: string,
  schema: JsonSchema,
  context: SchemaContext,
): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return validString(schema, context);
    case 'integer':
      return validNumber(schema, true);
    case 'number':
      return validNumber(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array':
      return validArray(schema, context);
    case 'object':
      return validObject(schema, context);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** A value the schema accepts, biased towards boundaries. */
export function validValue(schema: JsonSchema, context: SchemaContext): fc.Arbitrary<unknown> {
  const resolved = context.resolve(schema);
  if (resolved.const !== undefined) return fc.constant(resolved.const);
  if (resolved.enum) return fc.constantFrom(...resolved.enum);
  const branches = resolved.anyOf ?? resolved.oneOf;
  if (branches) return fc.oneof(...branches.map((branch) => validValue(branch, context)));
  if (resolved.allOf) {
    const merged = resolved.allOf.reduce<JsonSchema>(
      (all, part) => ({ ...all, ...context.resolve(part) }),
      {},
    );
    return validValue(merged, context);
  }
  const types = typesOf(resolved, context);
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(...types.map((type) => validOfType(type, resolved, context)));
}

/** How a value travels in a query string, path or header. */
export function asParameterText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Text of a parameter (path, query, header) the schema accepts once coerced. */
export function validParameterText(
  schema: JsonSchema,
  context: SchemaContext,
): fc.Arbitrary<string> {
  return validValue(schema, context).map(asParameterText);
}
