/**
 * Reads the operations out of an OpenAPI 3.1 document: what the fuzzer may send to each one.
 * Nothing here knows this service's routes; every operation in the document is fuzzed.
 */

/** The part of JSON Schema 2020-12 (OpenAPI 3.1's dialect) that the generators understand. */
export interface JsonSchema {
  readonly $ref?: string;
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly allOf?: readonly JsonSchema[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly propertyNames?: JsonSchema;
  readonly maxProperties?: number;
  readonly items?: JsonSchema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
}

export type ParameterLocation = 'path' | 'query' | 'header' | 'cookie';

export interface ParameterSpec {
  readonly name: string;
  readonly in: ParameterLocation;
  readonly required: boolean;
  readonly schema: JsonSchema;
}

export interface BodySpec {
  readonly required: boolean;
  /** Media types the document accepts, each with its schema. */
  readonly media: readonly { readonly type: string; readonly schema: JsonSchema }[];
}

export interface OperationSpec {
  /** `operationId`, or `METHOD /template` when the document gives none. */
  readonly id: string;
  /** Upper case, as sent. */
  readonly method: string;
  readonly pathTemplate: string;
  readonly pathParameters: readonly ParameterSpec[];
  readonly queryParameters: readonly ParameterSpec[];
  readonly headerParameters: readonly ParameterSpec[];
  readonly body: BodySpec | undefined;
  /** Documented response statuses. */
  readonly statuses: readonly number[];
}

interface RawParameter {
  readonly $ref?: string;
  readonly name?: string;
  readonly in?: string;
  readonly required?: boolean;
  readonly schema?: JsonSchema;
}
interface RawOperation {
  readonly operationId?: string;
  readonly parameters?: readonly RawParameter[];
  readonly requestBody?: {
    readonly $ref?: string;
    readonly required?: boolean;
    readonly content?: Readonly<Record<string, { readonly schema?: JsonSchema }>>;
  };
  readonly responses?: Readonly<Record<string, unknown>>;
}
type RawPathItem = Readonly<Record<string, unknown>> & {
  readonly parameters?: readonly RawParameter[];
};

/** An OpenAPI 3.x document, typed only as far as the fuzzer reads it. */
export interface FuzzableDocument {
  readonly paths: Readonly<Record<string, RawPathItem>>;
  readonly components?: Readonly<Record<string, unknown>>;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const LOCATIONS: readonly string[] = ['path', 'query', 'header', 'cookie'];

/** Follows a local `$ref` (`#/components/schemas/Todo`) through the document. */
export function resolveRef<T>(
  document: FuzzableDocument,
  value: T & { readonly $ref?: string },
): T {
  let current: unknown = value;
  for (let hops = 0; hops < 32; hops++) {
    const ref = (current as { $ref?: unknown }).$ref;
    if (typeof ref !== 'string') return current as T;
    if (!ref.startsWith('#/')) throw new Error(`Only local $refs are supported, not ${ref}`);
    current = ref
      .slice(2)
      .split('/')
      .map((token) => token.replaceAll('~1', '/').replaceAll('~0', '~'))
      .reduce<unknown>((node, token) => (node as Record<string, unknown>)[token], document);
    if (current === undefined) throw new Error(`Unresolvable $ref ${ref}`);
  }
  throw new Error('$ref chain too long');
}

function parameterOf(document: FuzzableDocument, raw: RawParameter): ParameterSpec {
  const parameter = resolveRef(document, raw);
  if (parameter.name === undefined || !LOCATIONS.includes(parameter.in ?? '')) {
    throw new Error(`Malformed parameter ${JSON.stringify(parameter)}`);
  }
  return {
    name: parameter.name,
    in: parameter.in as ParameterLocation,
    required: parameter.required === true || parameter.in === 'path',
    schema: parameter.schema ?? {},
  };
}

function bodyOf(document: FuzzableDocument, operation: RawOperation): BodySpec | undefined {
  if (!operation.requestBody) return undefined;
  const body = resolveRef(document, operation.requestBody);
  const media = Object.entries(body.content ?? {}).map(([type, { schema }]) => ({
    type,
    schema: schema ?? {},
  }));
  return { required: body.required === true, media };
}

/**
 * Whether a success of the operation is an endless `text/event-stream`: a request-response
 * fuzzer would wait on it forever. test/events/event-stream.test.ts covers such operations.
 */
function streamsForever(operation: RawOperation): boolean {
  return Object.values(operation.responses ?? {}).some((response) => {
    const content = (response as { content?: Record<string, unknown> }).content ?? {};
    return 'text/event-stream' in content;
  });
}

/**
 * Every operation of the document but endless streams. Path-level parameters are merged into
 * each operation (an operation's own parameter of the same name and location wins), as
 * OpenAPI specifies.
 */
export function operationsOf(document: FuzzableDocument): OperationSpec[] {
  const operations: OperationSpec[] = [];
  for (const [pathTemplate, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const operation = item[method] as RawOperation | undefined;
      if (operation === undefined || streamsForever(operation)) continue;
      const byKey = new Map<string, ParameterSpec>();
      for (const raw of [...(item.parameters ?? []), ...(operation.parameters ?? [])]) {
        const parameter = parameterOf(document, raw);
        byKey.set(`${parameter.in} ${parameter.name.toLowerCase()}`, parameter);
      }
      const parameters = [...byKey.values()];
      const where = (location: ParameterLocation) =>
        parameters.filter((parameter) => parameter.in === location);
      operations.push({
        id: operation.operationId ?? `${method.toUpperCase()} ${pathTemplate}`,
        method: method.toUpperCase(),
        pathTemplate,
        pathParameters: where('path'),
        queryParameters: where('query'),
        headerParameters: where('header'),
        body: bodyOf(document, operation),
        statuses: Object.keys(operation.responses ?? {})
          .map(Number)
          .filter((status) => Number.isInteger(status)),
      });
    }
  }
  if (operations.length === 0) throw new Error('The OpenAPI document has no operations');
  return operations;
}

/**
 * Words the document itself uses: enum members and property names of every schema. Free-text
 * parameters (`status=open,blocked`, `sort=-priority`) only run deep when they are made of
 * these, and the schemas of such parameters say no more than `type: string`.
 */
export function vocabularyOf(document: FuzzableDocument): string[] {
  const words = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) {
      node.forEach(visit);
      return;
    }
    if (typeof node !== 'object' || node === null) return;
    const record = node as Record<string, unknown>;
    if (Array.isArray(record.enum)) {
      for (const member of record.enum) if (typeof member === 'string') words.add(member);
    }
    if (typeof record.properties === 'object' && record.properties !== null) {
      for (const name of Object.keys(record.properties)) words.add(name);
    }
    Object.values(record).forEach(visit);
  };
  visit(document.paths);
  visit(document.components);
  return [...words].filter((word) => word.length > 0 && word.length <= 64).sort();
}
