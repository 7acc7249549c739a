// The attacks of the isolation suites, each for any resource, from its compiled definition: the
// victim's id on every path and method, lists with every filter, nested filters, search, dates
// and tags, relations at every depth, writes naming a victim (references, referencesBy fields
// with each kind of record they may name, many-to-many ids, children, tenant and organization
// headers), export and import. Each answer is held to the oracle (helpers/isolation.ts: what the
// viewer may see, asked of the database directly).
import AdmZip from 'adm-zip';
import { parse } from 'csv-parse/sync';
import type { Knex } from 'knex';
import type request from 'supertest';
import * as assert from 'uvu/assert';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { filledFromParent } from '../../engine/resource/schemas.js';
import { ignoredFields } from '../../resources/export-import/import/rows.js';
import { assertError, assertForbidden, assertNotFound } from './error-envelope.js';
import {
  binary,
  copy,
  countOf,
  idsOf,
  isVisible,
  jsonValue,
  ownerScoped,
  queryValue,
  reached,
  relationChunks,
  secondsIn,
  stringsIn,
  visibleRows,
  whereRelated,
  type CrossLinkWorld,
  type Row,
} from './isolation.js';
import type { Body, SampleRecords } from './sample-records.js';

export interface AttackWorld extends CrossLinkWorld {
  /** The recording agent: every attack request goes through it. */
  http: ReturnType<typeof request>;
  /** A valid create body of the viewer's own world per CRUD resource, made before the attacks (which must write nothing). */
  bodies: Map<string, Body>;
  /** Headers of the viewer's creates and imports: the organization, when its tenant has several. */
  createHeaders: Record<string, string>;
  /** The other tenant, in the tenant suite: a tenantId naming it is a 403. */
  foreignTenantId?: string;
  /** Ids of every row the viewer may not see: none may come back in an answer. */
  foreignIds: Set<string>;
  samples: SampleRecords;
}

type Response = { status: number; body: any; headers: Record<string, any> };

const show = (res: Response) => `${res.status} ${JSON.stringify(res.body)}`;
const rowOf = (w: AttackWorld, r: CompiledResource, id: string) => w.db(r.table).where({ id }).first();
const tenantCount = (w: AttackWorld, r: CompiledResource) => countOf(w.db(r.table).where({ tenantId: w.viewer.tenantId }));

/** An answered record is one the viewer may see, and none of the foreign ids. */
function assertVisible(w: AttackWorld, r: CompiledResource, record: Row, where: string) {
  assert.ok(isVisible(r, record, w.viewer), `${where}: a ${r.name} the viewer may not see was answered: ${JSON.stringify(record)}`);
  assert.not.ok(w.foreignIds.has(String(record.id)), `${where}: foreign ${r.name} ${record.id} was answered`);
}

/** A page of a list or search: 200, visible items only, as many as the oracle counts. */
function assertPage(w: AttackWorld, r: CompiledResource, res: Response, expected: number, where: string) {
  assert.is(res.status, 200, `${where}: ${show(res)}`);
  for (const item of res.body.items) assertVisible(w, r, item, where);
  assert.is(res.body.total, expected, `${where}: total`);
  assert.is(res.body.items.length, Math.min(expected, r.maxTake), `${where}: items`);
}

/** A count (GET /api/{r}/count): 200, the oracle's number. */
function assertCount(res: Response, expected: number, where: string) {
  assert.is(res.status, 200, `${where}: ${show(res)}`);
  assert.equal(res.body, { total: expected }, `${where}: total`);
}

/** Every record loaded along the paths is visible. */
function assertReached(w: AttackWorld, r: CompiledResource, records: Row[], paths: string[], where: string) {
  for (const { path, target, record } of reached(r, records, paths)) assertVisible(w, target, record, `${where} relations[]=${path}`);
}

/** The target of a writable reference field, when the viewer must not point at its victim. */
function foreignTarget(w: AttackWorld, r: CompiledResource, field: string): { target: CompiledResource; victim: Row } | undefined {
  const name = r.fields.get(field)?.definition.references;
  const victim = name ? w.victims.get(name) : undefined;
  return victim ? { target: w.registry.get(name!)!, victim } : undefined;
}

/** The answer to a write naming a victim: 403 for the owner field of the owner-scoped role, else the reference's 400. */
function assertRefused(w: AttackWorld, r: CompiledResource, res: Response, label: string, target: CompiledResource, field: string, where: string) {
  try {
    if (ownerScoped(w.viewer) && field === r.owner) assertForbidden(res);
    else assertError(res, 400, `${label} must reference an existing ${target.name}`);
  } catch (err) {
    (err as Error).message = `${where}: ${(err as Error).message}`;
    throw err;
  }
}

/** A PATCH body a client could send alone: one plain field with a new value. */
function patchOf(w: AttackWorld, r: CompiledResource): Body {
  const field = w.samples.plainFields(r)[0];
  return field ? { [field.name]: w.samples.value(field) } : {};
}

/** Rows of the record's writable relations: children of a hasMany, linked ids of a many-to-many. */
async function linksOf(db: Knex, r: CompiledResource, id: string) {
  const links: Record<string, unknown[]> = {};
  for (const rel of r.writableRelations) {
    if (rel.kind === 'hasMany') links[rel.name] = await db(rel.target.table).where(rel.via!, id).orderBy('id');
    else links[rel.name] = (await db(rel.through!.table).where(rel.through!.from, id)).map((l) => l[rel.through!.to]).sort();
  }
  return links;
}

/** The victim's id is a 404 on every path for read (with each relations[] chunk), replace, modify and delete; nothing changes. */
export async function attackRecord(w: AttackWorld, r: CompiledResource) {
  const victim = w.victims.get(r.name)!;
  const auth = w.viewer.auth;
  const before = await rowOf(w, r, victim.id);
  const links = await linksOf(w.db, r, victim.id);
  const body = w.bodies.get(r.name)!;
  for (const path of r.paths) {
    const url = `/api/${path}/${victim.id}`;
    assertNotFound(await w.http.get(url).set(auth));
    for (const chunk of relationChunks(r)) assertNotFound(await w.http.get(url).query({ 'relations[]': chunk }).set(auth));
    assertNotFound(await w.http.put(url).set(auth).send(copy(body)));
    assertNotFound(await w.http.patch(url).set(auth).send(patchOf(w, r)));
    assertNotFound(await w.http.patch(url).set(auth).send({}));
    assertNotFound(await w.http.delete(url).set(auth));
    if (r.softDelete) {
      // Asking for deleted records widens nothing beyond the caller's scope.
      assertNotFound(await w.http.get(url).query({ withDeleted: true }).set(auth));
      assertNotFound(await w.http.put(`${url}/recover`).set(auth));
      assertNotFound(await w.http.delete(`${url}/soft`).set(auth));
    }
    // Bulk writes naming the victim: a 404 for the whole request, nothing written.
    const bulk = `/api/${path}/bulk`;
    const own = w.probes.get(r.name);
    const ids = own ? [own.id, victim.id] : [victim.id];
    const missed = (res: Response) => {
      assertNotFound(res);
      assert.equal(res.body.errors.map((e: { index: number }) => e.index), [ids.length - 1], `${bulk}: ${show(res)}`);
    };
    missed(await w.http.patch(bulk).set(auth).send(ids.map((id) => ({ id, ...patchOf(w, r) }))));
    missed(await w.http.delete(bulk).set(auth).send({ ids }));
    if (w.foreignTenantId) assertForbidden(await w.http.post(bulk).set(auth).set(w.createHeaders).send([{ ...copy(body), tenantId: w.foreignTenantId }]));
    else if (r.owner && r.fields.get(r.owner)?.writable && victim[r.owner]) {
      // A create for the victim's owner: refused, nothing written.
      assertForbidden(await w.http.post(bulk).set(auth).set(w.createHeaders).send([{ ...copy(body), [r.owner]: victim[r.owner] }]));
    } else assertError(await w.http.post(bulk).set(auth).set(w.createHeaders).send([]), 400);
  }
  // Ids are compared in lower case: the same id in capitals is the same record, still not the viewer's.
  assertNotFound(await w.http.get(`/api/${r.paths[0]}/${victim.id.toUpperCase()}`).set(auth));
  assertNotFound(await w.http.delete(`/api/${r.paths[0]}/${victim.id.toUpperCase()}`).set(auth));
  assert.equal(await rowOf(w, r, victim.id), before, `${r.name}: the victim's row`);
  assert.equal(await linksOf(w.db, r, victim.id), links, `${r.name}: the victim's links and children`);
}

/**
 * Lists and searches: plain, with each filter set to the victim's value, search, date range and
 * tags aimed at it, and a nested filter on each relation naming a victim of its target. Every
 * answer holds only visible records, and its total is the oracle's count.
 */
export async function attackLists(w: AttackWorld, r: CompiledResource) {
  const { db, viewer } = w;
  const auth = viewer.auth;
  const take = r.maxTake;
  const visible = () => visibleRows(db, r, viewer);
  const base = `/api/${r.paths[0]}`;
  const both = async (where: Record<string, unknown>, expected: number, label: string) => {
    const query = Object.fromEntries(flatten('where', where));
    assertPage(w, r, await w.http.get(base).query({ ...query, take }).set(auth), expected, `GET ${base} ${label}`);
    const body = { where: jsonWhere(where), take };
    assertPage(w, r, await w.http.post(`${base}/search`).set(auth).send(body), expected, `POST ${base}/search ${label}`);
    assertCount(await w.http.get(`${base}/count`).query(query).set(auth), expected, `GET ${base}/count ${label}`);
  };

  const all = await countOf(visible());
  // Page by page through cursors, a few records at a time: every visible record once, nothing else.
  const walked = new Set<string>();
  let cursor: string | undefined;
  const step = Math.max(1, Math.ceil(all / 3));
  for (let page = 0; page < 10; page++) {
    const res = await w.http.get(base).query({ take: step, ...(cursor ? { cursor } : {}) }).set(auth);
    assert.is(res.status, 200, `GET ${base} by cursor: ${show(res)}`);
    for (const item of res.body.items) {
      assertVisible(w, r, item, `GET ${base} by cursor`);
      assert.not.ok(walked.has(item.id), `GET ${base} by cursor: ${item.id} twice`);
      walked.add(item.id);
    }
    cursor = res.body.nextCursor;
    if (!cursor) break;
  }
  assert.is(walked.size, Math.min(all, step * 10), `GET ${base} by cursor: every visible record`);
  for (const path of r.paths) {
    assertPage(w, r, await w.http.get(`/api/${path}`).query({ take }).set(auth), all, `GET /api/${path}`);
    assertPage(w, r, await w.http.get(`/api/${path}/pagination`).query({ take }).set(auth), all, `GET /api/${path}/pagination`);
    assertCount(await w.http.get(`/api/${path}/count`).set(auth), all, `GET /api/${path}/count`);
    assertPage(w, r, await w.http.post(`/api/${path}/search`).set(auth).send({ take }), all, `POST /api/${path}/search`);
  }
  if (w.foreignTenantId) {
    // A tenantId naming the other tenant, as a parameter or a header, on each spelling of the list.
    for (const path of ['', '/pagination', '/count']) {
      assertForbidden(await w.http.get(`${base}${path}`).query({ tenantId: w.foreignTenantId }).set(auth));
      assertForbidden(await w.http.get(`${base}${path}`).set(auth).set('Tenant-Id', w.foreignTenantId));
    }
    assertForbidden(await w.http.post(`${base}/search`).set(auth).send({ tenantId: w.foreignTenantId }));
  }

  const victim = w.victims.get(r.name);
  if (victim) {
    const row = await rowOf(w, r, victim.id);
    let ranged = false;
    for (const [field, filter] of r.filters) {
      const value = row[field];
      if (value === null || value === undefined) continue;
      const expected = await countOf(visible().where(`${r.table}.${field}`, value));
      await both({ [field]: value }, expected, `where[${field}]=${queryValue(value)}`);
      // Through an operator, in an OR group beside one naming the victim itself: never one more.
      if (filter.operators.includes('in')) await both({ or: [{ [field]: { in: [value] } }, { id: victim.id }] }, expected, `where[or][…][${field}][in] or the victim's id`);
      if (!ranged && filter.operators.includes('between')) {
        ranged = true;
        await both({ [field]: { between: [value, value] }, id: { ne: w.victims.get(r.name)!.id } }, expected, `where[${field}][between] with the victim's value twice`);
      }
    }
    const searched = r.search.find((f) => typeof row[f] === 'string' && row[f].trim() !== '');
    if (searched) {
      const term = String(row[searched]).trim();
      const like = `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      const expected = await countOf(visible().where((b) => r.search.forEach((f) => b.orWhere(`${r.table}.${f}`, 'ilike', like))));
      assertPage(w, r, await w.http.get(base).query({ search: term, take }).set(auth), expected, `search=${term}`);
    }
    if (r.dateRange && row[r.dateRange]) {
      const at = queryValue(row[r.dateRange]);
      const expected = await countOf(visible().where(`${r.table}.${r.dateRange}`, row[r.dateRange]));
      assertPage(w, r, await w.http.get(base).query({ startDate: at, endDate: at, take }).set(auth), expected, `startDate=endDate=${at}`);
    }
    if (w.foreignTenantId) {
      assertForbidden(await w.http.get(base).query({ 'where[tenantId]': w.foreignTenantId }).set(auth));
      assertForbidden(await w.http.get(`${base}/count`).query({ 'where[tenantId]': w.foreignTenantId }).set(auth));
      assertForbidden(await w.http.post(`${base}/search`).set(auth).send({ where: { tenantId: w.foreignTenantId } }));
    }
  }
  const tagVictim = r.tagRelation && w.victims.get(r.tagRelation.target.name);
  if (tagVictim) {
    const expected = await countOf(whereRelated(db, visible(), r, r.tagRelation!, viewer, { id: tagVictim.id }));
    assertPage(w, r, await w.http.get(base).query({ 'tags[]': tagVictim.id, take }).set(auth), expected, `tags[]=${tagVictim.id}`);
    assertCount(await w.http.get(`${base}/count`).query({ 'tags[]': tagVictim.id }).set(auth), expected, `GET ${base}/count tags[]=${tagVictim.id}`);
  }

  for (const rel of r.relations.values()) {
    const target = w.victims.get(rel.target.name);
    if (!target) continue;
    const expected = await countOf(whereRelated(db, visible(), r, rel, viewer, { id: target.id }));
    assert.is(expected, 0, `${r.name}.${rel.name}: the oracle finds nothing related to an invisible record`);
    await both({ [rel.name]: { id: target.id } }, expected, `where[${rel.name}][id]=${target.id}`);
    // Every other filterable field of the victim at once.
    const targetRow = await rowOf(w, rel.target, target.id);
    const conditions = Object.fromEntries([...rel.target.filters.keys()].filter((f) => f !== 'id' && targetRow[f] !== null && targetRow[f] !== undefined).map((f) => [f, targetRow[f]]));
    if (!Object.keys(conditions).length) continue;
    const query = Object.fromEntries(flatten(`where[${rel.name}]`, conditions));
    const matching = await countOf(whereRelated(db, visible(), r, rel, viewer, conditions));
    assertPage(w, r, await w.http.get(base).query({ ...query, take }).set(auth), matching, `GET ${base} where[${rel.name}][…] with the victim's values`);
    assertCount(await w.http.get(`${base}/count`).query(query).set(auth), matching, `GET ${base}/count where[${rel.name}][…] with the victim's values`);
  }
}

/** where[a]=1 and where[rel][b]=2 as query-string pairs. */
function flatten(prefix: string, where: Record<string, unknown>): Array<[string, string]> {
  return Object.entries(where).flatMap(([key, value]) =>
    value && typeof value === 'object' && !(value instanceof Date) ? flatten(`${prefix}[${key}]`, value as Record<string, unknown>) : [[`${prefix}[${key}]`, queryValue(value)] as [string, string]],
  );
}

function jsonWhere(where: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(where).map(([key, value]) => [key, jsonOf(value)]));
}

/** A where value as a search body carries it: lists stay lists (in, between, or). */
function jsonOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(jsonOf);
  return value && typeof value === 'object' && !(value instanceof Date) ? jsonWhere(value as Record<string, unknown>) : jsonValue(value);
}

/**
 * The probe (the viewer's own record, linked across to the victims) read on every path with
 * every relations[] path, and the list and search with every first-level relation: every record reached is visible.
 */
export async function attackRelations(w: AttackWorld, r: CompiledResource) {
  const probe = w.probes.get(r.name)!;
  const auth = w.viewer.auth;
  const base = `/api/${r.paths[0]}`;
  for (const path of r.paths) {
    for (const chunk of relationChunks(r)) {
      const res = await w.http.get(`/api/${path}/${probe.id}`).query({ 'relations[]': chunk }).set(auth);
      assert.is(res.status, 200, `/api/${path}/${probe.id} relations ${chunk}: ${show(res)}`);
      assertReached(w, r, [res.body], chunk, `GET /api/${path}/{probe}`);
    }
  }
  const first = [...r.relationPaths].filter((p) => !p.includes('.'));
  const list = await w.http.get(base).query({ 'relations[]': first, take: r.maxTake }).set(auth);
  assertPage(w, r, list, await countOf(visibleRows(w.db, r, w.viewer)), `GET ${base} with relations`);
  assertReached(w, r, list.body.items, first, `GET ${base}`);
  const search = await w.http.post(`${base}/search`).set(auth).send({ where: { id: probe.id }, relations: first });
  assertPage(w, r, search, 1, `POST ${base}/search with relations`);
  assertReached(w, r, search.body.items, first, `POST ${base}/search`);
}

/** Writable fields and relations of a resource that can name a victim: what attackWrites tries. */
export function foreignWrites(w: AttackWorld, r: CompiledResource) {
  const fields = r.writableFields.flatMap((f) => {
    const found = foreignTarget(w, r, f.name);
    return found ? [{ field: f.name, ...found }] : [];
  });
  const links = r.writableRelations.flatMap((rel) => {
    const victim = rel.kind === 'manyToMany' ? w.victims.get(rel.target.name) : undefined;
    return victim ? [{ rel, victim }] : [];
  });
  // A referencesBy field with each kind of record it may name whose resource has a victim.
  const kinds = r.referencesBy.flatMap((by) => {
    if (!r.fields.get(by.field)?.writable) return [];
    return [...by.targets].flatMap(([value, target]) => {
      const victim = w.victims.get(target.name);
      return victim ? [{ field: by.field, discriminator: by.discriminator, value, target, victim }] : [];
    });
  });
  const children = r.writableRelations.flatMap((rel) => {
    if (rel.kind !== 'hasMany') return [];
    const filled = filledFromParent(r, rel);
    return rel.target.writableFields.flatMap((f) => {
      const found = !filled.includes(f.name) && foreignTarget(w, rel.target, f.name);
      return found ? [{ rel, field: f.name, ...found }] : [];
    });
  });
  return { fields, kinds, links, children };
}

/**
 * Creates, replaces and modifications naming a victim: each reference field, each many-to-many
 * relation in both body forms, each child's reference, and in the tenant suite a tenantId, a
 * Tenant-Id header or an Organization-Id header of the other tenant. All refused; nothing written.
 * Every attack goes to the canonical path; the first also to each alias.
 */
export async function attackWrites(w: AttackWorld, r: CompiledResource) {
  const auth = w.viewer.auth;
  const body = w.bodies.get(r.name)!;
  const probe = w.probes.get(r.name);
  const countBefore = await tenantCount(w, r);
  const probeBefore = probe && (await rowOf(w, r, probe.id));
  const probeLinks = probe && (await linksOf(w.db, r, probe.id));
  const { fields, kinds, links, children } = foreignWrites(w, r);

  // Each attack: a whole body (create, replace), what a modification sends, and the check of the refusal.
  const attacks: Array<{ label: string; whole: Body; patch?: Body; refused: (res: Response, where: string) => void }> = [];
  for (const { field, target, victim } of fields) {
    attacks.push({
      label: `${r.name}.${field} naming a ${target.name} victim`,
      whole: { ...copy(body), [field]: victim.id },
      patch: { [field]: victim.id },
      refused: (res, where) => assertRefused(w, r, res, field, target, field, where),
    });
  }
  for (const { field, discriminator, value, target, victim } of kinds) {
    const pair = { [discriminator]: value, [field]: victim.id };
    const refused = (res: Response, where: string) => assertRefused(w, r, res, field, target, '', where);
    attacks.push({ label: `${r.name}.${field} naming a ${target.name} victim (${discriminator} ${value})`, whole: { ...copy(body), ...pair }, patch: pair, refused });
    // The id alone, checked with the kind the probe has stored.
    if (probe && probe[discriminator] === value) {
      attacks.push({ label: `${r.name}.${field} alone naming a ${target.name} victim`, whole: { ...copy(body), ...pair }, patch: { [field]: victim.id }, refused });
    }
  }
  for (const { rel, victim } of links) {
    const { [rel.idsKey!]: _ids, ...withoutIds } = copy(body);
    for (const form of [{ [rel.idsKey!]: [victim.id] }, { [rel.name]: [{ id: victim.id }] }]) {
      attacks.push({
        label: `${r.name} ${JSON.stringify(form)}`,
        whole: { ...withoutIds, ...form },
        patch: form,
        refused: (res, where) => assertRefused(w, r, res, rel.name, rel.target, '', where),
      });
    }
  }
  for (const { rel, field, target, victim } of children) {
    const [child] = copy(body)[rel.name] as Body[];
    const children = [{ ...child, [field]: victim.id }];
    attacks.push({
      label: `${r.name} with ${rel.name}.0.${field} naming a ${target.name} victim`,
      whole: { ...copy(body), [rel.name]: children },
      patch: { [rel.name]: children },
      refused: (res, where) => assertRefused(w, rel.target, res, `${rel.name}.0.${field}`, target, field, where),
    });
  }
  if (w.foreignTenantId) {
    attacks.push({ label: `${r.name} with tenantId of the other tenant`, whole: { ...copy(body), tenantId: w.foreignTenantId }, patch: { tenantId: w.foreignTenantId }, refused: (res) => assertForbidden(res) });
  }

  const run = async (path: string, attack: (typeof attacks)[number]) => {
    attack.refused(await w.http.post(`/api/${path}`).set(auth).set(w.createHeaders).send(attack.whole), `POST /api/${path}: ${attack.label}`);
    if (!probe) return;
    const url = `/api/${path}/${probe.id}`;
    attack.refused(await w.http.put(url).set(auth).send(attack.whole), `PUT ${url}: ${attack.label}`);
    if (attack.patch) attack.refused(await w.http.patch(url).set(auth).send(attack.patch), `PATCH ${url}: ${attack.label}`);
  };
  for (const attack of attacks) await run(r.paths[0], attack);
  for (const alias of r.paths.slice(1)) if (attacks.length) await run(alias, attacks[0]);

  const base = `/api/${r.paths[0]}`;
  if (w.foreignTenantId) {
    assertForbidden(await w.http.post(base).set(auth).set(w.createHeaders).set('Tenant-Id', w.foreignTenantId).send(copy(body)));
    const organization = r.organizationRoot && w.victims.get(r.organizationRoot.name);
    if (r.organizationHeader && organization) {
      const { organizationId: _left, ...rest } = copy(body);
      const res = await w.http.post(base).set(auth).set(r.organizationHeader, organization.id).send(rest);
      assertError(res, 400, 'organizationId must reference an existing organization');
    }
  }

  assert.is(await tenantCount(w, r), countBefore, `${r.name}: nothing was created`);
  if (probe) {
    assert.equal(await rowOf(w, r, probe.id), probeBefore, `${r.name}: the probe is unchanged`);
    assert.equal(await linksOf(w.db, r, probe.id), probeLinks, `${r.name}: the probe's links are unchanged`);
  }
}

/** GET /api/export/{resource}?format=json holds exactly the rows the viewer may see. */
export async function attackExport(w: AttackWorld, r: CompiledResource) {
  const res = await w.http.get(`/api/export/${r.name}`).query({ format: 'json' }).set(w.viewer.auth);
  assert.is(res.status, 200, show(res));
  for (const row of res.body) assertVisible(w, r, row, `export of ${r.name}`);
  assert.equal(res.body.map((row: Row) => String(row.id)).sort(), await idsOf(visibleRows(w.db, r, w.viewer)), `export of ${r.name}`);
}

/**
 * POST /api/import/{resource} with one row per way of naming a victim (each reference field the
 * import reads, each many-to-many relation, each child's reference): 400, every row named with
 * its reason, nothing written. In the tenant suite also: an Organization-Id header of the other
 * tenant refuses every row, and a row carrying a victim's id and tenant lands in the caller's.
 */
export async function attackImport(w: AttackWorld, r: CompiledResource) {
  const ignored = ignoredFields(r);
  const { fields, kinds, links, children } = foreignWrites(w, r);
  const body = Object.fromEntries(Object.entries(copy(w.bodies.get(r.name)!)).filter(([key]) => !ignored.has(key)));
  // An import's 403 row message names the imported resource's owner field, whichever body broke the rule.
  const forbidden = `the row is forbidden: a tenantId names another tenant${r.owner ? ` or ${r.owner} names another employee than yours` : ''}`;
  const isOwner = (holder: CompiledResource, field: string) => ownerScoped(w.viewer) && field === holder.owner;
  const rows: Array<{ row: Body; message: string }> = [];
  for (const { field, target, victim } of fields) {
    if (ignored.has(field)) continue;
    rows.push({ row: { ...body, [field]: victim.id }, message: isOwner(r, field) ? forbidden : `${field} must reference an existing ${target.name}` });
  }
  for (const { field, discriminator, value, target, victim } of kinds) {
    if (ignored.has(field)) continue;
    rows.push({ row: { ...body, [discriminator]: value, [field]: victim.id }, message: `${field} must reference an existing ${target.name}` });
  }
  for (const { rel, victim } of links) rows.push({ row: { ...body, [rel.idsKey!]: [victim.id] }, message: `${rel.name} must reference an existing ${rel.target.name}` });
  for (const { rel, field, target, victim } of children) {
    const [child] = body[rel.name] as Body[];
    const message = isOwner(rel.target, field) ? forbidden : `${rel.name}.0.${field} must reference an existing ${target.name}`;
    rows.push({ row: { ...body, [rel.name]: [{ ...child, [field]: victim.id }] }, message });
  }
  const organization = w.foreignTenantId && r.organizationHeader && r.organizationRoot ? w.victims.get(r.organizationRoot.name) : undefined;
  const send = (sent: Body[], headers: Record<string, string>) =>
    w.http.post(`/api/import/${r.name}`).set(w.viewer.auth).set(headers).set('Content-Type', 'application/json').send(JSON.stringify(sent));
  const before = await tenantCount(w, r);

  if (rows.length) {
    const res = await send(rows.map((x) => x.row), w.createHeaders);
    assert.is(res.status, 400, show(res));
    assert.is(res.body.imported, 0);
    rows.forEach(({ message }, i) => assert.ok(res.body.errors.some((e: Row) => e.row === i + 1 && e.message === message), `import row ${i + 1}: ${message} in ${show(res)}`));
  }
  if (organization) {
    const res = await send([body], { [r.organizationHeader!]: organization.id });
    assert.is(res.status, 400, show(res));
    assert.equal(res.body.errors, [{ row: 1, message: 'organizationId must reference an existing organization' }], show(res));
  }
  assert.is(await tenantCount(w, r), before, `${r.name}: nothing imported`);

  // Placement columns (id, tenantId) are ignored: the row lands in the viewer's tenant under an
  // id of its own, and the victim it named is untouched.
  const victim = w.victims.get(r.name);
  if (!w.foreignTenantId || !victim) return;
  const victimBefore = await rowOf(w, r, victim.id);
  const landed = await send([{ ...copy(w.bodies.get(r.name)!), id: victim.id, tenantId: w.foreignTenantId }], w.createHeaders);
  assert.is(landed.status, 201, show(landed));
  assert.equal(landed.body, { imported: 1, errors: [] });
  assert.is(await tenantCount(w, r), before + 1, `${r.name}: imported into the viewer's tenant`);
  assert.equal(await rowOf(w, r, victim.id), victimBefore, `${r.name}: the victim named by the imported row`);
}

/**
 * GET /api/export as `auth`: the zip holds one CSV per resource of `resources` (the viewer's role
 * may read them all), each with exactly the rows the viewer may see.
 */
export async function attackExportZip(w: AttackWorld, auth: Record<string, string>, resources: CompiledResource[], why: string) {
  const res = await w.http.get('/api/export').set(auth).buffer(true).parse(binary);
  assert.is(res.status, 200);
  const zip = new AdmZip(res.body);
  const entries = zip.getEntries().map((e) => e.entryName).sort();
  assert.equal(entries, resources.map((r) => `${r.name}.csv`).sort(), why);
  for (const entry of entries) {
    const r = resources.find((candidate) => `${candidate.name}.csv` === entry)!;
    const [header, ...rows] = parse(zip.getEntry(entry)!.getData().toString('utf8')) as string[][];
    assert.equal(rows.map((cells) => cells[header.indexOf('id')]).sort(), await idsOf(visibleRows(w.db, r, w.viewer)), entry);
  }
}

export interface ReportRun {
  slug: string;
  groupBy: string;
}

/**
 * Every report the caller may run, in each of its groupings (the figures are summed along another
 * path each time), and a runner that asks one as `auth` over `range`, checks no id the viewer may
 * not see comes back, and answers the seconds it reports.
 */
export async function reportRunner(w: AttackWorld, auth: Record<string, string>, range: Record<string, string>) {
  const catalogue = await w.http.get('/api/report').set(auth);
  assert.is(catalogue.status, 200);
  const reports: Array<{ slug: string; groupBy: string[] }> = catalogue.body.items;
  assert.ok(reports.length >= 4, `reports: ${reports.map((r) => r.slug)}`);
  const runs: ReportRun[] = reports.flatMap(({ slug, groupBy }) => groupBy.map((g) => ({ slug, groupBy: g })));
  const run = async ({ slug, groupBy }: ReportRun, query: Record<string, string>) => {
    const res = await w.http.get(`/api/report/${slug}`).query({ ...range, groupBy, ...query }).set(auth);
    assert.is(res.status, 200, `${slug} by ${groupBy} ${JSON.stringify(query)}: ${JSON.stringify(res.body)}`);
    const leaked = [...stringsIn(res.body)].filter((s) => w.foreignIds.has(s));
    assert.equal(leaked, [], `${slug} by ${groupBy} ${JSON.stringify(query)} answers ids of records the viewer may not see`);
    return secondsIn(res.body);
  };
  return { runs, run };
}
