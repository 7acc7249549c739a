// Tenant isolation on every route (no caller reaches another tenant's records): tenant B holds a record of every resource, each
// linked across to tenant A's records past the API (as a corrupt row would be), and tenant A's
// SUPER_ADMIN attacks them through every route: ids (404), lists with every filter, nested
// filters, search, dates, tags, relations at every depth, writes naming them (400/403), export,
// import, statistics, reports, uploads, the tag lookup by name and the account routes. B's rows
// and stored files must come out byte for byte as they went in, and every route of the router
// must have been attacked or say why it needs no attack. Built from the compiled registry
// (helpers/isolation.ts): a new YAML resource is attacked with no test code.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { newTenant, PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';
import { png } from '../helpers/images.js';
import {
  assertEveryRouteAttacked,
  assertSameSnapshot,
  countOf,
  crossLink,
  crud,
  definitionsAtLoad,
  recordingHttp,
  ROUTES_WITHOUT_RECORDS,
  importAliasExemption,
  snapshot,
  storedFiles,
  stringsIn,
  visibleRows,
  whereRelated,
  type Recorded,
  type Row,
  type Snapshot,
  type Viewer,
} from '../helpers/isolation.js';
import { attackExport, attackExportZip, reportRunner, attackImport, attackLists, attackRecord, attackRelations, attackWrites, type AttackWorld } from '../helpers/isolation-attacks.js';
import { SampleRecords, type Tenant } from '../helpers/sample-records.js';
import { publicUrl, share } from '../helpers/share-links.js';
import { MULTIPART, multipartBody } from '../helpers/upload.js';

const atLoad = definitionsAtLoad();
const crudNames = atLoad.filter(crud).map((r) => r.name);

/** The week the report checks look at: no sample record's date comes near it. */
const WEEK = { startDate: '2037-06-01', endDate: '2037-06-07' };
/** A's one hour in that week, on a clean employee and project (B's stray two hours point at them; B's own three hours do not). */
const OWN_SECONDS = 3600;

let t: TestApp;
let a: Tenant;
let b: Tenant;
let w: AttackWorld;
let requests: Recorded[];
let before: Snapshot;
let filesBefore: Record<string, string>;
/** A's employee and project that only A's hour and B's stray two hours name. */
let clean: { employee: Row; project: Row };
/** B's employee and project with three hours of B's in the report week. */
let theirs: { employee: Row; project: Row };
/** B's uploaded image (a record with a stored file). */
let image: Row;
/** B's share link to its invoice, with its token. */
let theirLink: Row;

const resource = (name: string) => t.engine.registry.get(name)!;
const named = (name: string, what: string, fn: (r: CompiledResource) => Promise<void>) => test(`${name}: ${what}`, () => fn(resource(name)));
const row = (r: CompiledResource, id: string) => t.db(r.table).where({ id }).first();

test.before(async () => {
  t = await createTestApp();
  const registry = t.engine.registry;
  const samples = new SampleRecords(t, registry, crud);
  a = await newTenant(t, 'Alpha');
  b = await newTenant(t, 'Beta');
  const victims = new Map<string, Row>();
  const probes = new Map<string, Row>();
  const bodies = new Map<string, Record<string, unknown>>();
  for (const r of registry.values()) {
    if (crud(r)) {
      victims.set(r.name, await samples.create(r, b));
      probes.set(r.name, await samples.create(r, a));
      bodies.set(r.name, await samples.body(r, a));
    } else {
      // No routes (users, roles): a row each tenant already has.
      const theirs = await t.db(r.table).where({ tenantId: b.tenantId }).first();
      const ours = await t.db(r.table).where({ tenantId: a.tenantId }).first();
      if (theirs) victims.set(r.name, theirs);
      if (ours) probes.set(r.name, ours);
    }
  }

  // One hour of A's on a clean employee and project, inside the report week.
  clean = { employee: await samples.create(resource('employee'), a), project: await samples.create(resource('organization-project'), a) };
  const hour = await t.http.post('/api/time-log').set(a.auth).send({
    employeeId: clean.employee.id, projectId: clean.project.id, organizationId: a.organizationId,
    startedAt: '2037-06-02T08:00:00.000Z', stoppedAt: '2037-06-02T09:00:00.000Z', isBillable: true,
  });
  assert.is(hour.status, 201, JSON.stringify(hour.body));
  // Two hours of B's, pointed at A's clean employee, project and organization past the API.
  const stray = await samples.create(resource('time-log'), b);
  await t.db('time_log').where({ id: stray.id }).update({
    employeeId: clean.employee.id, projectId: clean.project.id, organizationId: a.organizationId,
    startedAt: new Date('2037-06-02T10:00:00.000Z'), stoppedAt: new Date('2037-06-02T12:00:00.000Z'),
  });
  // And three hours of B's own, on a clean employee and project of B's: what a report forgetting
  // the tenant would add to A's figures.
  theirs = { employee: await samples.create(resource('employee'), b), project: await samples.create(resource('organization-project'), b) };
  const own = await t.http.post('/api/time-log').set(b.auth).send({
    employeeId: theirs.employee.id, projectId: theirs.project.id, organizationId: b.organizationId,
    startedAt: '2037-06-03T08:00:00.000Z', stoppedAt: '2037-06-03T11:00:00.000Z', isBillable: true,
  });
  assert.is(own.status, 201, JSON.stringify(own.body));
  // B's task with A's clean employee among its members.
  const members = [...resource('task').relations.values()].find((rel) => rel.kind === 'manyToMany' && rel.target.name === 'employee')!;
  await t.db(members.through!.table).insert({ [members.through!.from]: victims.get('task')!.id, [members.through!.to]: clean.employee.id });

  // B's uploaded image: a record and a stored file.
  const upload = await t.http.post('/api/image-asset/upload').set(b.auth).set('Organization-Id', b.organizationId).set('Content-Type', MULTIPART)
    .send(multipartBody({ name: 'file', filename: 'beta.png', type: 'image/png', data: png(3, 2) }));
  assert.is(upload.status, 201, JSON.stringify(upload.body));
  image = upload.body;

  const recording = recordingHttp(t);
  requests = recording.requests;
  const viewer: Viewer = { auth: a.auth, tenantId: a.tenantId, userId: a.userId };
  const foreignIds = new Set<string>([b.tenantId]);
  for (const r of registry.values()) for (const id of await t.db(r.table).where({ tenantId: b.tenantId }).pluck('id')) foreignIds.add(String(id));
  w = { db: t.db, registry, viewer, victims, probes, bodies, http: recording.http, createHeaders: { 'Organization-Id': a.organizationId }, foreignTenantId: b.tenantId, foreignIds, samples };
  await crossLink(w);
  // The rows as linked, for the attacks that read a victim's values.
  for (const map of [victims, probes]) for (const [name, record] of map) map.set(name, await row(resource(name), record.id));

  // B's share link to its invoice, linked to A's records like every victim.
  theirLink = await share(t, b, w.victims.get('invoice')!.id);
  before = await snapshot(t.db, b.tenantId);
  filesBefore = storedFiles(t.config.uploadDir, b.tenantId);
  assert.ok(Object.keys(filesBefore).length >= 1, "B's upload is stored");
});
test.after(async () => {
  await t?.close();
});

for (const name of crudNames) {
  named(name, "the other tenant's record is a 404 to read (with every relation), replace, modify and delete, on every path", (r) => attackRecord(w, r));
  named(name, "lists and searches with each filter, nested filter, search, dates and tags aimed at the other tenant hold only the caller's records", (r) => attackLists(w, r));
  if (atLoad.find((r) => r.name === name)!.relationPaths.size) named(name, "relations at every depth load none of the other tenant's records, even linked to them", (r) => attackRelations(w, r));
  named(name, "creates, replaces and modifications naming the other tenant's records are refused and write nothing", (r) => attackWrites(w, r));
  named(name, "an import naming the other tenant's records is refused; a row carrying its id lands in the caller's tenant", (r) => attackImport(w, r));
}
for (const { name } of atLoad) named(name, "the export holds exactly the caller tenant's rows", (r) => attackExport(w, r));

test("the export zip holds, resource by resource, exactly the caller tenant's rows", () => attackExportZip(w, a.auth, atLoad, 'a SUPER_ADMIN exports every resource'));

test("tags by name: the other tenant's tag name is a 404 on both spellings and every path; the caller's own is found", async () => {
  const theirs = w.victims.get('tag')!;
  const ours = w.probes.get('tag')!;
  for (const path of resource('tag').paths) {
    const base = `/api/${path}/getByName`;
    assertNotFound(await w.http.get(`${base}/${encodeURIComponent(theirs.name)}`).set(a.auth));
    assertNotFound(await w.http.get(base).query({ name: theirs.name }).set(a.auth));
    assertForbidden(await w.http.get(base).query({ name: ours.name, tenantId: b.tenantId }).set(a.auth));
    const found = await w.http.get(`${base}/${encodeURIComponent(ours.name)}`).set(a.auth);
    assert.is(found.status, 200, JSON.stringify(found.body));
    assert.is(found.body.id, ours.id);
    assert.is((await w.http.get(base).query({ name: ours.name }).set(a.auth)).body.id, ours.id);
  }
});

test("statistics: the other tenant's employee is a 404; the caller's employees count none of the other tenant's time logs or tasks", async () => {
  const employee = resource('employee');
  const timeLog = resource('time-log');
  const task = resource('task');
  const members = [...task.relations.values()].find((rel) => rel.kind === 'manyToMany' && rel.target.name === employee.name)!;
  const path = (id: string) => `/api/${employee.paths[0]}/${id}/statistics`;
  assertNotFound(await w.http.get(path(w.victims.get('employee')!.id)).set(a.auth));
  // The clean employee (B's stray hours and B's task name it) and the probe (every victim points at it).
  for (const id of [clean.employee.id, w.probes.get('employee')!.id]) {
    const res = await w.http.get(path(id)).set(a.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    const logs = visibleRows(t.db, timeLog, w.viewer).where('employeeId', id);
    assert.is(res.body.timeLogCount, await countOf(logs));
    const [{ sum }] = await logs.clone().sum({ sum: 'duration' });
    assert.is(res.body.totalSeconds, Number(sum ?? 0));
    assert.is(res.body.tasksAssigned, await countOf(whereRelated(t.db, visibleRows(t.db, task, w.viewer), task, members, w.viewer, { id })));
  }
  assert.is((await w.http.get(path(clean.employee.id)).set(a.auth)).body.totalSeconds, OWN_SECONDS, "A's hour, not B's two");
});

test("reports: filters naming the other tenant's organization, employee or project find nothing; the caller's figures count none of its time", async () => {
  const { runs, run } = await reportRunner(w, a.auth, WEEK);
  for (const report of runs) {
    const foreign: Array<Record<string, string>> = [
      { organizationId: w.victims.get('organization')!.id },
      { organizationId: b.organizationId },
      { 'employeeId[]': w.victims.get('employee')!.id },
      { 'employeeId[]': theirs.employee.id },
      { 'projectId[]': w.victims.get('organization-project')!.id },
      { 'projectId[]': theirs.project.id },
    ];
    for (const query of foreign) {
      const seconds = await run(report, query);
      assert.ok(seconds.every((s) => s === 0), `${report.slug} by ${report.groupBy} ${JSON.stringify(query)} counts time: ${seconds}`);
    }
    const own: Array<Record<string, string>> = [{}, { organizationId: a.organizationId }, { 'employeeId[]': clean.employee.id }, { 'projectId[]': clean.project.id }];
    for (const query of own) {
      const seconds = await run(report, query);
      assert.is(Math.max(...seconds), OWN_SECONDS, `${report.slug} by ${report.groupBy} ${JSON.stringify(query)}: A's hour, not B's two`);
    }
  }
});

test("uploads: the other tenant's image file is a 404 and stays; an upload into its organization is refused and stores nothing", async () => {
  const assets = resource('image-asset');
  const count = () => countOf(t.db(assets.table).where({ tenantId: a.tenantId }));
  const rows = await count();
  const ours = storedFiles(t.config.uploadDir, a.tenantId);
  for (const path of assets.paths) {
    assertNotFound(await w.http.get(`/api/${path}/${image.id}/file`).set(a.auth));
    assertNotFound(await w.http.delete(`/api/${path}/${image.id}`).set(a.auth));
    const res = await w.http.post(`/api/${path}/upload`).set(a.auth).set('Organization-Id', b.organizationId).set('Content-Type', MULTIPART)
      .send(multipartBody({ name: 'file', filename: 'alpha.png', type: 'image/png', data: png(2, 2) }));
    assertError(res, 400, 'organizationId must reference an existing organization');
  }
  assert.is(await count(), rows);
  assert.equal(storedFiles(t.config.uploadDir, a.tenantId), ours);
  assert.ok(await row(assets, image.id), "B's image record is still there");
});

test("account routes answer the caller's own tenant and refuse to name the other", async () => {
  const me = await w.http.get('/api/user/me').set(a.auth);
  assert.is(me.body.tenantId, a.tenantId);
  assertForbidden(await w.http.put('/api/user/me').set(a.auth).send({ tenantId: b.tenantId }));
  const check = await w.http.get('/api/auth/check').set(a.auth);
  assert.is(check.body.tenantId, a.tenantId);
  const email = uniqueEmail('cross');
  assertForbidden(await w.http.post('/api/auth/register').set(a.auth).send({ user: { email, role: 'EMPLOYEE', tenantId: b.tenantId }, password: PASSWORD }));
  assert.is(await countOf(t.db('user').where({ email })), 0);
  const renamed = await w.http.post('/api/tenant').set(a.auth).send({ name: 'Alpha renamed' });
  assert.is(renamed.status, 200, JSON.stringify(renamed.body));
  assert.is(renamed.body.id, a.tenantId);
});

test("share links: the other tenant's invoice and links are 404s to create, list and revoke; no token opens a record across tenants, nor shows a foreign one", async () => {
  const victim = w.victims.get('invoice')!;
  const probe = w.probes.get('invoice')!;
  const kindOf = (row: Row) => (row.isEstimate ? 'estimate' : 'invoice');
  const links = () => countOf(t.db('invoice_share_link').where({ invoiceId: victim.id }));
  const theirs = await links();
  assertNotFound(await w.http.post(`/api/invoice/${victim.id}/share-link`).set(a.auth).send({}));
  assertNotFound(await w.http.get(`/api/invoice/${victim.id}/share-link`).set(a.auth));
  assertNotFound(await w.http.delete(`/api/invoice/${victim.id}/share-link/${theirLink.id}`).set(a.auth));
  assertNotFound(await w.http.delete(`/api/invoice/${probe.id}/share-link/${theirLink.id}`).set(a.auth));
  assert.is(await links(), theirs);

  // A's own link to A's invoice, whose organization, contact and items B's records were linked into.
  const created = await w.http.post(`/api/invoice/${probe.id}/share-link`).set(a.auth).send({});
  assert.is(created.status, 201, JSON.stringify(created.body));
  const listed = await w.http.get(`/api/invoice/${probe.id}/share-link`).set(a.auth);
  assert.equal(listed.body.items.map((l: Row) => l.id), [created.body.id]);
  const all = 'relations[]=organization&relations[]=fromOrganization&relations[]=toContact&relations[]=invoiceItems.employee&relations[]=invoiceItems.project';
  const ours = await w.http.get(`${publicUrl(kindOf(probe), probe.id, created.body.token)}?${all}`);
  assert.is(ours.status, 200, JSON.stringify(ours.body));
  // Its own id fields hold what was written past the API; no record they name may be loaded.
  const loaded = (view: Row): string[] => [
    view.organization?.id, view.fromOrganization?.id, view.toContact?.id,
    ...view.invoiceItems.flatMap((item: Row) => [item.id, item.employee?.id, item.project?.id]),
  ].filter(Boolean);
  assert.equal(loaded(ours.body).filter((id) => w.foreignIds.has(id)), [], "A's shared invoice loads none of B's records");
  assert.is(ours.body.fromOrganization, null, "the issuer was set to B's organization: not loaded");
  assert.not.ok(ours.body.invoiceItems.some((item: Row) => item.id === w.victims.get('invoice-item')!.id), "B's item moved under A's invoice is not loaded");
  // And B's customer sees none of A's records, though B's invoice was linked to them.
  const theirView = await w.http.get(`${publicUrl(kindOf(victim), victim.id, theirLink.token)}?${all}`);
  assert.is(theirView.status, 200, JSON.stringify(theirView.body));
  const ownIds = new Set([...w.probes.values()].map((row) => String(row.id)));
  assert.equal(loaded(theirView.body).filter((id) => ownIds.has(id)), [], "B's shared invoice loads none of A's records");
  assert.not.ok(stringsIn(theirView.body).has(a.tenantId) || stringsIn(ours.body).has(b.tenantId), 'no tenant id is shown');

  // A token opens its own record only: A's on B's invoice, B's on A's, under every public route.
  for (const [id, token] of [[victim.id, created.body.token], [probe.id, theirLink.token]]) {
    for (const kind of ['invoice', 'estimate'] as const) assertNotFound(await w.http.get(publicUrl(kind, id, token)));
    assertNotFound(await w.http.put(publicUrl('estimate', id, token)).send({ status: 'ACCEPTED' }));
  }
  assertNotFound(await w.http.delete(`/api/invoice/${probe.id}/share-link/${created.body.id}`).set(b.auth));
  assert.is((await w.http.delete(`/api/invoice/${probe.id}/share-link/${created.body.id}`).set(a.auth)).status, 204);
});

test("the other tenant's rows and stored files are byte for byte what they were before the attacks", async () => {
  assertSameSnapshot(before, await snapshot(t.db, b.tenantId), "tenant B's rows");
  assert.equal(storedFiles(t.config.uploadDir, b.tenantId), filesBefore, "tenant B's stored files");
});

test('every route of the router and of the OpenAPI document was attacked, or says why it names no record', () => {
  assertEveryRouteAttacked(t, requests, (key) => ROUTES_WITHOUT_RECORDS[key] ?? importAliasExemption(atLoad, key));
});

test.run();
