// The owner rule on every route (the EMPLOYEE role reaches only records it owns): in one tenant, Ann and Bob have the EMPLOYEE role,
// here granted every permission (a copy of roles.yaml), so that the owner rule alone stands
// between Ann and Bob's records. Bob owns a record of every resource with an owner field; Ann
// owns one too, and the records Ann sees are linked across to Bob's past the API. Ann attacks
// through every route that reaches owned records: ids (404), lists with every filter, nested
// filters, relations at every depth, writes naming Bob's records (400, or 403 for the owner
// field), export, import, statistics and reports. The tenant's rows must come out byte for byte
// as they went in. Built from the compiled registry (helpers/isolation.ts): a new resource with
// an `owner:` is attacked with no test code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRoles } from '../../auth/roles.js';
import { ROLES_FILE } from '../../app/paths.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertNotFound } from '../helpers/error-envelope.js';
import {
  assertEveryRouteAttacked,
  assertSameSnapshot,
  countOf,
  crossLink,
  crud,
  definitionsAtLoad,
  reachesHidden,
  recordingHttp,
  ROUTES_WITHOUT_RECORDS,
  importAliasExemption,
  snapshot,
  visibleRows,
  whereRelated,
  writesCanName,
  type Recorded,
  type Row,
  type Snapshot,
  type Viewer,
} from '../helpers/isolation.js';
import { attackExport, attackExportZip, reportRunner, attackImport, attackLists, attackRecord, attackRelations, attackWrites, type AttackWorld } from '../helpers/isolation-attacks.js';
import { rolesGranting, type RolesCopy } from '../helpers/roles.js';
import { SampleRecords, type Body, type Tenant } from '../helpers/sample-records.js';

const atLoad = definitionsAtLoad();
const loaded = new Map(atLoad.map((r) => [r.name, r]));
const owned = (r: CompiledResource) => r.owner !== undefined;

/** What Ann's attacks reach of each resource: the tests registered, and the routes they must have requested. */
const reach = (r: CompiledResource) => ({
  record: owned(r),
  lists: owned(r) || [...r.relations.values()].some((rel) => owned(rel.target)),
  relations: reachesHidden(r, owned),
  writes: writesCanName(r, loaded, owned),
});

/** Hand-written routes over resources without an owner field. */
const WITHOUT_OWNER: Record<string, string> = {
  'POST /api/image-asset/upload': 'image assets have no owner field',
  'POST /api/image-assets/upload': 'image assets have no owner field',
  'GET /api/image-asset/:id/file': 'image assets have no owner field',
  'GET /api/image-assets/:id/file': 'image assets have no owner field',
  'GET /api/tags/getByName': 'tags have no owner field',
  'GET /api/tags/getByName/:name': 'tags have no owner field',
  'POST /api/invoice/:id/share-link': 'invoices have no owner field (share links are attacked across tenants in isolation-tenant.test.ts)',
  'GET /api/invoice/:id/share-link': 'invoices have no owner field (share links are attacked across tenants in isolation-tenant.test.ts)',
  'DELETE /api/invoice/:id/share-link/:linkId': 'invoices have no owner field (share links are attacked across tenants in isolation-tenant.test.ts)',
  'GET /api/public/invoice/:id/:token': 'no caller: a share link opens one invoice, which has no owner field',
  'GET /api/public/estimate/:id/:token': 'no caller: a share link opens one estimate, which has no owner field',
  'PUT /api/public/estimate/:id/:token': 'no caller: a share link answers one estimate, which has no owner field',
  'GET /api/tag/getByName': 'tags have no owner field',
  'GET /api/tag/getByName/:name': 'tags have no owner field',
};

/** Why a generated route needs no owner attack, or undefined when it does. */
function generatedRouteExemption(key: string): string | undefined {
  for (const r of atLoad.filter(crud)) {
    const can = reach(r);
    for (const path of r.paths) {
      const base = `/api/${path}`;
      const routes: Record<string, boolean> = {
        [`GET ${base}`]: can.lists,
        [`GET ${base}/pagination`]: can.lists,
        [`GET ${base}/count`]: can.lists,
        [`POST ${base}/search`]: can.lists,
        [`GET ${base}/:id`]: can.record || can.relations,
        [`POST ${base}`]: can.writes,
        [`PUT ${base}/:id`]: can.record || can.writes,
        [`PATCH ${base}/:id`]: can.record || can.writes,
        [`DELETE ${base}/:id`]: can.record,
        [`PUT ${base}/:id/recover`]: can.record,
        [`DELETE ${base}/:id/soft`]: can.record,
        [`POST ${base}/bulk`]: can.record,
        [`PATCH ${base}/bulk`]: can.record,
        [`DELETE ${base}/bulk`]: can.record,
        // The import path of each one-segment name: attacked where a write reaches an owned record.
        ...(path.includes('/') ? {} : { [`POST /api/import/${path}`]: can.writes }),
      };
      if (key in routes) return routes[key] ? undefined : `${r.name} has no owner field, and this route cannot reach a record that has one`;
    }
  }
  return undefined;
}

/** The hour Ann and the two hours Bob logged on one project, in a week no sample record comes near. */
const WEEK = { startDate: '2037-06-01', endDate: '2037-06-07' };
const ANN_SECONDS = 3600;

let t: TestApp;
let roles: RolesCopy;
let admin: Tenant;
let ann: Session & { employeeId?: string };
let bob: Session & { employeeId?: string };
let w: AttackWorld;
let requests: Recorded[];
let before: Snapshot;

const resource = (name: string) => t.engine.registry.get(name)!;
const named = (name: string, what: string, fn: (r: CompiledResource) => Promise<void>) => test(`${name}: ${what}`, () => fn(resource(name)));
const row = (r: CompiledResource, id: string) => t.db(r.table).where({ id }).first();

test.before(async () => {
  // EMPLOYEE with every permission: only the owner rule can refuse Ann.
  const table = loadRoles(ROLES_FILE);
  roles = rolesGranting({ EMPLOYEE: [...table.permissions].filter((p) => !table.grants.get('EMPLOYEE')!.has(p)) });
  t = await createTestApp({ appOptions: { rolesFile: roles.file } });
  const registry = t.engine.registry;
  const samples = new SampleRecords(t, registry, crud);
  admin = await newTenant(t, 'Acme');
  ann = await userWithRole(t, admin, 'EMPLOYEE', true);
  bob = await userWithRole(t, admin, 'EMPLOYEE', true);

  // Bob's record and Ann's of each resource with an owner, an ordinary record of every other.
  const victims = new Map<string, Row>();
  const probes = new Map<string, Row>();
  const ownedBy = async (r: CompiledResource, employeeId: string) =>
    // owner: id is the employee record itself.
    r.owner === 'id' ? row(r, employeeId) : samples.create(r, admin, { ...(await samples.body(r, admin)), [r.owner!]: employeeId });
  for (const r of registry.values()) {
    if (!crud(r)) continue;
    if (owned(r)) {
      victims.set(r.name, await ownedBy(r, bob.employeeId!));
      probes.set(r.name, await ownedBy(r, ann.employeeId!));
    } else {
      probes.set(r.name, await samples.create(r, admin));
    }
  }
  // Ann's bodies point at what Ann may see: her own record of every resource with an owner.
  const forAnn = (r: CompiledResource, body: Body): Body => {
    for (const field of r.writableFields) {
      const target = field.definition.references && registry.get(field.definition.references);
      if (target && owned(target) && field.name in body) body[field.name] = probes.get(target.name)!.id;
    }
    // A referencesBy field naming an owned kind of record: Ann's own of that kind.
    for (const by of r.referencesBy) {
      const target = by.targets.get(body[by.discriminator] as string);
      if (target && owned(target) && by.field in body) body[by.field] = probes.get(target.name)!.id;
    }
    for (const rel of r.writableRelations) {
      if (rel.kind === 'manyToMany' && owned(rel.target) && rel.idsKey! in body) body[rel.idsKey!] = [probes.get(rel.target.name)!.id];
      if (rel.kind === 'hasMany' && Array.isArray(body[rel.name])) body[rel.name] = (body[rel.name] as Body[]).map((child) => forAnn(rel.target, child));
    }
    return body;
  };
  const bodies = new Map<string, Body>();
  for (const r of registry.values()) if (crud(r)) bodies.set(r.name, forAnn(r, await samples.body(r, admin)));

  // Ann's hour and Bob's two hours on one project, inside the report week.
  const project = await samples.create(resource('organization-project'), admin);
  for (const [who, from, to] of [[ann, '08', '09'], [bob, '10', '12']] as const) {
    const res = await t.http.post('/api/time-log').set(admin.auth).send({
      employeeId: who.employeeId, projectId: project.id, organizationId: admin.organizationId, startedAt: `2037-06-02T${from}:00:00.000Z`, stoppedAt: `2037-06-02T${to}:00:00.000Z`, isBillable: true,
    });
    assert.is(res.status, 201, JSON.stringify(res.body));
  }

  const recording = recordingHttp(t);
  requests = recording.requests;
  const viewer: Viewer = { auth: ann.auth, tenantId: admin.tenantId, userId: ann.userId, ownEmployeeId: ann.employeeId };
  w = { db: t.db, registry, viewer, victims, probes, bodies, http: recording.http, createHeaders: {}, foreignIds: new Set(), samples };
  await crossLink(w);
  for (const map of [victims, probes]) for (const [name, record] of map) map.set(name, await row(resource(name), record.id));
  // Every owned row that is not Ann's: Bob's, and those of the employees sample records made.
  for (const r of registry.values()) {
    if (!owned(r)) continue;
    for (const id of await t.db(r.table).where({ tenantId: admin.tenantId }).whereNot(r.owner!, ann.employeeId!).pluck('id')) w.foreignIds.add(String(id));
  }
  before = await snapshot(t.db, admin.tenantId);
});
test.after(async () => {
  await t?.close();
  roles?.remove();
});

for (const r of atLoad.filter(crud)) {
  const can = reach(r);
  if (can.record) named(r.name, "another employee's record is a 404 to read (with every relation), replace, modify and delete, on every path", (x) => attackRecord(w, x));
  if (can.lists) named(r.name, "lists and searches with each filter and nested filter aimed at another employee's records hold only the caller's", (x) => attackLists(w, x));
  if (can.relations) named(r.name, "relations at every depth load none of another employee's records, even linked to them", (x) => attackRelations(w, x));
  if (can.writes) named(r.name, "creates, replaces and modifications naming another employee's records are refused and write nothing", (x) => attackWrites(w, x));
  if (can.writes) named(r.name, "an import naming another employee's records is refused", (x) => attackImport(w, x));
}
for (const { name } of atLoad) named(name, "the export holds exactly the rows the caller's owner rule lets it see", (r) => attackExport(w, r));

test("the export zip holds, resource by resource, exactly the rows the caller's owner rule lets it see", () => attackExportZip(w, ann.auth, atLoad, 'every resource: the role holds every permission here'));

test("statistics: another employee's are a 404; the caller's count only its own time logs", async () => {
  const employee = resource('employee');
  const timeLog = resource('time-log');
  const task = resource('task');
  const members = [...task.relations.values()].find((rel) => rel.kind === 'manyToMany' && rel.target.name === employee.name)!;
  const path = (id: string) => `/api/${employee.paths[0]}/${id}/statistics`;
  assertNotFound(await w.http.get(path(bob.employeeId!)).set(ann.auth));
  const res = await w.http.get(path(ann.employeeId!)).set(ann.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  const logs = visibleRows(t.db, timeLog, w.viewer).where('employeeId', ann.employeeId!);
  assert.is(res.body.timeLogCount, await countOf(logs));
  const [{ sum }] = await logs.clone().sum({ sum: 'duration' });
  assert.is(res.body.totalSeconds, Number(sum ?? 0));
  assert.is(res.body.tasksAssigned, await countOf(whereRelated(t.db, visibleRows(t.db, task, w.viewer), task, members, w.viewer, { id: ann.employeeId! })));
});

test("reports: another employee's id finds nothing; the caller's figures count only its own time", async () => {
  const { runs, run } = await reportRunner(w, ann.auth, WEEK);
  for (const report of runs) {
    const bobs = await run(report, { 'employeeId[]': bob.employeeId! });
    assert.ok(bobs.every((s) => s === 0), `${report.slug} by ${report.groupBy} counts Bob's time for Ann: ${bobs}`);
    for (const query of [{}, { 'employeeId[]': ann.employeeId! }] as Array<Record<string, string>>) {
      assert.is(Math.max(...(await run(report, query))), ANN_SECONDS, `${report.slug} by ${report.groupBy} ${JSON.stringify(query)}: Ann's hour, not Bob's two`);
    }
  }
});

test("the tenant's rows are byte for byte what they were before the attacks", async () => {
  assertSameSnapshot(before, await snapshot(t.db, admin.tenantId), "the tenant's rows");
});

test('every route that can reach an owned record was attacked, or says why it needs no attack', () => {
  assertEveryRouteAttacked(t, requests, (key) => ROUTES_WITHOUT_RECORDS[key] ?? WITHOUT_OWNER[key] ?? generatedRouteExemption(key) ?? importAliasExemption(atLoad, key));
});

test.run();
