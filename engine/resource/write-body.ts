// A request body → the row to write and the relation ids to link, after the mass-assignment
// guard, validation, defaults, the owner rule and the check that every referenced id lives in
// the caller's tenant.
import type { Knex } from 'knex';
import { OWNER_SCOPED_ROLE, type Caller } from '../caller.js';
import { badRequest, forbidden } from '../errors.js';
import type { CompiledRelation, CompiledResource } from './compiled.js';
import { toColumnValue, UUID_PATTERN } from './fields.js';
import { scope } from './query.js';
import { isPlainObject } from '../objects.js';

export type WriteMode = 'create' | 'replace' | 'patch';

export interface PreparedWrite {
  row: Record<string, unknown>;
  /** Relations sent in the body, with the complete new set of ids for each. */
  links: Array<{ relation: CompiledRelation; ids: string[] }>;
}

export interface WriteContext {
  /** The organization header's value (e.g. Organization-Id, Ever Gauzy clients' way of naming the current organization). */
  organizationHeader?: string;
}


/** Read-only fields are ignored; a tenantId other than the caller's is a 403. */
function stripReadOnly(resource: CompiledResource, body: Record<string, unknown>, caller: Caller): Record<string, unknown> {
  const sameTenant = typeof body.tenantId === 'string' && body.tenantId.toLowerCase() === caller.tenantId;
  if ('tenantId' in body && !sameTenant) throw forbidden();
  const copy = { ...body };
  for (const name of resource.readOnlyFields) delete copy[name];
  return copy;
}

/** The owner-scoped role writes only its own records, so a writable owner field it leaves out is its own. */
function withOwnerDefault(resource: CompiledResource, body: Record<string, unknown>, caller: Caller, mode: WriteMode) {
  const owner = resource.owner;
  if (!owner || caller.role !== OWNER_SCOPED_ROLE || mode === 'patch' || !caller.employeeId) return body;
  if (!resource.fields.get(owner)?.writable || body[owner] !== undefined) return body;
  return { ...body, [owner]: caller.employeeId };
}

async function defaultOrganization(db: Knex, resource: CompiledResource, caller: Caller, context: WriteContext): Promise<string | undefined> {
  if (context.organizationHeader !== undefined) {
    if (!UUID_PATTERN.test(context.organizationHeader)) throw badRequest(`${resource.organizationHeader} header must be a UUID`);
    return context.organizationHeader.toLowerCase();
  }
  if (caller.organizationId) return caller.organizationId;
  // A tenant with a single organization needs no choice to be made.
  const root = resource.organizationRoot!;
  const rows = await scope(db(root.table).select(`${root.table}.id`).limit(2), root, tenantOnly(caller));
  return rows.length === 1 ? rows[0].id : undefined;
}

/**
 * The caller without the owner rule: the organization and the records a body refers to are
 * looked up in the tenant, since the owner rule limits what a caller reads and writes, not which
 * of its tenant's records a record may point at.
 */
const tenantOnly = (caller: Caller): Caller => ({ ...caller, role: '' });

/** One round trip: which of the referenced ids are missing from the caller's tenant. */
async function checkReferences(db: Knex, caller: Caller, checks: Array<{ label: string; target: CompiledResource; ids: string[] }>) {
  const wanted = checks.filter((c) => c.ids.length);
  if (!wanted.length) return;
  const columns = wanted.map((c, i) => {
    const sub = scope(db(c.target.table).count('*').whereIn(`${c.target.table}.id`, [...new Set(c.ids)]), c.target, tenantOnly(caller)).toSQL();
    return db.raw(`(${sub.sql})::int as c${i}`, sub.bindings);
  });
  const [counts] = await db.select(columns);
  const problems = wanted
    .filter((c, i) => Number(counts[`c${i}`]) !== new Set(c.ids).size)
    .map((c) => `${c.label} must reference an existing ${c.target.name}`);
  if (problems.length) throw badRequest(problems);
}

export async function prepareWrite(
  db: Knex,
  resource: CompiledResource,
  caller: Caller,
  mode: WriteMode,
  rawBody: unknown,
  context: WriteContext = {},
): Promise<PreparedWrite> {
  const body = resource.validators[mode](
    isPlainObject(rawBody) ? withOwnerDefault(resource, stripReadOnly(resource, rawBody, caller), caller, mode) : rawBody,
  );
  const row: Record<string, unknown> = {};
  for (const field of resource.writableFields) {
    if (field.name in body) row[field.name] = toColumnValue(field.definition, body[field.name]);
    else if (mode === 'create' && field.name in resource.defaults) row[field.name] = resource.defaults[field.name];
    else if (mode === 'replace' && field.name !== 'organizationId') row[field.name] = resource.defaults[field.name] ?? null;
  }
  if (mode === 'create') {
    for (const { field, from } of resource.callerDefaults) if (row[field] === undefined && caller[from]) row[field] = caller[from];
  }
  if (mode === 'create' && resource.scope === 'organization' && row.organizationId === undefined) {
    row.organizationId = await defaultOrganization(db, resource, caller, context);
    if (!row.organizationId) throw badRequest('organizationId should not be empty');
  }
  // Writing a record for another employee is forbidden (reading one is a 404: see scope()).
  if (resource.owner && caller.role === OWNER_SCOPED_ROLE && row[resource.owner] !== undefined && row[resource.owner] !== caller.employeeId) {
    throw forbidden();
  }

  const links: PreparedWrite['links'] = [];
  for (const relation of resource.writableRelations) {
    const objects = body[relation.name] as Array<{ id: string }> | undefined;
    const ids = body[relation.idsKey!] as string[] | undefined;
    if (objects === undefined && ids === undefined) {
      if (mode === 'replace') links.push({ relation, ids: [] });
      continue;
    }
    const all = [...(objects ?? []).map((o) => o.id), ...(ids ?? [])].map((id) => id.toLowerCase());
    links.push({ relation, ids: [...new Set(all)] });
  }

  await checkReferences(db, caller, [
    ...resource.references
      .filter((r) => typeof row[r.field] === 'string')
      .map((r) => ({ label: r.field, target: r.target, ids: [row[r.field] as string] })),
    ...links.map((l) => ({ label: l.relation.name, target: l.relation.target, ids: l.ids })),
  ]);
  return { row, links };
}
