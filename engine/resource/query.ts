// The rule of whose records a caller sees: its tenant's, and for the role of the owner rule
// (roles configuration) only the ones it owns. Every read, write and loaded relation applies it, through scope() on a knex builder or
// scopeSql() (sql/select.ts) on compiled text: it cannot be forgotten by a handler.
import type { Knex } from 'knex';
import type { QueryBuilder, Model } from 'objection';
import type { Caller } from '../caller.js';
import type { CompiledResource } from './compiled.js';

type Builder = Knex.QueryBuilder | QueryBuilder<Model, any>;

/** Column = value conditions of the caller's scope; `false` when it may see no record at all. */
export function scopeConditions(resource: CompiledResource, caller: Caller): Array<[string, string]> | false {
  const rule = resource.ownerRule;
  if (!resource.owner || !rule || caller.role !== rule.role) return [['tenantId', caller.tenantId]];
  const owner = caller.claims[rule.claim];
  return owner ? [['tenantId', caller.tenantId], [resource.owner, owner]] : false;
}

/** Tenant and owner conditions on `ref` (the table or its alias). */
export function scope<B extends Builder>(builder: B, resource: CompiledResource, caller: Caller, ref = resource.table): B {
  const b = builder as Knex.QueryBuilder;
  const conditions = scopeConditions(resource, caller);
  if (!conditions) b.whereRaw('false');
  else for (const [column, value] of conditions) b.where(`${ref}.${column}`, value);
  return builder;
}
