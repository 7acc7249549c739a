// The owner rule: a caller whose role is EMPLOYEE sees and writes only the records
// whose owner field is its own employee; other ids are 404, writing for someone else is 403.
// Proven on a fixture resource (timecard, owner employeeId) beside the project's own resources.
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES_DIR } from '../../app/paths.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';

const fixtureDir = fileURLToPath(new URL('../fixtures/owner', import.meta.url));
const fixtureMigrations = fileURLToPath(new URL('../fixtures/owner-migrations', import.meta.url));

type Worker = Session & { employeeId?: string };

let t: TestApp;
let admin: Session & { organizationId: string };
let ann: Worker;
let bob: Worker;
let annCard: string;
let bobCard: string;

const card = (id: string) => t.db('timecard').where({ id }).first();
const cardCount = async () => Number((await t.db('timecard').count({ n: '*' }))[0].n);

test.before(async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, fixtureDir], migrationDirs: [fixtureMigrations] });
  admin = await newTenant(t);
  ann = await userWithRole(t, admin, 'EMPLOYEE', true);
  bob = await userWithRole(t, admin, 'EMPLOYEE', true);
  annCard = (await t.http.post('/api/timecard').set(admin.auth).send({ employeeId: ann.employeeId, minutes: 60 })).body.id;
  bobCard = (await t.http.post('/api/timecard').set(admin.auth).send({ employeeId: bob.employeeId, minutes: 90 })).body.id;
  assert.ok(annCard && bobCard);
});
test.after(async () => {
  await t.close();
});

test('an EMPLOYEE lists only its own records, and the total counts only those', async () => {
  const list = await t.http.get('/api/timecard').set(ann.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  assert.equal(list.body.items.map((c: { id: string }) => c.id), [annCard]);
  assert.is(list.body.total, 1);
  const filtered = await t.http.get(`/api/timecard?where[employeeId]=${bob.employeeId}`).set(ann.auth);
  assert.equal(filtered.body, { items: [], total: 0 });
  const search = await t.http.post('/api/timecard/search').set(ann.auth).send({ where: { employeeId: bob.employeeId } });
  assert.equal(search.body, { items: [], total: 0 });
});

test("another employee's record is a 404 for GET, PUT, PATCH and DELETE, and stays unchanged", async () => {
  const before = await card(bobCard);
  const path = `/api/timecard/${bobCard}`;
  assertNotFound(await t.http.get(path).set(ann.auth));
  assertNotFound(await t.http.put(path).set(ann.auth).send({ minutes: 1 }));
  assertNotFound(await t.http.put(path).set(ann.auth).send({ employeeId: ann.employeeId, minutes: 1 }));
  assertNotFound(await t.http.patch(path).set(ann.auth).send({ minutes: 1 }));
  assertNotFound(await t.http.delete(path).set(ann.auth));
  assert.equal(await card(bobCard), before);
});

test('an EMPLOYEE creates with its own employee as the default owner', async () => {
  const res = await t.http.post('/api/timecard').set(ann.auth).send({ minutes: 30 });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.employeeId, ann.employeeId);
  assert.is(res.body.organizationId, admin.organizationId);
  assert.is((await card(res.body.id)).employeeId, ann.employeeId);
  const explicit = await t.http.post('/api/timecard').set(ann.auth).send({ employeeId: ann.employeeId!.toUpperCase(), minutes: 5 });
  assert.is(explicit.status, 201, JSON.stringify(explicit.body));
  assert.is(explicit.body.employeeId, ann.employeeId);
});

test('an EMPLOYEE creating or moving a record to another employee is a 403, and nothing is written', async () => {
  const before = await cardCount();
  assertForbidden(await t.http.post('/api/timecard').set(ann.auth).send({ employeeId: bob.employeeId, minutes: 10 }));
  assert.is(await cardCount(), before);
  const own = await card(annCard);
  assertForbidden(await t.http.patch(`/api/timecard/${annCard}`).set(ann.auth).send({ employeeId: bob.employeeId }));
  assertForbidden(await t.http.put(`/api/timecard/${annCard}`).set(ann.auth).send({ employeeId: bob.employeeId, minutes: 1 }));
  assert.equal(await card(annCard), own);
});

test('an EMPLOYEE reads, replaces, modifies and deletes its own records', async () => {
  const read = await t.http.get(`/api/timecard/${annCard}?relations[]=employee`).set(ann.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.is(read.body.employee.id, ann.employeeId);
  const replaced = await t.http.put(`/api/timecard/${annCard}`).set(ann.auth).send({ minutes: 45 });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.is(replaced.body.employeeId, ann.employeeId);
  const patched = await t.http.patch(`/api/timecard/${annCard}`).set(ann.auth).send({ minutes: 50 });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.is((await card(annCard)).minutes, 50);
  const extra = await t.http.post('/api/timecard').set(ann.auth).send({ minutes: 1 });
  assert.is((await t.http.delete(`/api/timecard/${extra.body.id}`).set(ann.auth)).status, 204);
  assert.not.ok(await card(extra.body.id));
});

test('an admin (not owner-scoped) sees and writes every record, and must name the employee', async () => {
  const list = await t.http.get('/api/timecard').set(admin.auth);
  assert.ok(list.body.items.some((c: { id: string }) => c.id === bobCard));
  assert.ok(list.body.items.some((c: { id: string }) => c.id === annCard));
  assert.is(list.body.total, await cardCount());
  assert.is((await t.http.get(`/api/timecard/${bobCard}`).set(admin.auth)).status, 200);
  const moved = await t.http.patch(`/api/timecard/${bobCard}`).set(admin.auth).send({ minutes: 91 });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assertError(await t.http.post('/api/timecard').set(admin.auth).send({ minutes: 1 }), 400, 'employeeId should not be empty');
  const manager = await userWithRole(t, admin, 'MANAGER');
  const managed = await t.http.get('/api/timecard').set(manager.auth);
  assert.is(managed.body.total, await cardCount(), 'MANAGER has TIME_TRACKER and no owner rule');
});

test('an EMPLOYEE without an employee record sees nothing and cannot write', async () => {
  const loner = await userWithRole(t, admin, 'EMPLOYEE', false);
  const list = await t.http.get('/api/timecard').set(loner.auth);
  assert.equal(list.body, { items: [], total: 0 });
  assertNotFound(await t.http.get(`/api/timecard/${annCard}`).set(loner.auth));
  const before = await cardCount();
  assertError(await t.http.post('/api/timecard').set(loner.auth).send({ minutes: 1 }), 400, 'employeeId should not be empty');
  assertForbidden(await t.http.post('/api/timecard').set(loner.auth).send({ employeeId: ann.employeeId, minutes: 1 }));
  assert.is(await cardCount(), before);
});

test('roles without the permission get a 403 whatever they own', async () => {
  for (const role of ['CANDIDATE', 'VIEWER', 'INTERVIEWER']) {
    const session = await userWithRole(t, admin, role, true);
    assertForbidden(await t.http.get('/api/timecard').set(session.auth));
    assertForbidden(await t.http.post('/api/timecard').set(session.auth).send({ minutes: 1 }));
  }
});

test('the owner rule reaches relations too: an EMPLOYEE loads only its own employee record', async () => {
  const list = await t.http.get('/api/timecard?relations[]=employee').set(ann.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  for (const item of list.body.items) assert.is(item.employee.id, ann.employeeId);
  assertForbidden(await t.http.get(`/api/employee/${bob.employeeId}`).set(ann.auth));
});

test.run();
