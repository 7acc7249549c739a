// The engine's writes as SQL text, each returning the written record's visible columns. A column
// left out of a row (undefined) is left to its default, as knex would.
import type { Caller } from '../../caller.js';
import type { CompiledResource } from '../compiled.js';
import type { Statement } from './runner.js';
import { selectList } from './select.js';
import { scopeSql, writeScopeSql } from './scope.js';
import { col, id, SqlText } from './text.js';
import { versionColumn, versionSql } from './version.js';
import { DELETED_AT, DELETED_BY, UPDATED_BY } from '../soft-delete.js';

/** The written record's visible columns and its new version (version.ts). */
const returning = (resource: CompiledResource) => ` returning ${selectList(resource)}${versionColumn(resource)}`;

/**
 * ` and <version> = any(…)`: If-Match's versions, checked by the write's own statement, so of two
 * writers holding one version exactly one changes the row (the second, waiting on the row's lock,
 * finds it at a version it does not name). Nothing is added without them.
 */
function versionCondition(sql: SqlText, resource: CompiledResource, versions: readonly string[] | undefined): SqlText {
  return versions ? sql.sql(` and ${versionSql(resource)} = any(`).value(versions).sql(')') : sql;
}

/**
 * A write of a resource whose records are a parent's writable children (parentTouches) opens a
 * `with "written" as (…)`; touchParents closes it, touching each parent of the written rows in the
 * same statement, so the parent's version moves with its children.
 */
function openWrite(resource: CompiledResource): SqlText {
  return new SqlText().sql(resource.parentTouches.length ? 'with "written" as (' : '');
}

function touchParents(sql: SqlText, resource: CompiledResource, userId: string, before?: string): Statement {
  if (!resource.parentTouches.length) return sql.statement();
  touchWritten(sql.sql(')'), resource, userId, before);
  return sql.sql(' select * from "written"').statement();
}

/**
 * The CTEs touching each parent of the rows of an open `"written"` CTE (none without parents).
 * `before`: a CTE holding the written rows as they were (an update), whose parents are touched
 * too: a child moved to another parent changes the one it left as well.
 */
function touchWritten(sql: SqlText, resource: CompiledResource, userId: string, before?: string): void {
  resource.parentTouches.forEach(({ parent, via }, i) => {
    const table = id(parent.table);
    sql.sql(`, ${id(`touched${i}`)} as (update ${table} set ${id('updatedAt')} = CURRENT_TIMESTAMP`);
    // Changing a child changes its parent: the caller is the parent's last changer too.
    if (parent.changedBy) sql.sql(`, ${id(UPDATED_BY)} = `).value(userId);
    const parents = `select "written".${id(via)}, "written".${id('tenantId')} from "written"`;
    const left = before ? ` union select ${before}.${id(via)}, ${before}.${id('tenantId')} from ${before} join "written" on "written".${id('id')} = ${before}.${id('id')}` : '';
    sql.sql(` where (${table}.${id('id')}, ${table}.${id('tenantId')}) in (${parents}${left}))`);
  });
}

/**
 * What a create's own statement writes of its idempotency key (engine/idempotency/keyed-create.ts,
 * database-store.ts),
 * so that the record and its key commit together: `claim` opens the statement's CTEs with one
 * deciding whether the key is free, `free` is the condition the insert takes from it, and `keep`
 * adds the CTE that writes the key's entry from the inserted row (`written`).
 */
export interface KeyInStatement {
  claim(sql: SqlText): void;
  free(sql: SqlText): void;
  keep(sql: SqlText, written: string): void;
  /** Whether the statement failed on the key (a racing request wrote it first), not on the record. */
  isConflict(err: unknown): boolean;
}

/** Ids a write refers to, to be found among `target`'s records in `caller`'s scope. */
export interface ExistingCheck {
  target: CompiledResource;
  ids: string[];
  caller: Caller;
}

/**
 * One new row (its tenantId included). With `references` (checks of the ids the row refers to)
 * or a `key`, one statement does it all: it inserts the row only when every reference exists in
 * its scope (and the key is free), and writes the key's entry. No row back then means a reference
 * is missing or the key was not free: existingCountsStatement tells which.
 */
export function insertStatement(resource: CompiledResource, row: Record<string, unknown>, userId: string, key?: KeyInStatement, references: ExistingCheck[] = []): Statement {
  if (!key && !references.length) return insertRowsStatement(resource, [row], userId);
  const columns = Object.keys(row).filter((c) => row[c] !== undefined);
  // A key's CTEs and a parent's touch need the row as a CTE; references alone do not.
  const wrapped = key !== undefined || resource.parentTouches.length > 0;
  const sql = new SqlText();
  if (wrapped) {
    sql.sql('with ');
    if (key) {
      key.claim(sql);
      sql.sql(', ');
    }
    sql.sql('"written" as (');
  }
  sql.sql(`insert into ${id(resource.table)} (${columns.map(id).join(', ')}) select `);
  columns.forEach((c, i) => sql.sql(i ? ', ' : '').value(row[c]));
  referencesExist(sql.sql(' where true'), references);
  if (key) key.free(sql.sql(' and '));
  sql.sql(returning(resource));
  if (!wrapped) return sql.statement();
  touchWritten(sql.sql(')'), resource, userId);
  key?.keep(sql, '"written"');
  return sql.sql(' select * from "written"').statement();
}

/**
 * ` and <each check holds>`: one id exists (an `exists` on its key, which stops at the row), or
 * all of several do (their count). Each reference is looked up under an alias of its own, so a
 * check on the written table itself never reads the written row's columns.
 */
function referencesExist(sql: SqlText, references: ExistingCheck[]): SqlText {
  references.forEach(({ target, ids, caller }, i) => {
    const alias = `@ref${i}`;
    const from = `from ${id(target.table)} as ${id(alias)} where ${col(alias, 'id')} = `;
    if (ids.length === 1) sql.sql(` and exists (select 1 ${from}`).value(ids[0]);
    else sql.sql(` and (select count(*) ${from}any(`).value(ids).sql(')');
    scopeSql(sql.sql(' and '), target, caller, alias).sql(ids.length === 1 ? ')' : `) = ${ids.length}`);
  });
  return sql;
}

/**
 * New rows (their tenantId included) in one statement, returned in the order given (PostgreSQL
 * returns a multi-row insert's rows in the order of its values). A column some rows leave out
 * (undefined) takes its default in those rows.
 */
export function insertRowsStatement(resource: CompiledResource, rows: Array<Record<string, unknown>>, userId: string): Statement {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row).filter((c) => row[c] !== undefined)))];
  const sql = openWrite(resource).sql(`insert into ${id(resource.table)} (${columns.map(id).join(', ')}) values `);
  rows.forEach((row, r) => {
    sql.sql(r ? ', (' : '(');
    columns.forEach((c, i) => {
      if (i) sql.sql(', ');
      if (row[c] === undefined) sql.sql('default');
      else sql.value(row[c]);
    });
    sql.sql(')');
  });
  return touchParents(sql.sql(returning(resource)), resource, userId);
}

/**
 * The record with this id in the caller's scope (at one of `versions`, when given) gets `row`'s
 * columns and a new updatedAt; no row back when there is none. With `references`, the same
 * statement changes the record only when the ids the row refers to all exist (as insertStatement
 * checks them): no row back may then also mean one is missing.
 */
export function updateStatement(
  resource: CompiledResource,
  caller: Caller,
  recordId: string,
  row: Record<string, unknown>,
  versions?: readonly string[],
  references: ExistingCheck[] = [],
): Statement {
  const table = resource.table;
  // A child's parents as they were before this update: the one it may leave is touched too.
  const vias = [...new Set(resource.parentTouches.map((t) => t.via))];
  const opened = vias.length > 0;
  const sql = new SqlText();
  if (opened) {
    // Locked and read before the update, which joins it: should another move of this child commit
    // while this one waits for the row, "before" holds the parent that move made (the latest
    // version, as READ COMMITTED re-reads a row it waited for), not the statement's snapshot's.
    // The update's own lock (no key update): a foreign key's check on a row naming this one, which
    // takes a key share lock, does not wait for it.
    sql.sql(`with "before" as (select ${['id', 'tenantId', ...vias].map((c) => col(table, c)).join(', ')} from ${id(table)} where ${col(table, 'id')} = `);
    writeScopeSql(sql.value(recordId).sql(' and '), resource, caller).sql(' for no key update), "written" as (');
  }
  sql.sql(`update ${id(table)} set `);
  for (const c of Object.keys(row)) if (row[c] !== undefined) sql.sql(`${id(c)} = `).value(row[c]).sql(', ');
  if (resource.changedBy) sql.sql(`${id(UPDATED_BY)} = `).value(caller.userId).sql(', ');
  sql.sql(`${id('updatedAt')} = CURRENT_TIMESTAMP`);
  if (opened) sql.sql(` from "before" where ${col(table, 'id')} = "before".${id('id')} and `);
  else sql.sql(` where ${col(table, 'id')} = `).value(recordId).sql(' and ');
  referencesExist(versionCondition(writeScopeSql(sql, resource, caller), resource, versions), references).sql(returning(resource));
  if (!opened) return sql.statement();
  touchWritten(sql.sql(')'), resource, caller.userId, '"before"');
  return sql.sql(' select * from "written"').statement();
}

/**
 * Deletes the record with this id in the caller's scope (at one of `versions`, when given): removes
 * it, or on a softDelete resource marks it deleted by the caller. Its id back when there was one.
 */
export function deleteStatement(resource: CompiledResource, caller: Caller, recordId: string, versions?: readonly string[]): Statement {
  return deleteWhere(resource, caller, (sql) => sql.value(recordId), versions);
}

/** Deletes (or, softDelete, marks deleted) the records with these ids in the caller's scope; the ids of those there were back. */
export function deleteManyStatement(resource: CompiledResource, caller: Caller, recordIds: readonly string[]): Statement {
  return deleteWhere(resource, caller, (sql) => sql.sql('any(').value(recordIds).sql(')'));
}

function deleteWhere(resource: CompiledResource, caller: Caller, ids: (sql: SqlText) => SqlText, versions?: readonly string[]): Statement {
  const table = resource.table;
  const sql = openWrite(resource);
  if (resource.softDelete) sql.sql(`update ${id(table)} set ${id(DELETED_AT)} = CURRENT_TIMESTAMP, ${id(DELETED_BY)} = `).value(caller.userId);
  else sql.sql(`delete from ${id(table)}`);
  ids(sql.sql(` where ${col(table, 'id')} = `)).sql(' and ');
  // A child's delete also returns what touchParents needs: its parents' ids and its tenant.
  const touched = resource.parentTouches.length ? [...resource.parentTouches.map((t) => t.via), 'tenantId'] : [];
  const returned = ['id', ...new Set(touched)].map((c) => col(table, c)).join(', ');
  return touchParents(versionCondition(writeScopeSql(sql, resource, caller), resource, versions).sql(` returning ${returned}`), resource, caller.userId);
}

/**
 * A softDelete resource's deleted record with this id in the caller's scope (at one of `versions`,
 * when given) back among the live ones, changed now by the caller; no row back when there is none.
 */
export function recoverStatement(resource: CompiledResource, caller: Caller, recordId: string, versions?: readonly string[]): Statement {
  const table = resource.table;
  const sql = openWrite(resource).sql(`update ${id(table)} set ${id(DELETED_AT)} = null, ${id(DELETED_BY)} = null, `);
  if (resource.changedBy) sql.sql(`${id(UPDATED_BY)} = `).value(caller.userId).sql(', ');
  sql.sql(`${id('updatedAt')} = CURRENT_TIMESTAMP where ${col(table, 'id')} = `).value(recordId).sql(' and ');
  scopeSql(sql, resource, caller, table, true).sql(` and ${col(table, DELETED_AT)} is not null`);
  return touchParents(versionCondition(sql, resource, versions).sql(returning(resource)), resource, caller.userId);
}

/** How many of `ids` (distinct) each target has in the caller's scope: one row, a column c0, c1, … per check. */
export function existingCountsStatement(checks: ExistingCheck[]): Statement {
  const sql = new SqlText().sql('select ');
  checks.forEach(({ target, ids, caller }, i) => {
    const table = target.table;
    if (i) sql.sql(', ');
    sql.sql(`(select count(*) from ${id(table)} where ${col(table, 'id')} = any(`).value(ids).sql(') and ');
    scopeSql(sql, target, caller).sql(`)::int as ${id(`c${i}`)}`);
  });
  return sql.statement();
}
