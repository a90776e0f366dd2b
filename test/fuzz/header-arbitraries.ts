import fc from 'fast-check';
import { ACCEPT_VALUES, headerJunk, visibleAscii } from './fuzz-values.js';
import { invalidParameterText } from './json-schema-breakers.js';
import { validParameterText, type SchemaContext } from './json-schema-arbitraries.js';
import type { OperationSpec } from './openapi-operations.js';
import type { ParameterValue } from './request-plan.js';

/** Request headers for one operation: its documented ones and those any request may carry. */

type Arb<T> = fc.Arbitrary<T>;
type HeaderValues = Readonly<Record<string, { valid: Arb<ParameterValue>; invalid: Arb<string> }>>;

/**
 * What HTTP itself says about some headers, which their schemas (`type: string`) cannot:
 * entity tags, idempotency keys, preferences. Keyed by lower-case name.
 */
const HEADER_KNOWLEDGE: HeaderValues = {
  'if-match': entityTagHeader(),
  'if-none-match': entityTagHeader(),
  'idempotency-key': {
    // A handful of keys, so that replays and reuse with another body actually happen.
    valid: fc.oneof(
      fc.constantFrom('k1', 'k2', '"k3"', 'order-42'),
      visibleAscii(1, 255),
      visibleAscii(255, 255),
    ),
    invalid: fc.oneof(
      fc.constantFrom('', '"', '""', '"a"b"', 'a b', 'é', 'x'.repeat(256)),
      headerJunk(),
    ),
  },
  prefer: {
    valid: fc.constantFrom('count=exact', 'count=EXACT', 'return=minimal', 'count=exact, wait=1'),
    invalid: fc.oneof(fc.constantFrom('count', 'count=', '=exact', ';;,,'), headerJunk()),
  },
};

function entityTagHeader() {
  const current = fc
    .constantFrom('strong' as const, 'weak' as const)
    .map((currentEtag): ParameterValue => ({ currentEtag, fallback: '"1"' }));
  return {
    valid: fc.oneof(
      { weight: 4, arbitrary: current },
      { weight: 1, arbitrary: fc.constantFrom('*', '"1"', '"2", "1"', '"999"') },
    ),
    invalid: fc.oneof(
      fc.constantFrom(
        '',
        '"',
        '""',
        '1',
        'W/',
        '"0"',
        '"-1"',
        '"1.5"',
        '"99999999999999999999"',
        '*, "1"',
      ),
      headerJunk(),
    ),
  };
}

/** Headers any request may carry whether or not an operation documents them. */
const COMMON_HEADERS: HeaderValues = {
  accept: {
    valid: fc.constantFrom('application/json', '*/*', 'application/*', 'application/problem+json'),
    invalid: fc.oneof(fc.constantFrom(...ACCEPT_VALUES), headerJunk()),
  },
  'x-request-id': {
    valid: fc.stringMatching(/^[A-Za-z0-9._:@/+=-]{1,128}$/),
    invalid: fc.oneof(fc.constantFrom('', 'x'.repeat(129), 'a b', '<script>'), headerJunk()),
  },
};

/** An optional header: left out twice as often as it is sent. */
function sometimes<T>(arbitrary: Arb<T>): Arb<T | undefined> {
  return fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary });
}

export function headerArbitraries(operation: OperationSpec, context: SchemaContext) {
  // Headers: documented ones plus the common ones, each sometimes.
  const headerOptions = [
    ...operation.headerParameters.map((parameter) => {
      const known = HEADER_KNOWLEDGE[parameter.name.toLowerCase()];
      return {
        name: parameter.name.toLowerCase(),
        required: parameter.required,
        valid: known
          ? fc.oneof(
              { weight: 3, arbitrary: known.valid },
              { weight: 1, arbitrary: validParameterText(parameter.schema, context) },
            )
          : validParameterText(parameter.schema, context),
        invalid: known
          ? fc.oneof(known.invalid, invalidParameterText(parameter.schema, context))
          : invalidParameterText(parameter.schema, context),
      };
    }),
    ...Object.entries(COMMON_HEADERS).map(([name, { valid, invalid }]) => ({
      name,
      required: false,
      valid,
      invalid,
    })),
  ];
  const validHeaders = fc
    .tuple(
      ...headerOptions.map(({ name, required, valid }) => {
        const entry = valid.map((value) => [name, value] as const);
        return required ? entry : sometimes(entry);
      }),
    )
    .map((entries) => Object.fromEntries(entries.filter((entry) => entry !== undefined)));
  const invalidHeaders = fc
    .tuple(
      validHeaders,
      fc.oneof(
        fc
          .constantFrom(...headerOptions)
          .chain(({ name, invalid }) => invalid.map((value) => [name, value] as const)),
        // Not framing headers (content-length, transfer-encoding): inject bypasses the HTTP
        // parser, which would refuse junk there before the application saw it.
        fc.tuple(fc.constantFrom('x-unknown', 'expect', 'origin', 'cookie'), headerJunk()),
      ),
    )
    .map(([headers, [name, value]]) => ({ ...headers, [name]: value }));

  return { validHeaders, invalidHeaders };
}
