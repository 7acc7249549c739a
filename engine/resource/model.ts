// An Objection model per resource: its table, the caller's scope, and a JSON formatter that drops
// hidden fields even if a query selected them. Hand-written modules read and write a resource
// through its model; the engine's generic CRUD runs its compiled statements (sql/), which apply
// the same scopeConditions() as text: one rule, rendered twice. No relation mappings: relations
// load through the compiled SQL, and the modules' joins carry tenant conditions of their own.
import { Model, type ModelClass, type QueryBuilder, type TransactionOrKnex } from 'objection';
import type { Caller } from '../caller.js';
import type { CompiledResource } from './compiled.js';
import { DELETED_AT } from './soft-delete.js';

/** A record of a resource: its columns are the definition's, known at run time only. */
export interface ResourceRecord extends Model {
  [column: string]: any;
}

/** A query of a resource's model; awaited, it answers model instances (hidden fields dropped from their JSON). */
export type ResourceQuery = QueryBuilder<ResourceRecord, ResourceRecord[]>;

/** Who reads without a role: a share link's customer, inside the link's tenant (no owner rule). */
export interface TenantReader {
  tenantId: string;
}

export interface ResourceModelClass extends ModelClass<ResourceRecord> {
  /**
   * The records of the resource the caller may see: its tenant's, and for the owner rule's role
   * its own, or none at all; on a softDelete resource, only those not deleted. The conditions are added when the query is built, on the table or on
   * the alias the query was given (`.alias('e')`), whatever is chained after; they are ANDed with
   * the query's own conditions as SQL reads them, so an `orWhere` must be grouped inside
   * `.where((q) => q.where(…).orWhere(…))`: `where tenant and a or b` would reach other tenants.
   */
  scoped(caller: Caller | TenantReader, trx?: TransactionOrKnex): ResourceQuery;
}

/**
 * The rule of whose records a caller sees: its tenant's, and for the role of the owner rule
 * (roles configuration) only the ones it owns. Column = value conditions; `false` when it may see
 * no record at all. Every read, write and loaded relation applies it, through the model's
 * scoped() or scopeSql() (sql/scope.ts) on compiled text: it cannot be forgotten by a handler.
 */
export function scopeConditions(resource: CompiledResource, caller: Caller | TenantReader): Array<[string, string]> | false {
  const rule = resource.ownerRule;
  if (!resource.owner || !rule || !('permissions' in caller) || caller.role !== rule.role) return [['tenantId', caller.tenantId]];
  const owner = caller.claims[rule.claim];
  return owner ? [['tenantId', caller.tenantId], [resource.owner, owner]] : false;
}

/** The model of the resource, on `base` (the app binds it to its knex, so `trx` may be left out). */
export function buildModel(resource: CompiledResource, base: typeof Model): ResourceModelClass {
  const hidden = resource.hiddenFields;
  class ResourceModel extends base {
    static override get tableName() {
      return resource.table;
    }

    // first() adds `limit 1`, as knex's does (Objection's default fetches every row and keeps one).
    static override useLimitInFirst = true;

    static scoped(caller: Caller | TenantReader, trx?: TransactionOrKnex): ResourceQuery {
      const conditions = scopeConditions(resource, caller);
      return this.query(trx).onBuild((query) => {
        if (!conditions) return void query.whereRaw('false');
        const ref = query.tableRefFor(this);
        for (const [column, value] of conditions) query.where(`${ref}.${column}`, value);
        if (resource.softDelete) query.whereNull(`${ref}.${DELETED_AT}`);
        // The children of a deleted softDelete parent are out of sight with it (sql/select.ts: liveParentsSql).
        resource.parentTouches
          .filter((t) => t.parent.softDelete)
          .forEach(({ parent, via }, i) => {
            const alias = `${ref}_live${i}`;
            query.whereRaw('exists (select 1 from ?? as ?? where ??.?? = ??.?? and ??.?? is null)', [parent.table, alias, alias, 'id', ref, via, alias, DELETED_AT]);
          });
      });
    }

    override $formatJson(json: Record<string, unknown>) {
      const formatted = super.$formatJson(json);
      for (const field of hidden) delete formatted[field];
      return formatted;
    }
  }
  Object.defineProperty(ResourceModel, 'name', { value: resource.name.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase()) });
  return ResourceModel as unknown as ResourceModelClass;
}
