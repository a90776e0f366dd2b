import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { FieldError } from './app-error.js';

// ajv-formats ships CommonJS with a default export that NodeNext sees one level down.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

/**
 * Ajv options that make schemas mean what they say (Fastify's defaults strip unknown fields
 * and coerce types). Bodies are never coerced; query strings, params and headers arrive as text
 * and are coerced, behind a finiteness guard.
 */
const STRICT: Options = {
  allErrors: true,
  coerceTypes: false,
  removeAdditional: false,
  useDefaults: false,
  strict: false,
};

function createAjv(options: Options): Ajv {
  return addFormats(new Ajv(options));
}

const bodyAjv = createAjv(STRICT);
const textAjv = createAjv({ ...STRICT, coerceTypes: true });

/** Plain decimal notation only: no `Infinity`, `NaN`, `1e309`, `0x10` or empty strings. */
const DECIMAL_INTEGER = /^-?(0|[1-9][0-9]{0,14})$/;
const DECIMAL_NUMBER = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?$/;

interface PropertySchema {
  readonly type?: unknown;
}

/**
 * Ajv coerces `"Infinity"` and `"1e309"` into numbers that pass `integer`, `minimum` and
 * `maximum` (ajv#2212). Numeric text parameters must be plain finite decimals before coercion.
 */
function nonDecimalNumbers(
  schema: { readonly properties?: Readonly<Record<string, PropertySchema>> },
  data: unknown,
): ErrorObject[] {
  if (!schema.properties || typeof data !== 'object' || data === null) return [];
  const errors: ErrorObject[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    const value = (data as Record<string, unknown>)[name];
    if (typeof value !== 'string') continue;
    const pattern =
      property.type === 'integer'
        ? DECIMAL_INTEGER
        : property.type === 'number'
          ? DECIMAL_NUMBER
          : undefined;
    if (pattern && !pattern.test(value)) {
      errors.push({
        instancePath: `/${name}`,
        schemaPath: `#/properties/${name}/type`,
        keyword: 'type',
        params: { type: property.type },
        message: `must be a finite ${String(property.type)} in plain decimal notation`,
      });
    }
  }
  return errors;
}

/** Fastify validator compiler: strict for bodies, coercing with a finiteness guard elsewhere. */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return bodyAjv.compile(schema);
  const validate: ValidateFunction = textAjv.compile(schema);
  const guarded = (data: unknown): boolean => {
    const numberErrors = nonDecimalNumbers(schema, data);
    if (numberErrors.length > 0) {
      guarded.errors = numberErrors;
      return false;
    }
    const valid = validate(data);
    guarded.errors = validate.errors ?? null;
    return valid;
  };
  guarded.errors = null as ErrorObject[] | null;
  return guarded;
};

function pointerOf(error: ErrorObject): string {
  if (error.keyword === 'required') {
    return `${error.instancePath}/${(error.params as { missingProperty: string }).missingProperty}`;
  }
  if (error.keyword === 'additionalProperties') {
    return `${error.instancePath}/${(error.params as { additionalProperty: string }).additionalProperty}`;
  }
  return error.instancePath;
}

function detailOf(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known field';
    case 'enum':
      return `must be one of: ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    default:
      return error.message ?? 'is invalid';
  }
}

/**
 * Turns Ajv's errors into one `FieldError` per JSON Pointer. Union failures (`string | null`)
 * collapse into a single "must be string or null" instead of one line per branch, or into nothing
 * when an error inside the value explains them.
 */
export function toFieldErrors(errors: readonly ErrorObject[]): FieldError[] {
  const byPointer = new Map<string, ErrorObject[]>();
  for (const error of errors) {
    const pointer = pointerOf(error);
    byPointer.set(pointer, [...(byPointer.get(pointer) ?? []), error]);
  }
  const fieldErrors: FieldError[] = [];
  for (const [pointer, group] of byPointer) {
    if (group.some((error) => error.keyword === 'anyOf')) {
      // A branch whose type matched reports the real constraint (e.g. maxLength); otherwise
      // the value matched no branch's type.
      const constraints = group.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'type');
      // An error inside the value (`/labels/0` too long) already says why `array | null` failed.
      const explainedWithin = [...byPointer.keys()].some((other) =>
        other.startsWith(`${pointer}/`),
      );
      if (constraints.length === 0 && explainedWithin) continue;
      if (constraints.length === 0) {
        const types = group
          .filter((error) => error.keyword === 'type')
          .map((error) => String((error.params as { type: unknown }).type));
        fieldErrors.push({ pointer, code: 'type', detail: `must be ${types.join(' or ')}` });
        continue;
      }
      group.splice(0, group.length, ...constraints);
    }
    for (const error of group) {
      fieldErrors.push({ pointer, code: error.keyword, detail: detailOf(error) });
    }
  }
  return fieldErrors;
}
