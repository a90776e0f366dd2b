import { fieldsJsonOf, type FieldColumns } from './todo-json.js';
import { derivedKeys } from './todo-keys.js';
import type { DerivedColumn, TodoTable } from './todo.table.js';

/** Every column the repository derives from a todo's fields (`DERIVED_COLUMNS`), on each write. */
export function derivedColumns(row: FieldColumns): Pick<TodoTable, DerivedColumn> {
  return { ...derivedKeys(row), fields_json: fieldsJsonOf(row) };
}
