// Expected schema (expected.ts) against the migrated one (actual.ts): every disagreement as one
// sentence that names the table, the column, what the database has and what the definition needs,
// with the change that would fix it (generate.ts writes those changes as a migration).
import type { Knex } from 'knex';
import type { Registry } from '../resource/compiled.js';
import { hasTrigram, readSchema } from './actual.js';
import { describeType, expectedSchema, type ExpectedOptions } from './expected.js';
import { SEARCH_CONFIGURATION } from '../resource/sql/search.js';
import { fulltextIndexName } from '../db/search-indexes.js';
import type { ActualColumn, ActualIndex, ActualTable, ExpectedIndex, ExpectedCheck, ExpectedColumn, ExpectedDefault, ExpectedForeignKey, ExpectedTable, ExpectedType } from './model.js';

export type Fix =
  | { kind: 'createTable'; table: ExpectedTable }
  | { kind: 'addColumn'; table: string; column: ExpectedColumn }
  | { kind: 'alterType'; table: string; column: ExpectedColumn; previous: string }
  | { kind: 'setNotNull' | 'dropNotNull'; table: string; column: ExpectedColumn }
  | { kind: 'setDefault'; table: string; column: ExpectedColumn; previous: string | null }
  /** A computed field's column made generated again (dropped and added: PostgreSQL cannot alter that). */
  | { kind: 'makeGenerated'; table: string; column: ExpectedColumn }
  | { kind: 'dropExpression'; table: string; column: ExpectedColumn }
  /** `replaces`: a foreign key of the column to drop first (it points elsewhere, or deletes otherwise). */
  | { kind: 'addForeignKey'; table: string; foreignKey: ExpectedForeignKey; replaces?: string }
  | { kind: 'addPrimaryKey'; table: string; columns: string[]; replaces?: string }
  | { kind: 'addUnique'; table: string; columns: string[] }
  /** The unique index of a rule over the records of no organization (tenantWideUnique): `fields` are the rule's. */
  | { kind: 'addTenantWideUnique'; table: string; fields: string[] }
  /** A unique index over the rows where `whereNull` are null (uniqueWhereNull): a softDelete resource's rule. */
  | { kind: 'addUniqueWhereNull'; table: string; columns: string[]; whereNull: string[] }
  /** A unique constraint (`constraint`) or index over all rows, where the rule leaves deleted rows out. */
  | { kind: 'dropUnique'; table: string; columns: string[]; name: string; constraint: boolean }
  | { kind: 'addIndex'; table: string; columns: string[] }
  /** The GIN index of the fulltext search document of `columns` (fulltextIndex). */
  | { kind: 'addFulltextIndex'; table: string; columns: string[]; replaces?: string[] }
  /** A GIN trigram index of a substring search field (trigramIndex). */
  | { kind: 'addTrigramIndex'; table: string; column: string }
  | { kind: 'addCheck'; table: string; check: ExpectedCheck; replaces?: string };

export interface Difference {
  table: string;
  /** One sentence: `employee.firstName is nullable; fields.firstName is required (not null)`. */
  message: string;
  fix: Fix;
}

const list = (columns: string[]) => `(${columns.join(', ')})`;
/** SQL text names a column: quoted ("startedAt") or, when it needs no quotes, bare (start). */
const mentions = (sql: string, column: string) =>
  sql.includes(`"${column}"`) || new RegExp(`(^|[^A-Za-z0-9_"])${column.replace(/[^A-Za-z0-9_]/g, '')}([^A-Za-z0-9_"]|$)`).test(sql);
const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((c) => b.includes(c));

function typeMatches(expected: ExpectedType, actual: string): boolean {
  if (expected.sql !== 'character varying') return actual === expected.sql;
  if (actual === 'text') return expected.length === undefined;
  const length = /^character varying\((\d+)\)$/.exec(actual);
  if (!length) return false;
  return expected.length !== undefined ? Number(length[1]) === expected.length : Number(length[1]) >= expected.atLeast!;
}

/** A column default as a value: casts and quotes removed ('x'::character varying → x). */
function literalOf(sql: string): string {
  let text = sql.trim();
  for (let cast = /^(.*)::[a-z ]+(\(\d+\))?$/s.exec(text); cast; cast = /^(.*)::[a-z ]+(\(\d+\))?$/s.exec(text)) text = cast[1].trim();
  while (text.startsWith('(') && text.endsWith(')')) text = text.slice(1, -1).trim();
  if (text.startsWith("'") && text.endsWith("'")) return text.slice(1, -1).replace(/''/g, "'");
  return text;
}

function defaultMatches(expected: ExpectedDefault, actual: string | null): boolean {
  if (actual === null) return false;
  if ('expression' in expected) {
    const text = actual.toLowerCase();
    return expected.expression === 'now' ? text === 'now()' || text === 'current_timestamp' : /^(gen_random_uuid|uuid_generate_v4)\(\)$/.test(text);
  }
  const value = literalOf(actual);
  return typeof expected.value === 'number' ? Number(value) === expected.value : value === String(expected.value);
}

export const describeDefault = (d: ExpectedDefault) =>
  'expression' in d ? (d.expression === 'now' ? 'now()' : 'gen_random_uuid()') : JSON.stringify(d.value);

function columnDifferences(table: ExpectedTable, expected: ExpectedColumn, actual: ActualColumn): Difference[] {
  const at = `${table.name}.${expected.name}`;
  const out: Difference[] = [];
  const add = (message: string, fix: Fix) => out.push({ table: table.name, message: `${at} ${message}`, fix });
  if (!typeMatches(expected.type, actual.type)) {
    add(`is ${actual.type}; ${expected.why} needs ${describeType(expected.type)}`, { kind: 'alterType', table: table.name, column: expected, previous: actual.type });
  }
  if (expected.secondsBetween) {
    const [start, end] = expected.secondsBetween;
    if (!actual.generated) {
      add(`is a plain column; ${expected.why} is computed (secondsBetween ${start} and ${end}): a generated column`, { kind: 'makeGenerated', table: table.name, column: expected });
    } else if (!mentions(actual.generated, start) || !mentions(actual.generated, end)) {
      add(`is generated as ${actual.generated}; ${expected.why} is secondsBetween ${start} and ${end}`, { kind: 'makeGenerated', table: table.name, column: expected });
    }
    return out;
  }
  if (actual.generated) {
    add(`is generated by the database as ${actual.generated.replace(/^\((.*)\)$/s, '$1')}; ${expected.why} is not computed, so clients write it`, { kind: 'dropExpression', table: table.name, column: expected });
  }
  if (expected.nullable === 'no' && !actual.notNull) {
    add(`is nullable; ${expected.why} needs not null`, { kind: 'setNotNull', table: table.name, column: expected });
  }
  if (expected.nullable === 'yes' && actual.notNull) {
    const why = expected.nullableWhy ?? `${expected.why} is optional without a default, so a create that leaves it out would fail`;
    add(`is not null; ${why}: it must be nullable`, { kind: 'dropNotNull', table: table.name, column: expected });
  }
  if (expected.default && !defaultMatches(expected.default, actual.default)) {
    const has = actual.default === null ? 'has no default' : `defaults to ${actual.default}`;
    add(`${has}; ${expected.why} needs the default ${describeDefault(expected.default)}`, { kind: 'setDefault', table: table.name, column: expected, previous: actual.default });
  }
  return out;
}

function foreignKeyDifference(table: ExpectedTable, fk: ExpectedForeignKey, actual: ActualTable): Difference | undefined {
  const found = actual.constraints.filter((c) => c.type === 'f' && c.columns.length === 1 && c.columns[0] === fk.column);
  const right = found.find((c) => c.refTable === fk.table && c.refColumns.length === 1 && c.refColumns[0] === fk.targetColumn);
  const at = `${table.name}.${fk.column}`;
  if (!right) {
    const elsewhere = found.length ? ` (it points at ${found.map((c) => `${c.refTable}${list(c.refColumns)}`).join(', ')})` : '';
    const fix: Fix = { kind: 'addForeignKey', table: table.name, foreignKey: fk, replaces: found[0]?.name };
    return { table: table.name, message: `${at} has no foreign key to ${fk.table}(${fk.targetColumn})${elsewhere}`, fix };
  }
  if (fk.onDelete && right.onDelete !== fk.onDelete) {
    return {
      table: table.name,
      message: `${at}'s foreign key to ${fk.table} is ON DELETE ${right.onDelete}; it must be ON DELETE ${fk.onDelete}`,
      fix: { kind: 'addForeignKey', table: table.name, foreignKey: fk, replaces: right.name },
    };
  }
  return undefined;
}

/** A partial index's condition is exactly "column IS NULL" (pg_get_expr writes it in parentheses). */
/** Whether a partial index's condition is `<each of columns> is null`, ANDed, in any order. */
function isNullTest(predicate: string, columns: string[]): boolean {
  const unwrap = (text: string) => text.trim().replace(/^\((.*)\)$/s, '$1').trim();
  const parts = unwrap(predicate).split(/\s+and\s+/i).map(unwrap);
  const named = parts.map((part) => /^"?([^"]+)"? is null$/i.exec(part)?.[1]);
  return named.every((name) => name !== undefined) && sameSet(named as string[], columns);
}

/**
 * A unique constraint (or index) over every row where the rule must hold over the rows not deleted
 * only: it would refuse a new record the value of a deleted one. Each is a difference, to drop.
 */
function wholeTableUniques(table: string, columns: string[], nulls: string[], actual: ActualTable): Difference[] {
  if (!nulls.includes('deletedAt')) return [];
  const constraints = actual.constraints.filter((c) => c.type === 'u' && sameSet(c.columns, columns));
  // Also the index over the rows of no organization (tenantWideUnique) made before softDelete.
  const others = nulls.filter((c) => c !== 'deletedAt');
  const before = (i: ActualIndex) => (i.plain ? !others.length : others.length > 0 && i.predicate !== null && isNullTest(i.predicate, others));
  const indexes = actual.indexes.filter((i) => i.unique && sameSet(i.columns, columns) && before(i) && !constraints.some((c) => c.name === i.name));
  return [...constraints.map((c) => ({ name: c.name, constraint: true })), ...indexes.map((i) => ({ name: i.name, constraint: false }))].map(({ name, constraint }) => ({
    table,
    message: `${table} has the unique ${constraint ? 'constraint' : 'index'} ${name} on ${list(columns)} over deleted records too; softDelete needs it over the records not deleted only`,
    fix: { kind: 'dropUnique', table, columns, name, constraint },
  }));
}

function checkMatches(check: ExpectedCheck, actual: ActualTable): 'ok' | 'missing' | 'other' {
  const found = actual.constraints.find((c) => c.type === 'c' && c.name === check.name);
  if (!found) return 'missing';
  return mentions(found.definition, check.field) && mentions(found.definition, check.atLeast) && found.definition.includes('>=') ? 'ok' : 'other';
}

/**
 * Whether an index of the database serves an expected one. A fulltext document is recognised by its
 * configuration and the columns it names, in order, as pg_get_indexdef writes it.
 */
function serves(index: ActualIndex, expected: ExpectedIndex): boolean {
  if (expected.kind === 'trigram') return index.method === 'gin' && index.columns[0] === expected.columns[0] && index.opclasses[0] === 'gin_trgm_ops';
  if (expected.kind === 'fulltext') {
    return index.method === 'gin' && index.definition.includes(`to_tsvector('${SEARCH_CONFIGURATION}'::regconfig`) && columnsNamed(index.definition).join() === expected.columns.join();
  }
  return index.method === 'btree' && index.plain && expected.columns.every((c, n) => index.columns[n] === c);
}

/** The columns an index definition's key names, in order: quoted or bare names, without literals, casts and functions. */
function columnsNamed(definition: string): string[] {
  const key = definition
    .slice(definition.indexOf(' USING ') + 7)
    .replace(/^\w+ /, '')
    .replace(/'(?:[^']|'')*'/g, '')
    .replace(/::[a-z]+(?: [a-z]+)*/g, '');
  return [...key.matchAll(/"((?:[^"]|"")+)"|\b([a-z_][a-z0-9_$]*)\b(?!\s*\()/g)].map((m) => m[1]?.replaceAll('""', '"') ?? m[2]);
}

function indexDifference(table: ExpectedTable, index: ExpectedIndex, actual: ActualTable): Difference {
  if (index.kind === 'fulltext') {
    // The index of this name serves other columns (a fulltext field added or removed): it is replaced.
    const named = actual.indexes.find((i) => i.name === fulltextIndexName(table.name));
    const replaces = named ? columnsNamed(named.definition) : undefined;
    const message = named
      ? `${table.name}'s fulltext search index ${named.name} is on ${list(replaces!)}; ${index.why} needs it on ${list(index.columns)}`
      : `${table.name} has no fulltext search index on ${list(index.columns)}; ${index.why} needs one`;
    return { table: table.name, message, fix: { kind: 'addFulltextIndex', table: table.name, columns: index.columns, ...(replaces ? { replaces } : {}) } };
  }
  if (index.kind === 'trigram') {
    return { table: table.name, message: `${table.name} has no trigram index on ${index.columns[0]}; ${index.why} needs one`, fix: { kind: 'addTrigramIndex', table: table.name, column: index.columns[0] } };
  }
  return { table: table.name, message: `${table.name} has no index starting with ${list(index.columns)}; ${index.why} needs one`, fix: { kind: 'addIndex', table: table.name, columns: index.columns } };
}

/** `trigram`: pg_trgm is installed, so substring search fields need their trigram indexes. */
function tableDifferences(table: ExpectedTable, actual: ActualTable | undefined, trigram: boolean): Difference[] {
  if (!actual) {
    return [{ table: table.name, message: `table ${table.name} is missing; ${table.origin} needs it`, fix: { kind: 'createTable', table } }];
  }
  const out: Difference[] = [];
  const missingColumns = new Set<string>();
  for (const column of table.columns) {
    const found = actual.columns.get(column.name);
    if (!found) {
      missingColumns.add(column.name);
      out.push({ table: table.name, message: `${table.name}.${column.name} is missing; ${column.why} needs ${describeType(column.type)}`, fix: { kind: 'addColumn', table: table.name, column } });
      continue;
    }
    out.push(...columnDifferences(table, column, found));
  }
  // A column no field names is the migration's own business, unless every create would fail on it.
  for (const column of actual.columns.values()) {
    if (table.columns.some((c) => c.name === column.name) || !column.notNull || column.default !== null || column.generated) continue;
    out.push({
      table: table.name,
      message: `${table.name}.${column.name} is not null without a default, and no field of ${table.origin} sets it: every create would fail`,
      fix: { kind: 'dropNotNull', table: table.name, column: { name: column.name, type: { sql: 'text' }, nullable: 'yes', why: 'no field' } },
    });
  }
  // A missing column is added with its foreign key: one difference, not two.
  for (const column of table.columns) {
    if (!column.references || missingColumns.has(column.name)) continue;
    const difference = foreignKeyDifference(table, column.references, actual);
    if (difference) out.push(difference);
  }
  const primary = actual.constraints.find((c) => c.type === 'p');
  if (!primary || !sameSet(primary.columns, table.primaryKey)) {
    const has = primary ? `has the primary key ${list(primary.columns)}` : 'has no primary key';
    out.push({ table: table.name, message: `${table.name} ${has}; it needs ${list(table.primaryKey)}`, fix: { kind: 'addPrimaryKey', table: table.name, columns: table.primaryKey, replaces: primary?.name } });
  }
  const uniqueSets = [
    ...actual.constraints.filter((c) => c.type === 'u' || c.type === 'p').map((c) => c.columns),
    ...actual.indexes.filter((i) => i.unique && i.plain).map((i) => i.columns),
  ];
  for (const unique of table.uniques) {
    if (unique.whereNull) {
      const nulls = unique.whereNull;
      out.push(...wholeTableUniques(table.name, unique.columns, nulls, actual));
      const partial = actual.indexes.some((i) => i.unique && i.predicate && sameSet(i.columns, unique.columns) && isNullTest(i.predicate, nulls));
      if (partial) continue;
      const tenantWide = nulls.length === 1 && nulls[0] === 'organizationId';
      out.push({
        table: table.name,
        message: `${table.name} has no unique index on ${list(unique.columns)} where ${nulls.join(' and ')} ${nulls.length > 1 ? 'are' : 'is'} null; ${unique.why} needs one`,
        fix: tenantWide
          ? { kind: 'addTenantWideUnique', table: table.name, fields: unique.ruleFields ?? unique.columns }
          : { kind: 'addUniqueWhereNull', table: table.name, columns: unique.columns, whereNull: nulls },
      });
      continue;
    }
    if (uniqueSets.some((columns) => sameSet(columns, unique.columns))) continue;
    out.push({ table: table.name, message: `${table.name} has no unique constraint on ${list(unique.columns)}; ${unique.why} needs one`, fix: { kind: 'addUnique', table: table.name, columns: unique.columns } });
  }
  for (const index of table.indexes) {
    if (index.kind === 'trigram' && !trigram) continue;
    if (!actual.indexes.some((i) => serves(i, index))) out.push(indexDifference(table, index, actual));
  }
  for (const check of table.checks) {
    const state = checkMatches(check, actual);
    if (state === 'ok') continue;
    const message =
      state === 'missing'
        ? `${table.name} has no check constraint ${check.name}; ${check.why} (${check.field} at least ${check.atLeast}) needs it`
        : `${table.name}'s check constraint ${check.name} does not test ${check.field} >= ${check.atLeast}; ${check.why} needs that`;
    out.push({ table: table.name, message, fix: { kind: 'addCheck', table: table.name, check, replaces: state === 'other' ? check.name : undefined } });
  }
  return out;
}

/** Differences between the expected tables and the database, table by table in the given order. */
export async function diffTables(db: Knex, tables: ExpectedTable[]): Promise<Difference[]> {
  const actual = await readSchema(db, tables.map((t) => t.name));
  const trigram = await hasTrigram(db);
  return tables.flatMap((table) => tableDifferences(table, actual.get(table.name), trigram));
}

/** Differences between what the registry's definitions need and the database. */
export async function diffSchema(db: Knex, registry: Registry, options: ExpectedOptions): Promise<Difference[]> {
  return diffTables(db, expectedSchema(registry, options));
}
