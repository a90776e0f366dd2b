import fc from 'fast-check';
import { bodyArbitraries } from './body-arbitraries.js';
import { ODD_PATH_SEGMENTS, ODD_QUERY_SUFFIXES, junkString } from './fuzz-values.js';
import { headerArbitraries } from './header-arbitraries.js';
import { invalidParameterText } from './json-schema-breakers.js';
import { validParameterText, type SchemaContext } from './json-schema-arbitraries.js';
import type { OperationSpec, ParameterSpec } from './openapi-operations.js';
import type { ParameterValue, PathValue, RequestPlan } from './request-plan.js';

/**
 * Request plans for each operation of the document. Most requests are valid in every part, so
 * that handlers run deep; the others break one part (path, query, headers, body, method) or all
 * of them at once.
 */

type Arb<T> = fc.Arbitrary<T>;

const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

function learnedOr(name: string, fallback: Arb<string>): Arb<ParameterValue> {
  return fc
    .tuple(fc.nat(31), fallback)
    .map(([pick, text]): ParameterValue => ({ learned: name, pick, fallback: text }));
}

/** Every request arbitrary for one operation. */
export function operationArbitrary(
  operation: OperationSpec,
  context: SchemaContext,
  methodsAtPath: readonly string[],
): Arb<RequestPlan> {
  const validText = (parameter: ParameterSpec) => validParameterText(parameter.schema, context);
  const invalidText = (parameter: ParameterSpec) => invalidParameterText(parameter.schema, context);
  // Values that make another path: `/todos/` is not `/todos/{id}`, and clients resolve `.` and
  // `..` away (raw dot segments are generated on purpose, as such, below).
  const segment = (text: Arb<string>) => text.filter((value) => !['', '.', '..'].includes(value));

  // Path: mostly values learned from responses (ids of todos that exist), else schema values.
  const validPath = fc.record(
    Object.fromEntries(
      operation.pathParameters.map((parameter) => [
        parameter.name,
        fc
          .oneof(
            { weight: 4, arbitrary: learnedOr(parameter.name, segment(validText(parameter))) },
            { weight: 1, arbitrary: segment(validText(parameter)) },
          )
          .map((value): PathValue => ({ value, raw: false })),
      ]),
    ),
  );
  const invalidPath =
    operation.pathParameters.length === 0
      ? validPath
      : fc
          .tuple(
            validPath,
            fc.constantFrom(...operation.pathParameters).chain((parameter) =>
              fc
                .oneof(
                  fc
                    .constantFrom(...ODD_PATH_SEGMENTS)
                    .map(({ text, raw }): PathValue => ({ value: text, raw })),
                  segment(invalidText(parameter)).map((value): PathValue => ({
                    value,
                    raw: false,
                  })),
                  fc.constant<PathValue>({ value: 'a'.repeat(9000), raw: true }),
                )
                .map((value) => [parameter.name, value] as const),
            ),
          )
          .map(([path, [name, value]]) => ({ ...path, [name]: value }));

  // Query: a few documented parameters (each one more makes a valid request rarer), with a
  // schema value or one learned from responses (a cursor from a `Link`, a status).
  const queryEntry = (parameter: ParameterSpec) =>
    fc
      .oneof(
        { weight: 3, arbitrary: validText(parameter) },
        { weight: 1, arbitrary: learnedOr(parameter.name, validText(parameter)) },
      )
      .map((value): [string, ParameterValue] => [parameter.name, value]);
  const requiredQuery = fc.tuple(
    ...operation.queryParameters.filter((parameter) => parameter.required).map(queryEntry),
  );
  const optional = operation.queryParameters.filter((parameter) => !parameter.required);
  const noEntries = fc.constant<[string, ParameterValue][]>([]);
  const optionalQuery: Arb<[string, ParameterValue][]> =
    optional.length === 0
      ? noEntries
      : fc.oneof(
          { weight: 2, arbitrary: noEntries },
          {
            weight: 3,
            arbitrary: fc
              .constantFrom(...optional)
              .chain((parameter) => queryEntry(parameter).map((entry) => [entry])),
          },
          {
            weight: 2,
            arbitrary: fc
              .subarray(optional, { maxLength: Math.min(4, optional.length) })
              .chain((parameters) => fc.tuple(...parameters.map(queryEntry))),
          },
        );
  const validQuery = fc
    .tuple(requiredQuery, optionalQuery)
    .map(([required, chosen]) => [...required, ...chosen]);
  const breakQuery = fc.oneof(
    ...(operation.queryParameters.length > 0
      ? [
          fc
            .constantFrom(...operation.queryParameters)
            .chain((parameter) =>
              invalidText(parameter).map((text) => [parameter.name, text] as const),
            ),
        ]
      : []),
    fc.tuple(fc.constantFrom('unknown', 'Limit', 'STATUS', 'filter[status]', ''), junkString(20)),
  );
  const invalidQuery = fc
    .tuple(validQuery, breakQuery)
    .map(([query, broken]): [string, ParameterValue][] => [...query, [...broken]]);
  const rawQuery = fc.oneof(
    { weight: 6, arbitrary: fc.constant('') },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_QUERY_SUFFIXES) },
  );

  const { validHeaders, invalidHeaders } = headerArbitraries(operation, context);
  const { validBody, invalidBody } = bodyArbitraries(operation, context);

  const planOf = (mutation: string, parts: Arb<PlanParts>, method = operation.method) =>
    parts.map((part): RequestPlan => ({
      operation: operation.id,
      mutation,
      method,
      pathTemplate: operation.pathTemplate,
      ...part,
    }));
  // A GET sometimes follows a `rel="next"` link learned for its path, with its cursor.
  const followLink =
    operation.method === 'GET'
      ? fc.oneof(
          { weight: 2, arbitrary: fc.constant(undefined) },
          { weight: 1, arbitrary: fc.nat(15) },
        )
      : fc.constant(undefined);
  const parts = (overrides: Partial<Record<keyof PlanParts, Arb<unknown>>> = {}): Arb<PlanParts> =>
    fc.record({
      path: validPath,
      query: validQuery,
      rawQuery: fc.constant(''),
      followLink,
      headers: validHeaders,
      body: validBody,
      ...overrides,
    }) as Arb<PlanParts>;

  const wrongMethods = OTHER_METHODS.filter((method) => !methodsAtPath.includes(method));
  return fc.oneof(
    { weight: 8, arbitrary: planOf('none', parts()) },
    ...(operation.pathParameters.length > 0
      ? [{ weight: 1, arbitrary: planOf('path', parts({ path: invalidPath })) }]
      : []),
    {
      weight: 1,
      arbitrary: planOf(
        'query',
        parts({ query: invalidQuery, rawQuery, followLink: fc.constant(undefined) }),
      ),
    },
    { weight: 1, arbitrary: planOf('headers', parts({ headers: invalidHeaders })) },
    { weight: 3, arbitrary: planOf('body', parts({ body: invalidBody })) },
    ...(wrongMethods.length > 0
      ? [
          {
            weight: 1,
            arbitrary: fc
              .constantFrom(...wrongMethods)
              .chain((method) => planOf('method', parts(), method)),
          },
        ]
      : []),
    {
      weight: 1,
      arbitrary: planOf(
        'all',
        parts({
          path: invalidPath,
          query: invalidQuery,
          rawQuery,
          followLink: fc.constant(undefined),
          headers: invalidHeaders,
          body: invalidBody,
        }),
      ),
    },
  );
}

type PlanParts = Pick<
  RequestPlan,
  'path' | 'query' | 'rawQuery' | 'followLink' | 'headers' | 'body'
>;
