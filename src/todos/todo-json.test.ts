import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { derivedColumns } from './todo-derived.js';
import { listedTodosJson } from './todo-json.js';
import { TODO_PRIORITIES, TODO_STATUSES, TodoSchema } from './todo.schemas.js';
import type { ListedTodoRow, TodoRow } from './todo.table.js';
import { todoRowToTodo } from './todos.service.js';

/** Any text, lone surrogates, quotes, backslashes and control characters included. */
const text = fc.string({ unit: 'binary', maxLength: 40 });
const timestamp = fc
  .date({
    min: new Date('0001-01-01T00:00:00Z'),
    max: new Date('9999-12-31T23:59:59Z'),
    noInvalidDate: true,
  })
  .map((date) => date.toISOString());
const nullable = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: null });

const rowArb: fc.Arbitrary<TodoRow> = fc.record({
  id: fc.uuid(),
  owner_id: text,
  title: text,
  description: nullable(text),
  status: fc.constantFrom(...TODO_STATUSES),
  priority: fc.constantFrom(...TODO_PRIORITIES),
  position: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })),
  labels: fc.array(text, { maxLength: 4 }).map((labels) => JSON.stringify(labels)),
  due_date: nullable(fc.constantFrom('2026-02-28', '0001-01-01')),
  due_at: nullable(timestamp),
  metadata: fc.dictionary(text, text, { maxKeys: 3 }).map((metadata) => JSON.stringify(metadata)),
  version: fc.integer({ min: 1, max: 2 ** 31 - 1 }),
  completed_at: nullable(timestamp),
  created_at: timestamp,
  updated_at: timestamp,
  deleted_at: nullable(timestamp),
});

/** The row as a list reads it: the columns of `LISTED_TODO_COLUMNS`, `fields_json` as written. */
function listed(row: TodoRow): ListedTodoRow {
  return {
    id: row.id,
    fields_json: derivedColumns(row).fields_json,
    version: row.version,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

describe('listedTodosJson', () => {
  it('sends exactly the JSON of the todos todoRowToTodo maps, whatever they hold', () => {
    fc.assert(
      fc.property(rowArb, fc.array(rowArb, { maxLength: 3 }), (first, rest) => {
        const rows = [first, ...rest];
        const baseUrl = 'https://todo.example:8443/"quoted"\\';
        const json = listedTodosJson(rows.map(listed), baseUrl);
        expect(json).toBe(JSON.stringify(rows.map((row) => todoRowToTodo(row, baseUrl))));
      }),
    );
  });

  it('lists the members in the order of the schema', () => {
    const [row] = fc.sample(rowArb, { numRuns: 1, seed: 7 });
    if (!row) throw new Error('no sample');
    const [todo] = JSON.parse(listedTodosJson([listed(row)], 'http://localhost')) as object[];
    expect(Object.keys(todo ?? {})).toEqual(Object.keys(TodoSchema.properties));
  });

  it('is an empty array for no rows', () => {
    expect(listedTodosJson([], 'http://localhost')).toBe('[]');
  });
});
