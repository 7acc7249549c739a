// An import file → one create body per row, numbered from 1 (the CSV header is not a row). What
// is wrong with the file as a whole (not CSV, unknown column, too many rows) is a 400 for all of
// it; what is wrong with one cell is that row's problem, reported with the others.
import { parse } from 'csv-parse/sync';
import { badRequest } from '../../../engine/errors.js';
import { shapeProblem } from '../../../engine/http/body.js';
import { isPlainObject } from '../../../engine/objects.js';
import type { CompiledResource } from '../../../engine/resource/compiled.js';
import type { FieldType } from '../../../engine/resource/types.js';
import { restore } from '../exchange.js';
import type { ImportFormat } from './body.js';

export interface ImportRow {
  /** 1-based among the data rows. */
  row: number;
  body: unknown;
  /** Cells that could not be read (a JSON column that is not JSON); the body goes on without them. */
  problems: string[];
}

/**
 * Columns describing where a record lived rather than what it is: an imported row is a new
 * record of the caller's tenant, in the organization a create would choose.
 */
const PLACEMENT = new Set(['id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt']);

/** Fields a file may carry and the import drops: placement, read-only and computed fields. */
export function ignoredFields(resource: CompiledResource): Set<string> {
  const ignored = new Set(PLACEMENT);
  for (const field of resource.fields.values()) if (field.base || !field.writable) ignored.add(field.name);
  return ignored;
}

type Column = { name: string; kind: 'ignored' } | { name: string; kind: 'field'; type: FieldType } | { name: string; kind: 'json' };

/**
 * Every column a CSV of this resource may have: what the export writes (the visible fields), and
 * the writable relations a create takes, as JSON text (tagIds: ["…"], invoiceItems: [{…}]).
 */
export function acceptedColumns(resource: CompiledResource): Map<string, Column> {
  const ignored = ignoredFields(resource);
  const columns = new Map<string, Column>();
  for (const name of resource.visibleColumns) {
    const field = resource.fields.get(name)!;
    columns.set(name, ignored.has(name) ? { name, kind: 'ignored' } : { name, kind: 'field', type: field.definition.type });
  }
  for (const relation of resource.writableRelations) {
    const name = relation.kind === 'manyToMany' ? relation.idsKey! : relation.name;
    columns.set(name, { name, kind: 'json' });
  }
  return columns;
}

export const tooManyRows = (max: number) => badRequest(`the file has more than ${max} rows, the most one import takes (IMPORT_MAX_ROWS)`);

/**
 * JSON in a file is held to UTF-8 text (no lone surrogate escape), not to the body's shape limits;
 * a __proto__ key is an unknown property of its row, like any other.
 */
const ANY_SHAPE = { maxDepth: Infinity, maxArray: Infinity, allowProtoKey: true };

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?\d+(\.\d+)?(e[+-]?\d+)?$/i;

type Cell = { value: unknown } | { problem: string } | undefined;

/**
 * One CSV cell as the create body's value. A value that does not read as its type is passed on
 * as text, so that the resource's own validator words the problem ("x must be an integer number").
 */
function cellValue(column: Column, raw: string): Cell {
  // Empty: the field is absent, so its default (or null) applies as in a create that leaves it out.
  if (raw === '' || column.kind === 'ignored') return undefined;
  const cell = restore(raw);
  if (column.kind === 'json') {
    let value: unknown;
    try {
      value = JSON.parse(cell);
    } catch {
      return { problem: `${column.name} must be JSON text, such as ["…"]` };
    }
    const problem = shapeProblem(value, ANY_SHAPE, column.name);
    return problem ? { problem } : { value };
  }
  switch (column.type) {
    case 'integer':
      return { value: INTEGER.test(cell) ? Number(cell) : cell };
    case 'number':
      return { value: DECIMAL.test(cell) ? Number(cell) : cell };
    case 'boolean':
      return { value: cell === 'true' ? true : cell === 'false' ? false : cell };
    default:
      return { value: cell };
  }
}

function csvProblem(err: any): string {
  const where = typeof err?.lines === 'number' ? ` (line ${err.lines})` : '';
  switch (err?.code) {
    case 'CSV_RECORD_INCONSISTENT_FIELDS_LENGTH':
      return `every row must have as many cells as the header row${where}`;
    case 'CSV_QUOTE_NOT_CLOSED':
      return `a quoted cell is never closed${where}`;
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return `a quoted cell must end at a comma or the end of its line${where}; write a quote inside one as ""`;
    default:
      return `the file is not valid CSV${where}`;
  }
}

function headerColumns(resource: CompiledResource, header: string[]): Column[] {
  const accepted = acceptedColumns(resource);
  const problems: string[] = [];
  const seen = new Set<string>();
  const columns: Column[] = [];
  for (const [i, name] of header.entries()) {
    if (!name) problems.push(`column ${i + 1} of the header row has no name`);
    else if (seen.has(name)) problems.push(`column ${name} appears more than once`);
    else if (!accepted.has(name)) problems.push(`column ${name} is not a column of ${resource.name}; accepted columns: ${[...accepted.keys()].join(', ')}`);
    seen.add(name);
    columns.push(accepted.get(name) ?? { name, kind: 'ignored' });
  }
  if (problems.length) throw badRequest(problems);
  return columns;
}

/** CSV with a header row naming the columns (the export's format). */
export function csvRows(resource: CompiledResource, text: string, maxRows: number): ImportRow[] {
  let records: string[][];
  try {
    // One record past the limit is enough to know it is too many; the rest is not parsed.
    records = parse(text, { bom: true, skip_empty_lines: true, to: maxRows + 2 });
  } catch (err) {
    throw badRequest(csvProblem(err));
  }
  if (!records.length) throw badRequest('the file has no header row');
  const [header, ...data] = records;
  if (data.length > maxRows) throw tooManyRows(maxRows);
  const columns = headerColumns(resource, header);
  return data.map((cells, i) => {
    const body: Record<string, unknown> = {};
    const problems: string[] = [];
    for (const [c, column] of columns.entries()) {
      const cell = cellValue(column, cells[c]);
      if (!cell) continue;
      if ('problem' in cell) problems.push(cell.problem);
      else body[column.name] = cell.value;
    }
    return { row: i + 1, body, problems };
  });
}

/** A JSON array of records, values as the API takes them; the placement and read-only keys are dropped. */
export function jsonRows(resource: CompiledResource, text: string, maxRows: number): ImportRow[] {
  let items: unknown;
  try {
    items = JSON.parse(text);
  } catch {
    throw badRequest('the file is not valid JSON');
  }
  if (!Array.isArray(items)) throw badRequest('a JSON import must be an array of records');
  const problem = shapeProblem(items, ANY_SHAPE, 'the file');
  if (problem) throw badRequest(problem);
  if (items.length > maxRows) throw tooManyRows(maxRows);
  const ignored = ignoredFields(resource);
  return items.map((item, i) => {
    if (!isPlainObject(item)) return { row: i + 1, body: item, problems: ['the row must be an object'] };
    const body = Object.fromEntries(Object.entries(item).filter(([key]) => !ignored.has(key)));
    return { row: i + 1, body, problems: [] };
  });
}

export function importRows(resource: CompiledResource, format: ImportFormat, text: string, maxRows: number): ImportRow[] {
  return format === 'csv' ? csvRows(resource, text, maxRows) : jsonRows(resource, text, maxRows);
}
