// Differences (diff.ts) → the source of a knex migration that removes them, written with the
// project's migration helpers (recordColumns, joinTable, atLeastRule, secondsBetweenColumn) so it
// reads like a hand-written one. Nothing is ever dropped that a definition still needs; a column
// only the database has is left alone. `down` undoes what `up` did, where that can be undone.
import type { Difference, Fix } from './diff.js';
import { tenantWideUniqueName, uniqueWhereNullName } from '../db/migrations.js';
import { fulltextIndexName, trigramIndexName } from '../db/search-indexes.js';
import { tenantWideUniqueColumns } from '../resource/compiled.js';
import { DEFAULT_STRING_LENGTH } from './expected.js';
import type { ExpectedColumn, ExpectedDefault, ExpectedTable, ExpectedType } from './model.js';

export interface GenerateOptions {
  /** Module specifier of the migration helpers, as the migration file imports it. */
  helpers: string;
  /** First comment line, e.g. the migration's name. */
  title: string;
}

const q = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const cols = (columns: string[]) => `[${columns.map(q).join(', ')}]`;

/** A type as SQL (for raw alters). */
function sqlType(type: ExpectedType): string {
  if (type.sql !== 'character varying') return type.sql;
  return `varchar(${type.length ?? type.generateLength ?? DEFAULT_STRING_LENGTH})`;
}

/** A default as SQL, with knex's placeholder character escaped (raw() would read ? as a binding). */
function sqlDefault(d: ExpectedDefault): string {
  const sql = 'expression' in d ? (d.expression === 'now' ? 'CURRENT_TIMESTAMP' : 'gen_random_uuid()') : typeof d.value === 'string' ? `'${d.value.replace(/'/g, "''")}'` : String(d.value);
  return sql.replace(/\?/g, '\\?');
}

function builderType(column: ExpectedColumn): string {
  const { type, name } = column;
  switch (type.sql) {
    case 'character varying':
      return `t.string(${q(name)}, ${type.length ?? type.generateLength ?? DEFAULT_STRING_LENGTH})`;
    case 'text':
      return `t.text(${q(name)})`;
    case 'integer':
      return `t.integer(${q(name)})`;
    case 'double precision':
      return `t.double(${q(name)})`;
    case 'boolean':
      return `t.boolean(${q(name)})`;
    case 'uuid':
      return `t.uuid(${q(name)})`;
    case 'timestamp with time zone':
      return `t.timestamp(${q(name)}, { useTz: true })`;
  }
}

/** One column as a table builder statement (a computed one through secondsBetweenColumn). */
function columnStatement(column: ExpectedColumn): string {
  if (column.secondsBetween) return `secondsBetweenColumn(knex, t, ${q(column.name)}, ${q(column.secondsBetween[0])}, ${q(column.secondsBetween[1])});`;
  let code = builderType(column);
  if (column.nullable === 'no' || (column.nullable === 'either' && column.default)) code += '.notNullable()';
  if (column.default && 'value' in column.default) {
    const value = column.default.value;
    code += `.defaultTo(${typeof value === 'string' ? q(value) : String(value)})`;
  }
  const fk = column.references;
  if (fk) code += `.references(${q(fk.targetColumn)}).inTable(${q(fk.table)}).onDelete(${q(fk.onDelete ?? fk.generateOnDelete)})`;
  return `${code};`;
}

const BASE_COLUMNS = new Set(['id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt']);

function createTable(table: ExpectedTable, uses: Set<string>): string[] {
  if (table.kind === 'join') {
    uses.add('joinTable');
    const [from, to] = table.columns;
    return [`await joinTable(knex, ${q(table.name)}, [${q(from.name)}, ${q(from.references!.table)}], [${q(to.name)}, ${q(to.references!.table)}]);`];
  }
  uses.add('recordColumns');
  const optional = table.columns.some((c) => c.name === 'organizationId' && c.nullable === 'yes');
  const body = [`recordColumns(knex, t, ${q(table.scope!)}${optional ? ', { organizationOptional: true }' : ''});`];
  for (const column of table.columns) {
    if (BASE_COLUMNS.has(column.name)) continue;
    if (column.secondsBetween) uses.add('secondsBetweenColumn');
    body.push(columnStatement(column));
  }
  // Every index written out: the lists' indexes depend on the definition (its sort fields), not
  // only on the scope, so recordColumns cannot make them all.
  for (const index of table.indexes) if (!index.kind) body.push(`t.index(${cols(index.columns)});`);
  for (const unique of table.uniques) {
    if (!unique.whereNull) body.push(`t.unique(${cols(unique.columns)});`);
    else if (unique.whereNull.join() === 'organizationId') {
      uses.add('tenantWideUnique');
      body.push(tenantWideUniqueStatement(table.name, unique.ruleFields ?? unique.columns));
    } else {
      uses.add('uniqueWhereNull');
      body.push(uniqueWhereNullStatement(table.name, unique.columns, unique.whereNull));
    }
  }
  for (const check of table.checks) {
    uses.add('atLeastRule');
    body.push(`atLeastRule(t, ${q(table.name)}, ${q(check.field)}, ${q(check.atLeast)});`);
  }
  const searchIndexes = table.indexes.flatMap((index) => (index.kind ? [searchIndexStatement(table.name, index.kind, index.columns, uses)] : []));
  // Its writes move its change marks, so that its lists keep their totals (engine/db/change-marks.ts).
  uses.add('markChanges');
  return [`await knex.schema.createTable(${q(table.name)}, (t) => {`, ...body.map((l) => `  ${l}`), '});', ...searchIndexes, `await markChanges(knex, ${q(table.name)});`];
}

/** A search index, made with its helper (outside the table builder: both are raw statements). */
function searchIndexStatement(table: string, kind: 'fulltext' | 'trigram', columns: string[], uses: Set<string>): string {
  uses.add(`${kind}Index`);
  return kind === 'fulltext' ? `await fulltextIndex(knex, ${q(table)}, ${cols(columns)});` : `await trigramIndex(knex, ${q(table)}, ${q(columns[0])});`;
}

const tenantWideUniqueStatement = (table: string, fields: string[]) => `tenantWideUnique(knex, t, ${q(table)}, ${cols(fields)});`;
const uniqueWhereNullStatement = (table: string, columns: string[], nulls: string[]) => `uniqueWhereNull(knex, t, ${q(table)}, ${cols(columns)}, ${cols(nulls)});`;

/** Tables to create, each after the tables it points at (when those are created here too). */
function creationOrder(tables: ExpectedTable[]): ExpectedTable[] {
  const pending = new Map(tables.map((t) => [t.name, t]));
  const ordered: ExpectedTable[] = [];
  const visit = (table: ExpectedTable, trail: Set<string>) => {
    if (!pending.has(table.name) || trail.has(table.name)) return;
    trail.add(table.name);
    for (const column of table.columns) {
      const target = column.references && pending.get(column.references.table);
      if (target && target !== table) visit(target, trail);
    }
    if (pending.delete(table.name)) ordered.push(table);
  };
  for (const table of tables) visit(table, new Set());
  return ordered;
}

interface TableChanges {
  /** Statements before the table builder (raw alters, drops of what is replaced). */
  before: string[];
  /** Lines inside `alterTable(name, (t) => { ... })`. */
  builder: string[];
  /** Statements after the builder (search indexes: on columns it may add). */
  after: string[];
  undoBefore: string[];
  undoBuilder: string[];
  /** Undone first (they were made last). */
  undoAfter: string[];
}

function alterations(fix: Exclude<Fix, { kind: 'createTable' }>, changes: TableChanges, uses: Set<string>) {
  const table = q(fix.table);
  switch (fix.kind) {
    case 'addColumn':
      if (fix.column.secondsBetween) uses.add('secondsBetweenColumn');
      changes.builder.push(columnStatement(fix.column));
      changes.undoBuilder.push(`t.dropColumn(${q(fix.column.name)});`);
      return;
    case 'alterType': {
      const type = sqlType(fix.column.type);
      changes.before.push(`await knex.raw(${q(`alter table ?? alter column ?? type ${type} using ??::${type}`)}, [${table}, ${q(fix.column.name)}, ${q(fix.column.name)}]);`);
      changes.undoBefore.push(`await knex.raw(${q(`alter table ?? alter column ?? type ${fix.previous} using ??::${fix.previous}`)}, [${table}, ${q(fix.column.name)}, ${q(fix.column.name)}]);`);
      return;
    }
    case 'setNotNull':
      changes.builder.push(`t.dropNullable(${q(fix.column.name)});`);
      changes.undoBuilder.push(`t.setNullable(${q(fix.column.name)});`);
      return;
    case 'dropNotNull':
      changes.builder.push(`t.setNullable(${q(fix.column.name)});`);
      changes.undoBuilder.push(`t.dropNullable(${q(fix.column.name)});`);
      return;
    case 'setDefault': {
      changes.before.push(`await knex.raw(${q(`alter table ?? alter column ?? set default ${sqlDefault(fix.column.default!)}`)}, [${table}, ${q(fix.column.name)}]);`);
      const undo = fix.previous === null ? 'drop default' : `set default ${fix.previous.replace(/\?/g, '\\?')}`;
      changes.undoBefore.push(`await knex.raw(${q(`alter table ?? alter column ?? ${undo}`)}, [${table}, ${q(fix.column.name)}]);`);
      return;
    }
    case 'makeGenerated':
      uses.add('secondsBetweenColumn');
      // PostgreSQL cannot turn a column into a generated one: drop it and add it again.
      changes.before.push(`await knex.schema.alterTable(${table}, (t) => t.dropColumn(${q(fix.column.name)}));`);
      changes.builder.push(columnStatement(fix.column));
      return;
    case 'dropExpression':
      changes.before.push(`await knex.raw('alter table ?? alter column ?? drop expression', [${table}, ${q(fix.column.name)}]);`);
      return;
    case 'addForeignKey': {
      const fk = fix.foreignKey;
      if (fix.replaces) changes.before.push(`await knex.raw('alter table ?? drop constraint ??', [${table}, ${q(fix.replaces)}]);`);
      changes.builder.push(`t.foreign(${q(fk.column)}).references(${q(fk.targetColumn)}).inTable(${q(fk.table)}).onDelete(${q(fk.onDelete ?? fk.generateOnDelete)});`);
      changes.undoBuilder.push(`t.dropForeign(${q(fk.column)});`);
      return;
    }
    case 'addPrimaryKey':
      if (fix.replaces) changes.before.push(`await knex.raw('alter table ?? drop constraint ??', [${table}, ${q(fix.replaces)}]);`);
      changes.builder.push(`t.primary(${cols(fix.columns)});`);
      changes.undoBuilder.push(`t.dropPrimary();`);
      return;
    case 'addUnique':
      changes.builder.push(`t.unique(${cols(fix.columns)});`);
      changes.undoBuilder.push(`t.dropUnique(${cols(fix.columns)});`);
      return;
    case 'addTenantWideUnique': {
      uses.add('tenantWideUnique');
      changes.builder.push(tenantWideUniqueStatement(fix.table, fix.fields));
      const columns = tenantWideUniqueColumns(true, fix.fields) ?? fix.fields;
      changes.undoBuilder.push(`t.dropIndex([], ${q(tenantWideUniqueName(fix.table, columns))});`);
      return;
    }
    case 'addUniqueWhereNull':
      uses.add('uniqueWhereNull');
      changes.builder.push(uniqueWhereNullStatement(fix.table, fix.columns, fix.whereNull));
      changes.undoBuilder.push(`t.dropIndex([], ${q(uniqueWhereNullName(fix.table, fix.columns, fix.whereNull))});`);
      return;
    case 'dropUnique':
      // Dropped before the new index is made, so that no row is held by both meanwhile.
      changes.before.push(
        fix.constraint
          ? `await knex.raw('alter table ?? drop constraint ??', [${table}, ${q(fix.name)}]);`
          : `await knex.raw('drop index ??', [${q(fix.name)}]);`,
      );
      // Undone, the rule holds over deleted rows again: this fails while a deleted and a live row share values.
      changes.undoBefore.push(`await knex.schema.alterTable(${table}, (t) => t.unique(${cols(fix.columns)}, { indexName: ${q(fix.name)} })); // fails while a deleted row shares these values with a live one: remove it first`);
      return;
    case 'addIndex':
      changes.builder.push(`t.index(${cols(fix.columns)});`);
      changes.undoBuilder.push(`t.dropIndex(${cols(fix.columns)});`);
      return;
    case 'addFulltextIndex':
    case 'addTrigramIndex': {
      const fulltext = fix.kind === 'addFulltextIndex';
      const columns = fulltext ? fix.columns : [fix.column];
      const name = fulltext ? fulltextIndexName(fix.table) : trigramIndexName(fix.table, fix.column);
      uses.add('dropSearchIndex');
      // The fulltext index of other columns under the same name: replaced, and made again by down().
      const previous = fix.kind === 'addFulltextIndex' ? fix.replaces : undefined;
      if (previous) changes.after.push(`await dropSearchIndex(knex, ${q(name)});`);
      changes.after.push(searchIndexStatement(fix.table, fulltext ? 'fulltext' : 'trigram', columns, uses));
      changes.undoAfter.push(`await dropSearchIndex(knex, ${q(name)});`);
      if (previous) changes.undoAfter.push(searchIndexStatement(fix.table, 'fulltext', previous, uses));
      return;
    }
    case 'addCheck': {
      if (fix.replaces) changes.before.push(`await knex.raw('alter table ?? drop constraint ??', [${table}, ${q(fix.replaces)}]);`);
      // atLeastRule's check, written out: in alterTable knex would send its values as parameters,
      // which PostgreSQL does not take in DDL. Identifiers (??) are quoted into the text instead.
      const { name, field, atLeast } = fix.check;
      changes.before.push(
        `await knex.raw('alter table ?? add constraint ?? check (?? is null or ?? is null or ?? >= ??)', [${[fix.table, name, field, atLeast, field, atLeast].map(q).join(', ')}]);`,
      );
      changes.undoBefore.push(`await knex.raw('alter table ?? drop constraint ??', [${table}, ${q(name)}]);`);
      return;
    }
  }
}

const indent = (lines: string[], by = '  ') => lines.map((l) => (l ? by + l : l));

/** The migration's source text; differences that need nothing done give an empty up(). */
export function generateMigration(differences: Difference[], options: GenerateOptions): string {
  const uses = new Set<string>();
  const up: string[] = [];
  const down: string[] = [];
  const created = creationOrder(differences.flatMap((d) => (d.fix.kind === 'createTable' ? [d.fix.table] : [])));
  for (const table of created) {
    up.push(...createTable(table, uses));
    down.unshift(`await knex.schema.dropTableIfExists(${q(table.name)});`);
  }
  const byTable = new Map<string, TableChanges>();
  for (const { fix } of differences) {
    if (fix.kind === 'createTable') continue;
    if (!byTable.has(fix.table)) byTable.set(fix.table, { before: [], builder: [], after: [], undoBefore: [], undoBuilder: [], undoAfter: [] });
    alterations(fix, byTable.get(fix.table)!, uses);
  }
  for (const [table, changes] of byTable) {
    up.push(...changes.before);
    if (changes.builder.length) up.push(`await knex.schema.alterTable(${q(table)}, (t) => {`, ...indent(changes.builder), '});');
    up.push(...changes.after);
    const undo: string[] = [...changes.undoAfter];
    if (changes.undoBuilder.length) undo.push(`await knex.schema.alterTable(${q(table)}, (t) => {`, ...indent(changes.undoBuilder.reverse()), '});');
    undo.push(...changes.undoBefore.reverse());
    down.unshift(...undo);
  }
  const helpers = [...uses].sort();
  return [
    `// ${options.title}: written by \`npm run db:migration\` for these differences between the`,
    '// definitions and the schema the migrations make (read it, and adjust onDelete and lengths',
    '// where the defaults chosen do not fit):',
    ...differences.map((d) => `//   - ${d.message}`),
    "import type { Knex } from 'knex';",
    ...(helpers.length ? [`import { ${helpers.join(', ')} } from ${q(options.helpers)};`] : []),
    '',
    'export async function up(knex: Knex) {',
    ...indent(up),
    '}',
    '',
    'export async function down(knex: Knex) {',
    ...indent(down),
    '}',
    '',
  ].join('\n');
}
