// The engine's writes as SQL text, each returning the written record's visible columns. A column
// left out of a row (undefined) is left to its default, as knex would.
import type { Caller } from '../../caller.js';
import type { CompiledResource } from '../compiled.js';
import type { Statement } from './runner.js';
import { scopeSql, selectList } from './select.js';
import { col, id, SqlText } from './text.js';

const returning = (resource: CompiledResource) => ` returning ${selectList(resource)}`;

/** One new row (its tenantId included). */
export function insertStatement(resource: CompiledResource, row: Record<string, unknown>): Statement {
  const columns = Object.keys(row).filter((c) => row[c] !== undefined);
  const sql = new SqlText().sql(`insert into ${id(resource.table)} (${columns.map(id).join(', ')}) values (`);
  columns.forEach((c, i) => {
    if (i) sql.sql(', ');
    sql.value(row[c]);
  });
  return sql.sql(`)${returning(resource)}`).statement();
}

/** The record with this id in the caller's scope gets `row`'s columns and a new updatedAt; no row back when there is none. */
export function updateStatement(resource: CompiledResource, caller: Caller, recordId: string, row: Record<string, unknown>): Statement {
  const table = resource.table;
  const sql = new SqlText().sql(`update ${id(table)} set `);
  for (const c of Object.keys(row)) if (row[c] !== undefined) sql.sql(`${id(c)} = `).value(row[c]).sql(', ');
  sql.sql(`${id('updatedAt')} = CURRENT_TIMESTAMP where ${col(table, 'id')} = `).value(recordId).sql(' and ');
  return scopeSql(sql, resource, caller).sql(returning(resource)).statement();
}

/** Deletes the record with this id in the caller's scope; its id back when there was one. */
export function deleteStatement(resource: CompiledResource, caller: Caller, recordId: string): Statement {
  const table = resource.table;
  const sql = new SqlText().sql(`delete from ${id(table)} where ${col(table, 'id')} = `).value(recordId).sql(' and ');
  return scopeSql(sql, resource, caller).sql(` returning ${col(table, 'id')}`).statement();
}

/** How many of `ids` (distinct) each target has in the caller's scope: one row, a column c0, c1, … per check. */
export function existingCountsStatement(checks: Array<{ target: CompiledResource; ids: string[]; caller: Caller }>): Statement {
  const sql = new SqlText().sql('select ');
  checks.forEach(({ target, ids, caller }, i) => {
    const table = target.table;
    if (i) sql.sql(', ');
    sql.sql(`(select count(*) from ${id(table)} where ${col(table, 'id')} = any(`).value(ids).sql(') and ');
    scopeSql(sql, target, caller).sql(`)::int as ${id(`c${i}`)}`);
  });
  return sql.statement();
}
