import { describe, expect, it } from 'vitest';
import { AppError } from './app-error.js';
import { MAX_JSON_DEPTH, jsonDepth, parseJsonBody } from './json-body.js';

/** Parses `body` expecting a 400 malformed-json AppError, and returns its detail. */
function rejectionOf(body: Buffer | string): string {
  const buffer = typeof body === 'string' ? Buffer.from(body) : body;
  try {
    parseJsonBody(buffer);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const appError = error as AppError;
    expect(appError.code).toBe('malformed-json');
    expect(appError.status).toBe(400);
    return appError.detail;
  }
  throw new Error(`parseJsonBody accepted ${buffer.toString('hex')}`);
}

function nestedArrays(levels: number): string {
  return '['.repeat(levels) + ']'.repeat(levels);
}

describe('jsonDepth', () => {
  it.each([
    ['', 0],
    ['1', 0],
    ['"text"', 0],
    ['{}', 1],
    ['[]', 1],
    ['[[]]', 2],
    ['[1,[2],[3]]', 2],
    ['{"a":[{}]}', 3],
    ['{"a":{"b":{"c":[1,2,{"d":[]}]}}}', 6],
    ['"[[[{{{"', 0],
    ['["]]]["]', 1],
    ['["\\"[["]', 1],
    ['{"a\\\\":[[]]}', 3],
    ['[["\\\\"],["\\"]"]]', 2],
    [nestedArrays(MAX_JSON_DEPTH), MAX_JSON_DEPTH],
    [nestedArrays(10_000), 10_000],
  ])('counts %j as %i levels', (text, depth) => {
    expect(jsonDepth(text)).toBe(depth);
  });

  it('counts the deepest point, not the last one', () => {
    expect(jsonDepth('[[[[]]],[]]')).toBe(4);
  });
});

describe('parseJsonBody', () => {
  it.each<[string, Buffer, unknown]>([
    ['an empty body', Buffer.alloc(0), undefined],
    ['a whitespace-only body', Buffer.from(' \r\n\t '), undefined],
    ['an object', Buffer.from('{"title":"a","n":1.5}'), { title: 'a', n: 1.5 }],
    ['an array', Buffer.from('[1,"2",null]'), [1, '2', null]],
    ['null', Buffer.from('null'), null],
    ['a string', Buffer.from('"x"'), 'x'],
    ['a number', Buffer.from(' 42 '), 42],
    ['multi-byte UTF-8', Buffer.from('{"title":"café ☕ 𝄞"}'), { title: 'café ☕ 𝄞' }],
    ['a UTF-8 byte order mark', Buffer.from('\uFEFF{"a":1}'), { a: 1 }],
    ['forbidden words as values', Buffer.from('{"a":"__proto__"}'), { a: '__proto__' }],
    [
      'keys that only resemble forbidden ones',
      Buffer.from('{"proto":1,"Constructor":2}'),
      { proto: 1, Constructor: 2 },
    ],
    [
      `${MAX_JSON_DEPTH} levels of nesting`,
      Buffer.from(nestedArrays(MAX_JSON_DEPTH)),
      JSON.parse(nestedArrays(MAX_JSON_DEPTH)) as unknown,
    ],
  ])('parses %s', (_label, body, expected) => {
    expect(parseJsonBody(body)).toEqual(expected);
  });

  it.each<[string, number[]]>([
    ['C3 28 (bad continuation)', [0xc3, 0x28]],
    ['FF', [0xff]],
    ['C0 AF (overlong)', [0xc0, 0xaf]],
    ['ED A0 80 (surrogate)', [0xed, 0xa0, 0x80]],
    ['E2 82 (truncated)', [0xe2, 0x82]],
    ['F5 80 80 80 (beyond U+10FFFF)', [0xf5, 0x80, 0x80, 0x80]],
  ])('rejects invalid UTF-8 %s inside a string', (_label, bytes) => {
    const body = Buffer.concat([Buffer.from('{"title":"'), Buffer.from(bytes), Buffer.from('"}')]);
    expect(rejectionOf(body)).toMatch(/UTF-8/);
  });

  it.each([
    ['one level too deep', nestedArrays(MAX_JSON_DEPTH + 1)],
    [
      'objects one level too deep',
      '{"a":'.repeat(MAX_JSON_DEPTH) + '{}' + '}'.repeat(MAX_JSON_DEPTH),
    ],
    ['100,000 levels deep', nestedArrays(100_000)],
    ['unbalanced and deep', '['.repeat(MAX_JSON_DEPTH + 1)],
  ])('rejects a body %s', (_label, text) => {
    expect(rejectionOf(text)).toContain(`${MAX_JSON_DEPTH} levels`);
  });

  it.each([
    ['__proto__', '{"__proto__":{"x":1}}'],
    ['__proto__', '{"title":"a","metadata":{"__proto__":"x"}}'],
    ['__proto__', '[{"__proto__":{}}]'],
    ['__proto__', '{"\\u005f_proto__":{"x":1}}'],
    ['constructor', '{"constructor":1}'],
    ['prototype', '{"constructor":{"prototype":{"x":1}}}'],
    ['prototype', '{"a":{"prototype":null}}'],
  ])('rejects the key %s in %s', (key, text) => {
    expect(rejectionOf(text)).toContain(`"${key}"`);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it.each(['{', '{"a":1,}', "{'a':1}", 'undefined', 'NaN', 'Infinity', '1 2', '{"a":01}', '"\t"'])(
    'rejects the malformed JSON %j',
    (text) => {
      expect(rejectionOf(text)).toMatch(/^The body is not valid JSON/);
    },
  );

  it('returns plain objects whose prototype is untouched', () => {
    const parsed = parseJsonBody(Buffer.from('{"a":{"b":1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(Object.keys(parsed)).toEqual(['a']);
  });
});
