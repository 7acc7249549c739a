// relations[] of a page or a record: one statement per relation and level, never one per row,
// each scoped to the caller like the rows it hangs from and limited to visible columns. Rows stay
// what the driver returned; each relation becomes a property of its parent rows (an object or
// null for belongsTo, an array for hasMany and manyToMany).
import type { Knex } from 'knex';
import type { Caller } from '../../caller.js';
import type { CompiledRelation, CompiledResource } from '../compiled.js';
import { columnsAt, type RelationTree, type Selection } from '../selection.js';
import { run } from './runner.js';
import { scopeSql, selectList } from './select.js';
import { col, id, SqlText } from './text.js';

type Row = Record<string, any>;
/** user, user.role, organization → {user: {role: {}}, organization: {}}: each relation named once. */
export function relationTree(paths: string[]): RelationTree {
  const tree: RelationTree = new Map();
  for (const path of paths) {
    let node = tree;
    for (const name of path.split('.')) {
      let next = node.get(name);
      if (!next) node.set(name, (next = new Map()));
      node = next;
    }
  }
  return tree;
}

/** Column alias of the parent key a hasMany or manyToMany row is grouped by (no field name can start with @). */
const KEY = '@key';

/** The statement that reads a relation's targets for the given parent keys. */
function relatedStatement(relation: CompiledRelation, caller: Caller, keys: unknown[], columns: readonly string[]) {
  const target = relation.target;
  const table = target.table;
  const sql = new SqlText().sql(`select ${selectList(target, table, columns)}`);
  if (relation.kind === 'belongsTo') {
    sql.sql(` from ${id(table)} where ${col(table, 'id')} = any(`).value(keys).sql(') and ');
  } else if (relation.kind === 'hasMany') {
    sql.sql(`, ${col(table, relation.via!)} as ${id(KEY)} from ${id(table)} where ${col(table, relation.via!)} = any(`).value(keys).sql(') and ');
  } else {
    const t = relation.through!;
    sql.sql(`, ${col(t.table, t.from)} as ${id(KEY)} from ${id(table)} inner join ${id(t.table)} on ${col(t.table, t.to)} = ${col(table, 'id')}`);
    sql.sql(` where ${col(t.table, t.from)} = any(`).value(keys).sql(') and ');
  }
  return scopeSql(sql, target, caller).statement();
}

const distinct = (values: unknown[]) => [...new Set(values.filter((v) => v !== null && v !== undefined))];

/** Loads one relation onto `rows`; resolves to the related rows (for the next level). */
async function loadOne(db: Knex, relation: CompiledRelation, caller: Caller, rows: Row[], columns: readonly string[]): Promise<Row[]> {
  const name = relation.name;
  const keys = distinct(rows.map((row) => (relation.kind === 'belongsTo' ? row[relation.via!] : row.id)));
  const related = keys.length ? await run(db, relatedStatement(relation, caller, keys, columns)) : [];
  if (relation.kind === 'belongsTo') {
    const byId = new Map(related.map((r) => [r.id, r]));
    for (const row of rows) row[name] = byId.get(row[relation.via!]) ?? null;
    return related;
  }
  const groups = new Map<unknown, Row[]>();
  for (const r of related) {
    const key = r[KEY];
    delete r[KEY];
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  for (const row of rows) row[name] = groups.get(row.id) ?? [];
  return related;
}

/**
 * Loads every relation of `tree` onto `rows` (relations of one level side by side, then the next
 * level), each reading the columns `selection` leaves it (all visible ones by default).
 */
export async function loadRelations(db: Knex, resource: CompiledResource, caller: Caller, rows: Row[], tree: RelationTree, selection?: Selection, path = ''): Promise<void> {
  if (!tree.size || !rows.length) return;
  await Promise.all(
    [...tree].map(async ([name, below]) => {
      const relation = resource.relations.get(name)!;
      const at = path ? `${path}.${name}` : name;
      const related = await loadOne(db, relation, caller, rows, columnsAt(relation.target, selection, at, below));
      await loadRelations(db, relation.target, caller, related, below, selection, at);
    }),
  );
}
