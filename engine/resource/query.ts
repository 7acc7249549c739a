// The one place that turns a caller and a ListQuery into SQL conditions. Every read, write and
// loaded relation goes through scope(): the tenant (and, for the EMPLOYEE role, the owner)
// condition cannot be forgotten by a handler. Client values only ever reach SQL as bindings.
import type { Knex } from 'knex';
import type { QueryBuilder, Model } from 'objection';
import { OWNER_SCOPED_ROLE, type Caller } from '../caller.js';
import type { CompiledResource } from './compiled.js';
import type { ListQuery } from './list-query.js';

type Builder = Knex.QueryBuilder | QueryBuilder<Model, any>;

/** Tenant and owner conditions on `ref` (the table or its alias). */
export function scope<B extends Builder>(builder: B, resource: CompiledResource, caller: Caller, ref = resource.table): B {
  const b = builder as Knex.QueryBuilder;
  b.where(`${ref}.tenantId`, caller.tenantId);
  if (resource.owner && caller.role === OWNER_SCOPED_ROLE) {
    if (caller.employeeId) b.where(`${ref}.${resource.owner}`, caller.employeeId);
    else b.whereRaw('false');
  }
  return builder;
}

/** `select 1 from target where target is related to the outer row`, scoped to the caller. */
function relatedExists(db: Knex, resource: CompiledResource, relationName: string, caller: Caller, alias: string) {
  const relation = resource.relations.get(relationName)!;
  const target = relation.target;
  const sub = db.select(db.raw('1')).from(`${target.table} as ${alias}`);
  if (relation.kind === 'belongsTo') sub.whereRaw('?? = ??', [`${alias}.id`, `${resource.table}.${relation.via}`]);
  else if (relation.kind === 'hasMany') sub.whereRaw('?? = ??', [`${alias}.${relation.via}`, `${resource.table}.id`]);
  else {
    const t = relation.through!;
    sub.join(`${t.table} as ${alias}_j`, `${alias}_j.${t.to}`, `${alias}.id`).whereRaw('?? = ??', [`${alias}_j.${t.from}`, `${resource.table}.id`]);
  }
  return scope(sub, target, caller, alias);
}

const escapeLike = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** Everything of a list but paging and order: shared by the page query and the count query. */
export function applyFilters<B extends Builder>(db: Knex, builder: B, resource: CompiledResource, caller: Caller, query: ListQuery): B {
  const b = scope(builder, resource, caller) as Knex.QueryBuilder;
  const table = resource.table;
  for (const [field, value] of query.where) b.where(`${table}.${field}`, value);
  query.nested.forEach((filter, i) => {
    const alias = `r${i}_${filter.relation.name}`;
    const sub = relatedExists(db, resource, filter.relation.name, caller, alias);
    for (const [field, value] of filter.conditions) sub.where(`${alias}.${field}`, value);
    b.whereExists(sub);
  });
  if (query.search) {
    const pattern = `%${escapeLike(query.search)}%`;
    b.where((or) => {
      for (const field of resource.search) or.orWhere(`${table}.${field}`, 'ilike', pattern);
    });
  }
  if (resource.dateRange) {
    if (query.startDate) b.where(`${table}.${resource.dateRange}`, '>=', query.startDate);
    if (query.endDate) b.where(`${table}.${resource.dateRange}`, query.endDate.exclusive ? '<' : '<=', query.endDate.at);
  }
  if (query.tags?.length && resource.tagRelation) {
    // Same path as where[tags][id]: a link to another tenant's tag (a corrupt row) never matches.
    const alias = `filtered_${resource.tagRelation.name}`;
    b.whereExists(relatedExists(db, resource, resource.tagRelation.name, caller, alias).whereIn(`${alias}.id`, query.tags));
  }
  return builder;
}

export function applyOrder<B extends Builder>(builder: B, resource: CompiledResource, query: ListQuery): B {
  const b = builder as Knex.QueryBuilder;
  const order = query.order.length ? query.order : ([['createdAt', 'DESC']] as ListQuery['order']);
  for (const [field, direction] of order) b.orderBy(`${resource.table}.${field}`, direction);
  // The primary key breaks ties last, so pages never overlap or skip a record.
  if (!order.some(([field]) => field === 'id')) b.orderBy(`${resource.table}.id`, order[order.length - 1][1]);
  return builder;
}

/** Every prefix of the requested relation paths (user.role → user, user.role). */
function graphPaths(relations: string[]): string[] {
  const all = new Set<string>();
  for (const path of relations) {
    const parts = path.split('.');
    for (let i = 1; i <= parts.length; i++) all.add(parts.slice(0, i).join('.'));
  }
  return [...all];
}

/** user, user.role, organization → {user: {role: true}, organization: true}: each relation named once. */
function relationTree(relations: string[]): Record<string, unknown> {
  const tree: Record<string, any> = {};
  for (const path of relations) {
    let node = tree;
    for (const name of path.split('.')) {
      if (node[name] === true || node[name] === undefined) node[name] = {};
      node = node[name];
    }
  }
  const close = (node: Record<string, any>): Record<string, unknown> =>
    Object.fromEntries(Object.entries(node).map(([k, v]) => [k, Object.keys(v).length ? close(v) : true]));
  return close(tree);
}

function targetOf(resource: CompiledResource, path: string): CompiledResource {
  return path.split('.').reduce((at, name) => at.relations.get(name)!.target, resource);
}

/**
 * Loads relations the Objection way (one query per relation level, never per row), each level
 * scoped to the caller's tenant and limited to visible columns.
 */
export function withRelations(builder: QueryBuilder<Model, any>, resource: CompiledResource, caller: Caller, relations: string[]) {
  if (!relations.length) return builder;
  builder.withGraphFetched(relationTree(relations));
  for (const path of graphPaths(relations)) {
    const target = targetOf(resource, path);
    builder.modifyGraph(path, (related) => {
      const ref = related.tableRefFor(related.modelClass());
      related.select(target.visibleColumns.map((c) => `${ref}.${c}`));
      scope(related, target, caller, ref);
    });
  }
  return builder;
}
