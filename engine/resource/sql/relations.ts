// relations[] of a page or a record, read in the statement of the rows they hang from: each
// relation is a correlated subquery whose JSON PostgreSQL builds (an object or null for
// belongsTo, an array for hasMany and manyToMany), its next level nested inside it, each level
// scoped to the caller like the rows it hangs from and limited to visible columns. One round
// trip, however many relations and levels; the rows come back as the driver reads them.
import type { Caller } from '../../caller.js';
import type { CompiledResource } from '../compiled.js';
import { columnsAt, type RelationTree, type Selection } from '../selection.js';
import { rowFromImage } from './row-image.js';
import { scopeSql } from './scope.js';
import { selectList } from './select.js';
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

/** The alias of a related row inside its relation's subquery (to_json / json_agg of it). */
const ROW = id('@row');

/**
 * `, (…) as "name"` per relation of `tree`, each correlated to the parent row at `parentRef` (its
 * table or alias): the related rows' JSON, their own relations inside. `aliases` numbers the
 * tables of one statement (a resource related to itself must not shadow its parent).
 */
export function relationColumnsSql(sql: SqlText, resource: CompiledResource, caller: Caller, tree: RelationTree, selection: Selection | undefined, parentRef: string, path = '', aliases = { next: 0 }): SqlText {
  for (const [name, below] of tree) {
    const relation = resource.relations.get(name)!;
    const target = relation.target;
    const at = path ? `${path}.${name}` : name;
    const alias = `@r${aliases.next++}`;
    const json = relation.kind === 'belongsTo' ? `to_json(${ROW})` : `coalesce(json_agg(${ROW}), '[]'::json)`;
    sql.sql(`, (select ${json} from (select ${selectList(target, alias, columnsAt(target, selection, at, below))}`);
    relationColumnsSql(sql, target, caller, below, selection, alias, at, aliases);
    sql.sql(` from ${id(target.table)} as ${id(alias)}`);
    if (relation.kind === 'belongsTo') {
      sql.sql(` where ${col(alias, 'id')} = ${col(parentRef, relation.via!)} and `);
    } else if (relation.kind === 'hasMany') {
      sql.sql(` where ${col(alias, relation.via!)} = ${col(parentRef, 'id')} and `);
    } else {
      const t = relation.through!;
      const link = `@t${aliases.next++}`;
      sql.sql(` inner join ${id(t.table)} as ${id(link)} on ${col(link, t.to)} = ${col(alias, 'id')} where ${col(link, t.from)} = ${col(parentRef, 'id')} and `);
    }
    scopeSql(sql, target, caller, alias);
    sql.sql(`) as ${ROW}) as ${id(name)}`);
  }
  return sql;
}

/**
 * The related rows of `rows` made what the driver would have read (their timestamps Dates, as
 * row-image.ts makes them), level by level: the answer is the same as from rows read alone.
 */
export function relatedRowsRead(resource: CompiledResource, rows: Row[], tree: RelationTree): void {
  for (const [name, below] of tree) {
    const target = resource.relations.get(name)!.target;
    const related: Row[] = [];
    for (const row of rows) {
      const value = row[name];
      if (Array.isArray(value)) related.push(...value);
      else if (value) related.push(value);
    }
    for (const row of related) rowFromImage(target, row);
    if (below.size) relatedRowsRead(target, related, below);
  }
}
