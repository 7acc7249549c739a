// Definitions → the schema they need. This is the mapping the migration check (diff.ts) holds the
// migrated database to, and the one a generated migration (generate.ts) writes:
//
//   field type   column                      notes
//   string       varchar(maxLength)          without maxLength: varchar of any length that fits
//                                            the longest enum value, or text (a new column: 255)
//   text         text
//   integer      integer
//   number       double precision
//   boolean      boolean
//   uuid         uuid
//   date         timestamp with time zone    a date-only value is stored as midnight UTC (fields.ts)
//   timestamp    timestamp with time zone
//
//   required: true               → not null
//   optional, writable, no default → nullable (a create that leaves it out must not fail)
//   default: x                   → column default x (not null or not, either is safe)
//   readOnly / hidden / callerDefault → nullability and default not checked: the service or the
//                                  database fills them (a password hash, a serial number)
//   references: r                → foreign key to r's table (id), and an index starting with the column
//   computed: secondsBetween     → a generated column (secondsBetweenColumn in the migration helpers)
//   rules: [{field, atLeast}]    → a check constraint named ruleConstraintName(table, field, atLeast)
//   unique: [{fields}]           → a unique constraint (or unique index) on exactly those columns
//   manyToMany through           → the join table: two uuid columns, not null, each a foreign key
//                                  that cascades, primary key (from, to), an index starting with each
//                                  (the primary key serves one direction, a page's links; the other
//                                  index the other, the records linked to one target)
//   scope: tenant                → id (uuid primary key), tenantId, createdAt, updatedAt
//   changedBy: true              → createdById, updatedById (uuid, nullable)
//   softDelete: true             → deletedAt (timestamp with time zone), deletedById (uuid), both
//                                  nullable; each unique rule is then a unique index over the rows
//                                  where deletedAt is null (uniqueWhereNull in the migration helpers)
//   scope: organization          → the same plus organizationId (not null; nullable with
//                                  organizationOptional, and each unique rule naming it then also
//                                  has a unique index of (tenantId, its other fields) where
//                                  organizationId is null: tenantWideUnique in the migration helpers)
//
// Indexes: a list page must read about as many index entries as it returns, whatever the size of
// the tenant. Every list the engine builds names the tenant and orders by its order fields, then
// id (the tie-break that keeps pages stable), so each index below is (tenantId, field, id): the
// page is the first rows of one index range, read in either direction, with no sort. Without id
// in the index, rows sharing a value (a batch import writes thousands with one createdAt) are
// fetched and sorted as a group before the first one is returned.
//   (tenantId, createdAt, id)     the default list, newest first (organization-scoped resources too:
//                                 they are listed without an organization filter as well)
//   (tenantId, organizationId, createdAt, id)   scope: organization: the default list of one organization
//   (tenantId, id)                order[id], and the export's keyset walk (id > last, by id) of one
//                                 tenant, which the primary key alone serves only by reading every
//                                 other tenant's rows in between
//   (tenantId, f, id)             each field f of sort: and dateRange: (an ordered page, and a date
//                                 range, never sort or scan the tenant)
//   owner: f                      → an index starting with f (the EMPLOYEE role lists only its own:
//                                 one person's records, few enough to sort; f's foreign key index
//                                 usually serves)
//   hasMany via                   → an index starting with the target's via column (not for tenantId
//                                 and organizationId: the lists' indexes lead with them)
// tenantId and organizationId need no index of their own: every query the engine makes names the
// tenant, and the indexes above lead with it. Not indexed on purpose: updatedAt (order[updatedAt]
// sorts the matching rows): every write changes it, and an index on it would make every update
// rewrite every index entry of the row (no HOT update); filters: a filter with an order walks the
// order's index and skips what does not match, and a filter by a foreign key has that key's index.
// Each index costs every insert (and every update of its columns) one B-tree insertion: the set is
// what the lists need, nothing speculative.
//   search: fulltext fields      → a GIN index on their document (fulltextIndex in the migration helpers)
//   search: substring field f    → a GIN trigram index on f (trigramIndex), where pg_trgm is installed:
//                                  without one, ilike '%text%' reads every row of the tenant
//
// Only what the definitions need is checked: other tables (sessions, codes of auth), extra indexes,
// extra unique constraints and extra columns are the migrations' own business (except an extra
// column that is not null without a default: every create would fail on it).
import { ruleConstraintName } from '../db/migrations.js';
import type { CompiledResource, Registry } from '../resource/compiled.js';
import type { FieldDefinition } from '../resource/types.js';
import type { ExpectedColumn, ExpectedIndex, ExpectedTable, ExpectedType, SqlType } from './model.js';

export interface ExpectedOptions {
  /** The table tenantId points at (not a resource: tenants are made by registration). */
  tenantTable: string;
}

/** The default length of a string column without maxLength, in a generated migration. */
export const DEFAULT_STRING_LENGTH = 255;

const SQL_TYPES: Record<FieldDefinition['type'], SqlType> = {
  string: 'character varying',
  text: 'text',
  integer: 'integer',
  number: 'double precision',
  boolean: 'boolean',
  uuid: 'uuid',
  date: 'timestamp with time zone',
  timestamp: 'timestamp with time zone',
};

export function expectedType(def: FieldDefinition): ExpectedType {
  const sql = SQL_TYPES[def.type];
  if (def.type !== 'string') return { sql };
  if (def.maxLength !== undefined) return { sql, length: def.maxLength };
  const longest = Math.max(1, ...(def.enum ?? []).map((v) => v.length));
  return { sql, atLeast: longest, generateLength: Math.max(DEFAULT_STRING_LENGTH, longest) };
}

/** How a type reads in a message: varchar(40), "varchar(16 or more) or text". */
export function describeType(type: ExpectedType): string {
  if (type.sql !== 'character varying') return type.sql;
  if (type.length !== undefined) return `varchar(${type.length})`;
  return `varchar(${type.atLeast} or more) or text`;
}

function fieldColumn(resource: CompiledResource, name: string, def: FieldDefinition, targets: Map<string, string>): ExpectedColumn {
  const filledByService = def.readOnly || def.hidden || def.callerDefault !== undefined || def.computed !== undefined;
  const nullable = def.required ? 'no' : filledByService || def.default !== undefined ? 'either' : 'yes';
  const column: ExpectedColumn = { name, type: expectedType(def), nullable, why: `fields.${name}` };
  if (def.default !== undefined && !def.readOnly && !def.hidden) column.default = { value: def.default };
  const target = def.references ? targets.get(def.references) : undefined;
  if (target) {
    column.references = { column: name, table: target, targetColumn: 'id', generateOnDelete: def.required ? 'RESTRICT' : 'SET NULL' };
  }
  if (def.computed) column.secondsBetween = def.computed.secondsBetween;
  return column;
}

function baseColumns(resource: CompiledResource, options: ExpectedOptions): ExpectedColumn[] {
  const scope = `scope: ${resource.scope}`;
  const uuid: ExpectedType = { sql: 'uuid' };
  const time: ExpectedType = { sql: 'timestamp with time zone' };
  const columns: ExpectedColumn[] = [
    { name: 'id', type: uuid, nullable: 'no', default: { expression: 'uuid' }, why: scope },
    {
      name: 'tenantId',
      type: uuid,
      nullable: 'no',
      references: { column: 'tenantId', table: options.tenantTable, targetColumn: 'id', onDelete: 'CASCADE', generateOnDelete: 'CASCADE' },
      why: scope,
    },
  ];
  if (resource.scope === 'organization' && resource.organizationRoot) {
    columns.push({
      name: 'organizationId',
      type: uuid,
      nullable: resource.organizationOptional ? 'yes' : 'no',
      references: { column: 'organizationId', table: resource.organizationRoot.table, targetColumn: 'id', generateOnDelete: 'RESTRICT' },
      why: scope,
      ...(resource.organizationOptional ? { nullableWhy: 'organizationOptional: a create that names no organization makes a record of none' } : {}),
    });
  }
  columns.push(
    { name: 'createdAt', type: time, nullable: 'no', default: { expression: 'now' }, why: scope },
    { name: 'updatedAt', type: time, nullable: 'no', default: { expression: 'now' }, why: scope },
  );
  // Who changed it (changedBy) and its deletion (softDelete): null until the service sets them.
  if (resource.changedBy) columns.push({ name: 'createdById', type: uuid, nullable: 'yes', why: 'changedBy' }, { name: 'updatedById', type: uuid, nullable: 'yes', why: 'changedBy' });
  if (resource.softDelete) columns.push({ name: 'deletedAt', type: time, nullable: 'yes', why: 'softDelete' }, { name: 'deletedById', type: uuid, nullable: 'yes', why: 'softDelete' });
  return columns;
}

/** The indexes that keep a page of a list O(page) on a huge tenant (see the table at the top). */
function listIndexes(resource: CompiledResource): ExpectedIndex[] {
  const indexes: ExpectedIndex[] = [{ columns: ['tenantId', 'createdAt', 'id'], why: 'the default list (newest first)' }];
  if (resource.scope === 'organization') {
    indexes.push({ columns: ['tenantId', 'organizationId', 'createdAt', 'id'], why: 'the default list of one organization (scope: organization)' });
  }
  indexes.push({ columns: ['tenantId', 'id'], why: 'order[id] and the keyset walk by id of one tenant' });
  const ordered = [...(resource.definition.sort ?? []).map((f) => [f, 'sort']), ...(resource.definition.dateRange ? [[resource.definition.dateRange, 'dateRange']] : [])];
  for (const [field, key] of ordered) {
    const columns = field === 'id' ? ['tenantId', 'id'] : ['tenantId', field, 'id'];
    if (!indexes.some((i) => i.columns.join() === columns.join())) indexes.push({ columns, why: `${key}: ${field} (an ordered page of the tenant)` });
  }
  return indexes;
}

function recordTable(resource: CompiledResource, options: ExpectedOptions, targets: Map<string, string>): ExpectedTable {
  const definition = resource.definition;
  const columns = [
    ...baseColumns(resource, options),
    ...Object.entries(definition.fields).map(([name, def]) => fieldColumn(resource, name, def, targets)),
  ];
  const indexes = listIndexes(resource);
  for (const column of columns) {
    if (column.references && column.name !== 'tenantId' && column.name !== 'organizationId') {
      indexes.push({ columns: [column.name], why: `the foreign key of ${column.why}` });
    }
  }
  if (definition.owner && definition.owner !== 'id' && !indexes.some((i) => !i.kind && i.columns.length === 1 && i.columns[0] === definition.owner)) {
    indexes.push({ columns: [definition.owner], why: 'owner (the owner-scoped role lists only its own)' });
  }
  const { fulltext, substring } = resource.searchModes;
  const live = resource.softDelete ? ['deletedAt'] : undefined;
  if (fulltext.length) indexes.push({ columns: fulltext, kind: 'fulltext', why: `search (fulltext over ${fulltext.join(', ')})` });
  for (const field of substring) indexes.push({ columns: [field], kind: 'trigram', why: `search (substring of ${field})` });
  return {
    name: resource.table,
    origin: `${resource.name} (${resource.file})`,
    kind: 'record',
    scope: resource.scope,
    columns,
    primaryKey: ['id'],
    // A deleted record (softDelete) holds no unique value: a new record may take it.
    uniques: resource.uniqueMessages.flatMap((u, i) => [
      { columns: u.fields, ...(live ? { whereNull: live } : {}), why: `unique[${i}]${live ? ' over the records not deleted (softDelete)' : ''}` },
      ...(u.tenantWide ? [{ columns: u.tenantWide, whereNull: ['organizationId', ...(live ?? [])], ruleFields: u.fields, why: `unique[${i}] over the records of no organization (organizationOptional)` }] : []),
    ]),
    indexes,
    checks: (definition.rules ?? []).map((rule, i) => ({
      name: ruleConstraintName(resource.table, rule.field, rule.atLeast),
      field: rule.field,
      atLeast: rule.atLeast,
      why: `rules[${i}]`,
    })),
  };
}

function joinTable(resource: CompiledResource, relation: string, through: { table: string; from: string; to: string }, target: CompiledResource): ExpectedTable {
  const why = `relations.${relation} of ${resource.name}`;
  const column = (name: string, table: string): ExpectedColumn => ({
    name,
    type: { sql: 'uuid' },
    nullable: 'no',
    references: { column: name, table, targetColumn: 'id', onDelete: 'CASCADE', generateOnDelete: 'CASCADE' },
    why,
  });
  return {
    name: through.table,
    origin: `${why} (${resource.file})`,
    kind: 'join',
    columns: [column(through.from, resource.table), column(through.to, target.table)],
    primaryKey: [through.from, through.to],
    uniques: [],
    indexes: [
      { columns: [through.from], why: `${why}: records of one ${resource.name}` },
      { columns: [through.to], why: `${why}: records of one ${target.name}` },
    ],
    checks: [],
  };
}

/** Every table the registry's definitions need, record tables first (in registry order), then join tables. */
export function expectedSchema(registry: Registry, options: ExpectedOptions): ExpectedTable[] {
  const targets = new Map([...registry.values()].map((r) => [r.name, r.table]));
  const tables = [...registry.values()].map((resource) => recordTable(resource, options, targets));
  const byName = new Map(tables.map((t) => [t.name, t]));
  const joins = new Map<string, ExpectedTable>();
  for (const resource of registry.values()) {
    for (const relation of resource.relations.values()) {
      if (relation.kind === 'hasMany' && relation.via && relation.via !== 'tenantId' && relation.via !== 'organizationId') {
        const holder = byName.get(relation.target.table);
        if (holder && !holder.indexes.some((i) => !i.kind && i.columns[0] === relation.via)) {
          holder.indexes.push({ columns: [relation.via], why: `relations.${relation.name} of ${resource.name} (hasMany via ${relation.via})` });
        }
      }
      if (relation.kind !== 'manyToMany' || !relation.through) continue;
      const table = joinTable(resource, relation.name, relation.through, relation.target);
      const seen = joins.get(table.name);
      // Declared from both sides: one table; its columns are the same two, in either order.
      if (!seen) joins.set(table.name, table);
    }
  }
  return [...tables, ...joins.values()];
}
