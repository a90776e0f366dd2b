/**
 * `.env.example` is documentation of `SETTINGS`: the same variables, in the same order, each
 * under its `doc` and set to its default (commented out when there is none). This test keeps
 * the two from drifting apart.
 */
import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig, SETTINGS } from './config.js';

interface Entry {
  readonly name: string;
  /** The value after `=`; for a commented-out `# NAME=` line, whatever follows it. */
  readonly value: string;
  /** False for `# NAME=`: the variable is documented but left unset. */
  readonly active: boolean;
  /** The `#` comment lines directly above the entry, joined by spaces. */
  readonly doc: string;
}

const EXAMPLE_PATH = new URL('../.env.example', import.meta.url);
const NAME = '[A-Z][A-Z0-9_]*';

/** Reads the file line by line; a blank line ends a comment block. Fails on any other line. */
function parseExample(text: string): Entry[] {
  const entries: Entry[] = [];
  let comments: string[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const active = new RegExp(`^(${NAME})=(.*)$`).exec(line);
    const inactive = new RegExp(`^#\\s*(${NAME})=(.*)$`).exec(line);
    const match = active ?? inactive;
    if (match) {
      entries.push({
        name: match[1] ?? '',
        value: match[2] ?? '',
        active: active !== null,
        doc: comments.join(' '),
      });
      comments = [];
    } else if (line.trim() === '') {
      comments = [];
    } else if (line.startsWith('#')) {
      comments.push(line.replace(/^#\s?/, ''));
    } else {
      throw new Error(
        `.env.example line ${index + 1} is neither a comment nor NAME=value: ${line}`,
      );
    }
  }
  return entries;
}

const text = readFileSync(EXAMPLE_PATH, 'utf8');
const entries = parseExample(text);
const settings = Object.entries(SETTINGS);

describe('.env.example', () => {
  it('lists exactly the variables of SETTINGS, once each, in the same order', () => {
    expect(entries.map((entry) => entry.name)).toEqual(Object.keys(SETTINGS));
  });

  it.each(settings)('documents %s with its doc line directly above it', (name, setting) => {
    const entry = entries.find((candidate) => candidate.name === name);
    expect(entry?.doc).toBe(setting.doc);
  });

  it.each(settings)('gives %s its default, or leaves it commented out without one', (name) => {
    const entry = entries.find((candidate) => candidate.name === name);
    const fallback: string | undefined = SETTINGS[name as keyof typeof SETTINGS].default;
    if (fallback === undefined) {
      expect(entry).toMatchObject({ active: false, value: '' });
    } else {
      expect(entry).toMatchObject({ active: true, value: fallback });
    }
  });

  it("reads the same through Node's own env-file parser, and configures like an empty environment", () => {
    const active = Object.fromEntries(
      entries.filter((entry) => entry.active).map((entry) => [entry.name, entry.value]),
    );
    const parsed = parseEnv(text);
    expect(parsed).toEqual(active);
    expect(loadConfig(parsed)).toEqual(loadConfig({}));
  });
});
