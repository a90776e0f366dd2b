import { describe, expect, it } from 'vitest';
import { ftsQuery } from './todo-search.js';

describe('ftsQuery', () => {
  it.each([
    ['milk', '"milk"*'],
    ['  buy   oat milk ', '"buy"* "oat"* "milk"*'],
    ['Café', '"Café"*'],
    ['cafe\u0301', '"café"*'],
    ['e-mail', '"e mail"*'],
    ['"quoted"', '"quoted"*'],
    ['say "hi there"', '"say"* "hi"* "there"*'],
    ['OR', '"OR"*'],
    ['milk OR bread', '"milk"* "OR"* "bread"*'],
    ['NEAR(a b)', '"NEAR a"* "b"*'],
    ['title:milk', '"title milk"*'],
    ['-milk', '"milk"*'],
    ['milk*', '"milk"*'],
    ['^milk', '"milk"*'],
    ['a\u0000b', '"a b"*'],
    ['日本語', '"日本語"*'],
    ['x2 4711', '"x2"* "4711"*'],
    ['milk -', '"milk"*'],
  ])('turns q=%j into %s', (q, expected) => {
    expect(ftsQuery(q)).toBe(expected);
  });

  it.each(['"', '*', '-', ':', '""', '(* -)', '🥛', '\u0000'])(
    'has no query for %j, which has no letter or digit',
    (q) => {
      expect(ftsQuery(q)).toBeUndefined();
    },
  );
});
