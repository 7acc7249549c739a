// A record's version: what its strong ETag carries and what If-Match compares, inside the write's
// own statement. It is made by PostgreSQL from the row's xmin (the transaction that wrote this
// version of the row: any UPDATE changes it, whoever sends it) and from the rows of each writable
// relation (link rows or children: their ids and xmin, so a link added, removed or a child changed
// changes it too, even when written by another client or another resource's route). Hashed, so
// it says nothing of the database's transaction counter.
import type { CompiledRelation, CompiledResource } from '../compiled.js';
import { col, id } from './text.js';

/** The column a statement reads the version into. */
export const VERSION_KEY = '@version';

const versions = new WeakMap<CompiledResource, string>();

/** One writable relation's rows as text, in a stable order ('' when it has none). */
function relationPart(resource: CompiledResource, { name, through, via, target }: CompiledRelation): string {
  const alias = id(`v_${name}`);
  const owner = col(resource.table, 'id');
  if (through) {
    const to = `${alias}.${id(through.to)}`;
    return `coalesce((select string_agg(${to}::text || ':' || ${alias}.xmin::text, ',' order by ${to}, ${alias}.xmin::text) from ${id(through.table)} as ${alias} where ${alias}.${id(through.from)} = ${owner}), '')`;
  }
  const key = `${alias}.${id('id')}`;
  return `coalesce((select string_agg(${key}::text || ':' || ${alias}.xmin::text, ',' order by ${key}) from ${id(target.table)} as ${alias} where ${alias}.${id(via!)} = ${owner}), '')`;
}

/** The version of the row of `resource.table` a statement is on, as SQL (made once per resource). */
export function versionSql(resource: CompiledResource): string {
  let sql = versions.get(resource);
  if (sql === undefined) {
    const parts = [`${id(resource.table)}.xmin::text`];
    for (const relation of resource.writableRelations) if (relation.kind !== 'belongsTo') parts.push(relationPart(resource, relation));
    sql = `md5(${parts.join(` || '|' || `)})`;
    versions.set(resource, sql);
  }
  return sql;
}

/** `, <version> as "@version"`, for a select list or a returning clause. */
export const versionColumn = (resource: CompiledResource) => `, ${versionSql(resource)} as ${id(VERSION_KEY)}`;
