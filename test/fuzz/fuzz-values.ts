import fc from 'fast-check';

/**
 * Hand-picked hostile values, the ones random generation rarely hits: number spellings that
 * lenient parsers accept, ids that break routers, JSON texts that break parsers, media types
 * that break content negotiation. Schema-driven generation (json-schema-arbitraries.ts) mixes
 * these in.
 */

/** Numbers as text that are not plain finite decimals, plus edge decimals. */
export const ODD_NUMBER_TEXTS = [
  'Infinity',
  '-Infinity',
  'NaN',
  '1e309',
  '-1e309',
  '1e3',
  '0x10',
  '0b1',
  '0o7',
  '1.5',
  '-1',
  '0',
  '-0',
  '+1',
  ' 1',
  '1 ',
  '１',
  '1_000',
  '99999999999999999999',
  '9007199254740993',
  '-9007199254740993',
  '00',
  '01',
  '1,2',
  '',
  'null',
  'true',
  '[]',
] as const;

/** Numbers that JSON can carry but that break naive arithmetic or storage. */
export const ODD_NUMBERS = [
  0,
  -0,
  1,
  -1,
  0.5,
  Number.MIN_VALUE,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_SAFE_INTEGER - 2,
  2 ** 53,
  -(2 ** 53),
  2 ** 63,
  Number.MAX_VALUE,
  -Number.MAX_VALUE,
  1e21,
] as const;

/** JSON number literals that `JSON.parse` accepts but turns into `Infinity` or `-0`. */
export const OVERFLOWING_NUMBER_LITERALS = ['1e309', '-1e309', '-0', '1E400', '0.0e-999'] as const;

/**
 * Path segments that are not ids. `raw` segments go into the URL as they are (bad escapes,
 * dot segments, encoded slashes); the others are percent-encoded first.
 */
export const ODD_PATH_SEGMENTS: readonly { readonly text: string; readonly raw: boolean }[] = [
  ...[
    '0',
    '-1',
    'null',
    'undefined',
    'NaN',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    'FFFFFFFF-FFFF-7FFF-BFFF-FFFFFFFFFFFF',
    '{00000000-0000-0000-0000-000000000000}',
    '000000000000000000000000000000000000',
    '00000000-0000-0000-0000-0000000000000',
    'a'.repeat(101),
    '😀',
    "' OR 1=1 --",
    '1; DROP TABLE todos',
    '__proto__',
    'constructor',
    ' ',
  ].map((text) => ({ text, raw: false })),
  // No '.': clients resolve it away, leaving an empty segment, which names another path.
  ...['%zz', '%', '%0', '%00', '%C0%AF', '%E2%82', '..', '%2e%2e', 'a%2Fb', '%20'].map((text) => ({
    text,
    raw: true,
  })),
];

/** Query strings appended as they are: repeated, empty, array-style and undecodable parameters. */
export const ODD_QUERY_SUFFIXES = [
  '&',
  '&&',
  '&=',
  '&=x',
  '&x',
  '&x=',
  '&a[b]=1',
  '&a[]=1&a[]=2',
  '&%zz=1',
  '&x=%zz',
  '&x=%',
  '&__proto__=1',
  '&constructor[prototype][polluted]=1',
  '&__proto__[polluted]=1',
  '&q=%00',
  '&limit=1&limit=2',
  '&sort=title&sort=-title',
  '&x=' + 'y'.repeat(9000),
] as const;

/** Bodies that are not JSON, or JSON that a strict parser must refuse. */
export const BAD_JSON_TEXTS = [
  '{',
  '}',
  '{"title":',
  '{"title":"x",}',
  "{'title':'x'}",
  '{title:"x"}',
  '{"title":"x"}{"title":"y"}',
  '{"title":"x"} trailing',
  '[',
  'undefined',
  'NaN',
  '{"title":NaN}',
  '{"title":"\\ud800"}',
  '{"title":"\\u0000"}',
  '{"title":"x","title":"y"}',
  '{"__proto__":{"polluted":1},"title":"x"}',
  '{"constructor":{"prototype":{"polluted":1}},"title":"x"}',
  '{"title":"x","metadata":{"__proto__":"x"}}',
  '\ufeff{"title":"x"}',
  '"\\u0000"',
  `${'['.repeat(40)}${']'.repeat(40)}`,
  `${'{"a":'.repeat(33)}1${'}'.repeat(33)}`,
  '1'.repeat(400),
  '0'.repeat(1000),
] as const;

/** `Content-Type` values for a body: JSON ones, near misses and foreign ones. */
export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8',
  'application/merge-patch+json',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/jsonx',
  'application/problem+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'text/plain',
  'text/json',
  'application/octet-stream',
  '*/*',
  'application',
  ';',
  '',
] as const;

/** `Accept` values: ones that allow JSON, ones that rule it out, and malformed ones. */
export const ACCEPT_VALUES = [
  'application/json',
  'application/problem+json',
  '*/*',
  'application/*',
  'text/html',
  'text/html, application/json;q=0.1',
  'application/json;q=0',
  'application/xml',
  'image/*',
  ';;;',
  'application/json;q=abc',
  '',
] as const;

/** Date and time texts: valid RFC 3339 with odd offsets, and near misses. */
export const DATE_TEXTS = [
  '2026-03-01',
  '2026-03-01T09:30:00Z',
  '2026-03-01T09:30:00.123456789Z',
  '2026-03-01T11:30:00+02:00',
  '2026-03-01T09:30:00-14:00',
  '2026-03-01T09:30:00+14:00',
  '2026-03-01t09:30:00z',
  '2026-03-01 09:30:00Z',
  '1970-01-01T00:00:00Z',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  '2026-02-29',
  '2024-02-29',
  '2026-13-01',
  '2026-12-32',
  '2026-03-01T24:00:00Z',
  '2026-03-01T23:59:60Z',
  '2026-03-01T09:30:00',
  '2026-03-01T09:30:00+24:00',
  '+002026-03-01',
  '-000001-01-01',
  '2026-W09',
  '1772357400',
] as const;

/** Junk text of every kind: lone surrogates, control characters, long runs. */
export function junkString(maxLength = 80): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ unit: 'binary', maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.constantFrom('', ' ', '\u0000', '\ud800', '\u202e', '\u00a0', 'e\u0301', '%s%n', '${x}'),
  );
}

/** Visible ASCII: what an HTTP header or an Idempotency-Key may carry. */
export function visibleAscii(minLength: number, maxLength: number): fc.Arbitrary<string> {
  return fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
    minLength,
    maxLength,
  });
}

/**
 * Header values as an HTTP/1.1 parser can deliver them: any octet but control characters
 * (tab allowed), read as latin1. Anything else never reaches the application.
 */
export function headerJunk(maxLength = 60): fc.Arbitrary<string> {
  return fc.string({
    unit: fc
      .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }))
      .map((code) => String.fromCharCode(code)),
    maxLength,
  });
}
