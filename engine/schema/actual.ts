// The migrated schema, read from pg_catalog (the same queries answer on PGlite and PostgreSQL),
// for the tables asked about, in the connection's current schema.
import type { Knex } from 'knex';
import type { ActualConstraint, ActualIndex, ActualTable } from './model.js';
import { rowsOf } from '../db/rows.js';
import { trigramSchema } from '../db/search-indexes.js';

const COLUMNS = `
  select c.relname as "table", a.attname as "name", format_type(a.atttypid, a.atttypmod) as "type",
         a.attnotnull as "notNull", a.attgenerated as "generatedKind", pg_get_expr(d.adbin, d.adrelid) as "default"
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    join pg_namespace n on n.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
   where n.nspname = current_schema() and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped
     and c.relname = any(?)
   order by c.relname, a.attnum`;

// Column lists as JSON: pg returns name[] unparsed, json is read the same by both drivers.
const CONSTRAINTS = `
  select c.relname as "table", con.conname as "name", con.contype as "type",
         (select json_agg(a.attname order by k.i) from unnest(con.conkey) with ordinality k(n, i)
            join pg_attribute a on a.attrelid = con.conrelid and a.attnum = k.n) as "columns",
         f.relname as "refTable",
         (select json_agg(a.attname order by k.i) from unnest(con.confkey) with ordinality k(n, i)
            join pg_attribute a on a.attrelid = con.confrelid and a.attnum = k.n) as "refColumns",
         con.confdeltype as "onDelete", pg_get_constraintdef(con.oid) as "definition"
    from pg_constraint con
    join pg_class c on c.oid = con.conrelid
    join pg_namespace n on n.oid = c.relnamespace
    left join pg_class f on f.oid = con.confrelid
   where n.nspname = current_schema() and c.relname = any(?)
   order by c.relname, con.conname`;

const INDEXES = `
  select t.relname as "table", i.relname as "name", x.indisunique as "unique", am.amname as "method",
         pg_get_indexdef(x.indexrelid) as "definition",
         (select json_agg(o.opcname order by k.i) from unnest(x.indclass::oid[]) with ordinality k(c, i)
            join pg_opclass o on o.oid = k.c) as "opclasses",
         (x.indpred is null and x.indexprs is null) as "plain", pg_get_expr(x.indpred, x.indrelid) as "predicate",
         (select json_agg(a.attname order by k.i) from unnest(x.indkey::int2[]) with ordinality k(n, i)
            join pg_attribute a on a.attrelid = x.indrelid and a.attnum = k.n) as "columns"
    from pg_index x
    join pg_class i on i.oid = x.indexrelid
    join pg_am am on am.oid = i.relam
    join pg_class t on t.oid = x.indrelid
    join pg_namespace n on n.oid = t.relnamespace
   where n.nspname = current_schema() and t.relname = any(?)
   order by t.relname, i.relname`;

const ON_DELETE: Record<string, string> = { a: 'NO ACTION', r: 'RESTRICT', c: 'CASCADE', n: 'SET NULL', d: 'SET DEFAULT' };

const list = (value: unknown): string[] => (typeof value === 'string' ? JSON.parse(value) : (value as string[] | null) ?? []);

/** Whether the database has pg_trgm installed (trigram indexes are expected only then). */
export async function hasTrigram(db: Knex): Promise<boolean> {
  return (await trigramSchema(db)) !== undefined;
}

/** The tables of `names` that exist, by name. */
export async function readSchema(db: Knex, names: string[]): Promise<Map<string, ActualTable>> {
  const tables = new Map<string, ActualTable>();
  const table = (name: string) => tables.get(name)!;
  for (const row of rowsOf(await db.raw(COLUMNS, [names]))) {
    if (!tables.has(row.table)) tables.set(row.table, { name: row.table, columns: new Map(), constraints: [], indexes: [] });
    const generated = row.generatedKind === 's' ? (row.default as string) : null;
    table(row.table).columns.set(row.name, {
      name: row.name,
      type: row.type,
      notNull: row.notNull,
      default: generated ? null : row.default,
      generated,
    });
  }
  for (const row of rowsOf(await db.raw(CONSTRAINTS, [names]))) {
    const constraint: ActualConstraint = {
      name: row.name,
      type: row.type,
      columns: list(row.columns),
      refTable: row.refTable,
      refColumns: list(row.refColumns),
      onDelete: row.type === 'f' ? ON_DELETE[row.onDelete] ?? row.onDelete : null,
      definition: row.definition,
    };
    tables.get(row.table)?.constraints.push(constraint);
  }
  for (const row of rowsOf(await db.raw(INDEXES, [names]))) {
    const index: ActualIndex = {
      name: row.name,
      unique: row.unique,
      method: row.method,
      opclasses: list(row.opclasses),
      definition: row.definition,
      plain: row.plain,
      columns: list(row.columns),
      predicate: row.predicate ?? null,
    };
    tables.get(row.table)?.indexes.push(index);
  }
  return tables;
}
