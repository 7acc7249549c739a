// A request body → the row to write, the relation ids to link and the child records to write
// with it, after the mass-assignment guard, validation, defaults, the owner rule and the check
// that every referenced id (references, referencesBy, many-to-many ids) lives in the caller's
// tenant.
import type { Knex } from 'knex';
import { ORGANIZATION_CLAIM, type Caller } from '../caller.js';
import { badRequest, forbidden, HttpError, notFound } from '../errors.js';
import type { CompiledRelation, CompiledResource } from './compiled.js';
import { toColumnValue, UUID_PATTERN } from './fields.js';
import { run } from './sql/runner.js';
import { readStatement, someIdsStatement } from './sql/select.js';
import { existingCountsStatement, type ExistingCheck } from './sql/write.js';
import { filledFromParent } from './schemas.js';
import { isPlainObject } from '../objects.js';
import { CREATED_BY, UPDATED_BY } from './soft-delete.js';

export type WriteMode = 'create' | 'replace' | 'patch';

export interface PreparedWrite {
  row: Record<string, unknown>;
  /** Relations sent in the body, with the complete new set of ids for each. */
  links: Array<{ relation: CompiledRelation; ids: string[] }>;
  /** Writable hasMany relations sent in the body, each with the complete new list of child bodies. */
  children: Array<{ relation: CompiledRelation; bodies: Array<Record<string, unknown>> }>;
}

type ReferenceCheck = { label: string; target: CompiledResource; ids: string[] };

export interface WriteContext {
  /** The organization header's value (e.g. Organization-Id, Ever Gauzy clients' way of naming the current organization). */
  organizationHeader?: string;
  /** A replace or patch: the id of the record written, whose stored values complete what the body leaves out. */
  recordId?: string;
  /**
   * The organization a create of the same request already settled (an import's first row), for
   * bodies without one: taken as it is (null: none), not chosen again.
   */
  organizationId?: string | null;
}


/** Read-only fields are ignored, in child bodies too; a tenantId other than the caller's is a 403. */
function stripReadOnly(resource: CompiledResource, body: Record<string, unknown>, caller: Caller): Record<string, unknown> {
  const sameTenant = typeof body.tenantId === 'string' && body.tenantId.toLowerCase() === caller.tenantId;
  if ('tenantId' in body && !sameTenant) throw forbidden();
  const copy = { ...body };
  for (const name of resource.readOnlyFields) delete copy[name];
  for (const relation of resource.writableRelations) {
    const items = copy[relation.name];
    if (relation.kind !== 'hasMany' || !Array.isArray(items)) continue;
    copy[relation.name] = items.map((item) => (isPlainObject(item) ? stripReadOnly(relation.target, item, caller) : item));
  }
  return copy;
}

/** The caller's owner value when the owner rule limits it on this resource; undefined for any other caller. */
function ownerLimited(resource: CompiledResource, caller: Caller): { value: string | undefined } | undefined {
  const rule = resource.ownerRule;
  return resource.owner && rule && caller.role === rule.role ? { value: caller.claims[rule.claim] } : undefined;
}

/** The owner-scoped role writes only its own records, so a writable owner field it leaves out is its own. */
function withOwnerDefault(resource: CompiledResource, body: Record<string, unknown>, caller: Caller, mode: WriteMode) {
  const owner = resource.owner;
  const own = ownerLimited(resource, caller)?.value;
  if (!owner || mode === 'patch' || !own) return body;
  if (!resource.fields.get(owner)?.writable || body[owner] !== undefined) return body;
  return { ...body, [owner]: own };
}

/**
 * The organization of a new record whose body names none: the organization header's, the caller's
 * employee's, or the tenant's only one. When none of them applies (a new tenant has no
 * organization yet; a tenant of several names none), null, a record of the whole tenant, where
 * the resource allows it (organizationOptional), else a 400 saying how to name one.
 */
async function defaultOrganization(db: Knex, resource: CompiledResource, caller: Caller, context: WriteContext): Promise<string | null> {
  if (context.organizationId !== undefined) return context.organizationId;
  if (context.organizationHeader !== undefined) {
    if (!UUID_PATTERN.test(context.organizationHeader)) throw badRequest(`${resource.organizationHeader} header must be a UUID`);
    return context.organizationHeader.toLowerCase();
  }
  const own = caller.claims[ORGANIZATION_CLAIM];
  if (own) return own;
  // A tenant with a single organization needs no choice to be made.
  const rows = await run(db, someIdsStatement(resource.organizationRoot!, tenantOnly(caller), 2));
  if (rows.length === 1) return rows[0].id;
  if (resource.organizationOptional) return null;
  throw badRequest(noOrganization(resource, rows.length));
}

/** The 400 of a create that needs an organization and names none: one sentence on what to do. */
function noOrganization(resource: CompiledResource, found: number): string {
  const root = resource.organizationRoot!;
  const header = resource.organizationHeader ? ` or in the ${resource.organizationHeader} header` : '';
  if (found === 0) {
    return `organizationId should not be empty: this tenant has no ${root.name} yet, so create one first (POST /api/${root.paths[0]}) and send its id as organizationId${header}`;
  }
  return `organizationId should not be empty: this tenant has more than one ${root.name}, so name one with organizationId${header}`;
}

/**
 * The caller without the owner rule: the organization and most records a body refers to are
 * looked up in the tenant, since the owner rule limits what a caller reads and writes, not which
 * of its tenant's records a record may point at.
 */
const tenantOnly = (caller: Caller): Caller => ({ ...caller, role: '' });

/**
 * A record that has an owner is another matter: pointing one's own record at another employee's
 * (a time log at someone else's timesheet) would let its relations show what the owner rule hides.
 * Such targets are looked up with the owner rule.
 */
const referenceScope = (caller: Caller, target: CompiledResource): Caller => (target.owner ? caller : tenantOnly(caller));

/**
 * A referencesBy field is checked against the resource its discriminator names, so the two go
 * together: an update that sends one of them (PATCH entityId alone, or entity alone) takes the
 * other from the stored record (read in the caller's scope: none there is the update's own 404)
 * and writes it back with it, so that what is stored is always a pair that was checked together.
 */
async function completePairs(db: Knex, resource: CompiledResource, caller: Caller, row: Record<string, unknown>, recordId: string | undefined) {
  const halves = resource.referencesBy.filter((by) => (row[by.field] === undefined) !== (row[by.discriminator] === undefined));
  if (!halves.length || recordId === undefined) return;
  const [stored] = await run(db, readStatement(resource, caller, recordId));
  if (!stored) throw notFound();
  for (const by of halves) for (const name of [by.field, by.discriminator]) if (row[name] === undefined) row[name] = stored[name];
}

/** The reference checks of the row's referencesBy fields: each against the resource its discriminator names. */
function referencesByChecks(resource: CompiledResource, row: Record<string, unknown>): ReferenceCheck[] {
  return resource.referencesBy
    .filter((by) => typeof row[by.field] === 'string')
    .map((by) => {
      const kind = row[by.discriminator];
      const target = typeof kind === 'string' ? by.targets.get(kind) : undefined;
      if (!target) {
        const why = kind === null || kind === undefined ? `${by.discriminator} should not be empty` : `${by.discriminator} names no resource`;
        throw badRequest(`${by.field} must reference an existing record: ${why}`);
      }
      return { label: by.field, target, ids: [row[by.field] as string] };
    });
}

/**
 * The references a body makes, to be looked up: each target with its distinct ids and the scope
 * they are looked up in. A write of one row checks them in its own statement (sql/write.ts:
 * insertStatement) and asks refuseMissing only when it wrote nothing; any other write asks it
 * before writing (checkReferences).
 */
export interface References {
  lookups: ExistingCheck[];
  /** One round trip: a 400 naming the references missing from their scope; nothing when all are there. */
  refuseMissing(db: Knex): Promise<void>;
}

function referencesOf(caller: Caller, checks: ReferenceCheck[]): References {
  const wanted = checks.filter((c) => c.ids.length).map((c) => ({ ...c, ids: [...new Set(c.ids)] }));
  const lookups = wanted.map((c) => ({ target: c.target, ids: c.ids, caller: referenceScope(caller, c.target) }));
  return {
    lookups,
    async refuseMissing(db) {
      if (!lookups.length) return;
      const [counts] = await run(db, existingCountsStatement(lookups));
      const problems = wanted.filter((c, i) => Number(counts[`c${i}`]) !== c.ids.length).map((c) => `${c.label} must reference an existing ${c.target.name}`);
      if (problems.length) throw badRequest(problems);
    },
  };
}

/** One round trip: a 400 naming the referenced ids missing from the caller's tenant. */
const checkReferences = (db: Knex, caller: Caller, checks: ReferenceCheck[]) => referencesOf(caller, checks).refuseMissing(db);

/**
 * A body made ready to write, its references not looked up yet: the caller either counts them in
 * its own statement (`references`), or looks them up with `check()` before writing.
 */
export async function prepareWriteDeferred(
  db: Knex,
  resource: CompiledResource,
  caller: Caller,
  mode: WriteMode,
  rawBody: unknown,
  context: WriteContext = {},
): Promise<{ prepared: PreparedWrite; references: References; check(): Promise<void> }> {
  const { checks, ...prepared } = await prepareRow(db, resource, caller, mode, rawBody, context);
  return { prepared, references: referencesOf(caller, checks), check: () => checkReferences(db, caller, checks) };
}

/** A body made ready to write, its references looked up (a 400 names those missing). */
export async function prepareWrite(...args: Parameters<typeof prepareWriteDeferred>): Promise<PreparedWrite> {
  const { prepared, check } = await prepareWriteDeferred(...args);
  await check();
  return prepared;
}

/**
 * The children sent for one writable hasMany relation, once the parent row is written (inside its
 * transaction, so `db` sees it): each body is the child's own create body with the parent's id
 * (and organization) filled in, prepared as a create of the child would be. A 400 names the
 * child by its place in the list (lines.1.quantity ..., for a relation named lines).
 */
export async function prepareChildren(
  db: Knex,
  parent: CompiledResource,
  caller: Caller,
  relation: CompiledRelation,
  parentRow: Record<string, unknown>,
  bodies: Array<Record<string, unknown>>,
): Promise<PreparedWrite[]> {
  const filledKeys = filledFromParent(parent, relation);
  const filled = Object.fromEntries(filledKeys.map((key) => [key, key === relation.via ? parentRow.id : parentRow[key]]));
  const prepared: PreparedWrite[] = [];
  const checks: ReferenceCheck[] = [];
  for (const [i, body] of bodies.entries()) {
    const at = `${relation.name}.${i}`;
    try {
      const { checks: own, ...child } = await prepareRow(db, relation.target, caller, 'create', { ...body, ...filled });
      prepared.push(child);
      // What the parent filled in is the parent's own id and organization: nothing to look up.
      checks.push(...own.filter((c) => !filledKeys.includes(c.label)).map((c) => ({ ...c, label: `${at}.${c.label}` })));
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 400) throw err;
      throw badRequest([err.messages].flat().map((message) => `${at}.${message}`));
    }
  }
  await checkReferences(db, caller, checks);
  return prepared;
}

/** Stands in for the id a new record will get, so that its children are checked before anything is written. */
const NOT_YET_WRITTEN = '00000000-0000-4000-8000-000000000000';

/**
 * The children one writable hasMany of a prepared create carries, checked as its create will
 * check them once the record has an id (prepareChildren, inside its transaction), but beforehand,
 * with a stand-in id: many creates (an import, a bulk write) can then list every broken child and
 * open no transaction for nothing.
 */
export function checkChildrenAhead(db: Knex, parent: CompiledResource, caller: Caller, write: PreparedWrite, children: PreparedWrite['children'][number]) {
  return prepareChildren(db, parent, caller, children.relation, { ...write.row, id: NOT_YET_WRITTEN }, children.bodies);
}

async function prepareRow(
  db: Knex,
  resource: CompiledResource,
  caller: Caller,
  mode: WriteMode,
  rawBody: unknown,
  context: WriteContext = {},
): Promise<PreparedWrite & { checks: ReferenceCheck[] }> {
  const body = resource.validators[mode](
    isPlainObject(rawBody) ? withOwnerDefault(resource, stripReadOnly(resource, rawBody, caller), caller, mode) : rawBody,
  );
  const row: Record<string, unknown> = {};
  for (const field of resource.writableFields) {
    if (field.name in body) row[field.name] = toColumnValue(field.definition, body[field.name]);
    else if (mode === 'create' && field.name in resource.defaults) row[field.name] = resource.defaults[field.name];
    else if (mode === 'replace' && !resource.keptOnReplace.has(field.name)) row[field.name] = resource.defaults[field.name] ?? null;
  }
  if (mode === 'create' && resource.changedBy) row[CREATED_BY] = row[UPDATED_BY] = caller.userId;
  if (mode === 'create') {
    for (const { field, claim } of resource.callerDefaults) {
      const value = claim === 'userId' ? caller.userId : caller.claims[claim];
      if (row[field] === undefined && value) row[field] = value;
    }
  }
  if (mode === 'create' && resource.scope === 'organization' && row.organizationId === undefined) {
    row.organizationId = await defaultOrganization(db, resource, caller, context);
  }
  // Writing a record for another owner is forbidden (reading one is a 404: see scopeConditions() in model.ts).
  const limited = ownerLimited(resource, caller);
  if (limited && row[resource.owner!] !== undefined && row[resource.owner!] !== limited.value) {
    throw forbidden();
  }

  const links: PreparedWrite['links'] = [];
  const children: PreparedWrite['children'] = [];
  for (const relation of resource.writableRelations) {
    if (relation.kind === 'hasMany') {
      // Absent: the children stay as they are, whatever the mode (they are records of their own).
      const bodies = body[relation.name] as PreparedWrite['children'][number]['bodies'] | undefined;
      if (bodies !== undefined) children.push({ relation, bodies });
      continue;
    }
    const objects = body[relation.name] as Array<{ id: string }> | undefined;
    const ids = body[relation.idsKey!] as string[] | undefined;
    if (objects === undefined && ids === undefined) {
      if (mode === 'replace') links.push({ relation, ids: [] });
      continue;
    }
    const all = [...(objects ?? []).map((o) => o.id), ...(ids ?? [])].map((id) => id.toLowerCase());
    links.push({ relation, ids: [...new Set(all)] });
  }

  if (mode !== 'create') await completePairs(db, resource, caller, row, context.recordId);
  const checks = [
    ...resource.references
      .filter((r) => typeof row[r.field] === 'string')
      .map((r) => ({ label: r.field, target: r.target, ids: [row[r.field] as string] })),
    ...referencesByChecks(resource, row),
    ...links.map((l) => ({ label: l.relation.name, target: l.relation.target, ids: l.ids })),
  ];
  return { row, links, children, checks };
}
