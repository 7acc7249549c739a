// The caller's scope as SQL: the tenant and owner conditions every statement puts on every table
// it touches (the rule of engine/resource/model.ts, which models apply to their queries), records
// not soft-deleted, and children in sight only while their soft-deletable parent is. Reads and
// writes share it; a write's own rows take the form that survives a wait for a row lock.
import type { Caller } from '../../caller.js';
import type { CompiledResource } from '../compiled.js';
import { scopeConditions } from '../model.js';
import { DELETED_AT } from '../soft-delete.js';
import { col, id, type SqlText } from './text.js';

/**
 * Tenant and owner conditions on `ref` (the table or its alias), as the model's scoped() (model.ts),
 * and on a softDelete resource, records not deleted (all of them with `withDeleted`). `rechecked`:
 * for the rows a write changes, whose parents are looked up per row (liveParentsSql).
 */
export function scopeSql(sql: SqlText, resource: CompiledResource, caller: Caller, ref = resource.table, withDeleted = false, rechecked = false): SqlText {
  const conditions = scopeConditions(resource, caller);
  if (!conditions) return sql.sql('false');
  conditions.forEach(([column, value], i) => sql.sql(`${i ? ' and ' : ''}${col(ref, column)} = `).value(value));
  if (resource.softDelete && !withDeleted) sql.sql(` and ${col(ref, DELETED_AT)} is null`);
  return sql.sql(liveParentsSql(resource, ref, rechecked));
}

/** scopeSql for the rows an update or delete changes (`rechecked`). */
export const writeScopeSql = (sql: SqlText, resource: CompiledResource, caller: Caller) => scopeSql(sql, resource, caller, resource.table, false, true);

/**
 * ` and exists (…)` per softDelete parent whose writable children this resource's records are: a
 * deleted parent takes its children out of sight with it (recover brings both back). Made once per
 * resource, reference and form.
 *
 * `rechecked`: with `offset 0`, which keeps each a check per row rather than a semi-join. A write
 * that waited for a row another transaction changed (READ COMMITTED) checks the row again as it
 * now is, but a joined row stays the one first joined: a child moved meanwhile would be missed (a
 * 404 for a record that is there), where a check per row looks up the parent the row names now.
 * Reads keep the semi-join: over many rows (a count) it is an order of magnitude faster.
 */
const liveParents = new WeakMap<CompiledResource, Map<string, string>>();

/** Whether the resource's records are a softDelete parent's writable children, in sight only while it is. */
export const hasLiveParents = (resource: CompiledResource) => resource.parentTouches.some((t) => t.parent.softDelete);

function liveParentsSql(resource: CompiledResource, ref: string, rechecked: boolean): string {
  if (!hasLiveParents(resource)) return '';
  let byRef = liveParents.get(resource);
  if (!byRef) liveParents.set(resource, (byRef = new Map()));
  const key = rechecked ? `${ref} rechecked` : ref;
  let text = byRef.get(key);
  if (text === undefined) {
    const perRow = rechecked ? ' offset 0' : '';
    text = resource.parentTouches
      .filter((t) => t.parent.softDelete)
      .map(({ parent, via }, i) => {
        const alias = `${ref}_live${i}`;
        return ` and exists (select 1 from ${id(parent.table)} as ${id(alias)} where ${col(alias, 'id')} = ${col(ref, via)} and ${col(alias, DELETED_AT)} is null${perRow})`;
      })
      .join('');
    byRef.set(key, text);
  }
  return text;
}
