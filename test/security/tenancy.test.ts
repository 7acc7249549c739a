// The tenant always comes from the token. Another tenant's records are invisible
// (404, never 403), cannot be written, linked or referenced; naming another tenant is a 403.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';

type Admin = Session & { organizationId: string };

let t: TestApp;
let a: Admin;
let b: Admin;
/** Records of tenant B that tenant A probes. */
const theirs = { employee: '', tag: '', skill: '', userId: '' };
let mine = { employee: '', tag: '' };

const row = (table: string, id: string) => t.db(table).where({ id }).first();

test.before(async () => {
  t = await createTestApp();
  a = await newTenant(t, 'Alpha');
  b = await newTenant(t, 'Beta');
  theirs.userId = b.userId;
  theirs.employee = (await t.http.post('/api/employee').set(b.auth).send({ firstName: 'Bea', lastName: 'B', userId: b.userId })).body.id;
  theirs.tag = (await t.http.post('/api/tags').set(b.auth).send({ name: 'beta-tag', color: 'blue' })).body.id;
  theirs.skill = (await t.http.post('/api/skill').set(b.auth).send({ name: 'beta-skill' })).body.id;
  const tag = await t.http.post('/api/tags').set(a.auth).send({ name: 'alpha-tag', color: 'red' });
  const employee = await t.http.post('/api/employee').set(a.auth).send({ firstName: 'Al', lastName: 'A', userId: a.userId, tagIds: [tag.body.id] });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  mine = { employee: employee.body.id, tag: tag.body.id };
});
test.after(async () => {
  await t.close();
});

test("another tenant's id is a 404 for GET, PUT, PATCH and DELETE, and the record is unchanged", async () => {
  const before = await row('employee', theirs.employee);
  const path = `/api/employee/${theirs.employee}`;
  assertNotFound(await t.http.get(path).set(a.auth));
  assertNotFound(await t.http.get(`${path}?relations[]=user`).set(a.auth));
  assertNotFound(await t.http.put(path).set(a.auth).send({ firstName: 'Hacked', lastName: 'X', userId: a.userId }));
  assertNotFound(await t.http.patch(path).set(a.auth).send({ firstName: 'Hacked' }));
  assertNotFound(await t.http.delete(path).set(a.auth));
  assert.equal(await row('employee', theirs.employee), before);

  for (const [resource, id] of [['tags', theirs.tag], ['skill', theirs.skill], ['organization', b.organizationId]]) {
    const snapshot = await row(resource === 'tags' ? 'tag' : resource, id);
    assertNotFound(await t.http.get(`/api/${resource}/${id}`).set(a.auth));
    assertNotFound(await t.http.patch(`/api/${resource}/${id}`).set(a.auth).send({ name: 'Hacked' }));
    assertNotFound(await t.http.delete(`/api/${resource}/${id}`).set(a.auth));
    assert.equal(await row(resource === 'tags' ? 'tag' : resource, id), snapshot);
  }
});

test("a PUT or PATCH on another tenant's id does not touch its links either", async () => {
  await t.http.patch(`/api/employee/${theirs.employee}`).set(b.auth).send({ tagIds: [theirs.tag] });
  const links = async () => (await t.db('tag_employee').where({ employeeId: theirs.employee })).map((r: { tagId: string }) => r.tagId);
  assert.equal(await links(), [theirs.tag]);
  assertNotFound(await t.http.patch(`/api/employee/${theirs.employee}`).set(a.auth).send({ tagIds: [mine.tag] }));
  assertNotFound(await t.http.put(`/api/employee/${theirs.employee}`).set(a.auth).send({ firstName: 'X', lastName: 'Y', userId: a.userId }));
  assert.equal(await links(), [theirs.tag]);
});

test('lists, search and counts hold only the caller tenant', async () => {
  const list = await t.http.get('/api/employee').set(a.auth);
  assert.is(list.status, 200);
  assert.equal(list.body.items.map((e: { id: string }) => e.id), [mine.employee]);
  assert.is(list.body.total, 1);
  const search = await t.http.post('/api/employee/search').set(a.auth).send({ findInput: { where: { organizationId: b.organizationId } } });
  assert.is(search.status, 200);
  assert.equal(search.body, { items: [], total: 0 });
  const byName = await t.http.get('/api/tags?search=beta').set(a.auth);
  assert.equal(byName.body, { items: [], total: 0 });
  const orgs = await t.http.get('/api/organization').set(a.auth);
  assert.equal(orgs.body.items.map((o: { id: string }) => o.id), [a.organizationId]);
  const skills = await t.http.get('/api/skills').set(a.auth);
  assert.is(skills.body.total, 0);
});

test("filters on another tenant's ids match nothing", async () => {
  const byUser = await t.http.get(`/api/employee?where[userId]=${b.userId}`).set(a.auth);
  assert.equal(byUser.body, { items: [], total: 0 });
  const byTag = await t.http.get(`/api/employee?tags[]=${theirs.tag}`).set(a.auth);
  assert.equal(byTag.body, { items: [], total: 0 });
  const nested = await t.http.get(`/api/employee?where[tags][id]=${theirs.tag}`).set(a.auth);
  assert.is(nested.status, 200, JSON.stringify(nested.body));
  assert.equal(nested.body, { items: [], total: 0 });
});

test("relations load only the caller tenant's records, even when a bad link exists in the database", async () => {
  // A cross-tenant link the API would refuse, written straight into the join table.
  await t.db('tag_employee').insert({ employeeId: mine.employee, tagId: theirs.tag });
  try {
    const read = await t.http.get(`/api/employee/${mine.employee}?relations[]=tags&relations[]=organization&relations[]=user`).set(a.auth);
    assert.is(read.status, 200, JSON.stringify(read.body));
    assert.equal(read.body.tags.map((tag: { id: string }) => tag.id), [mine.tag]);
    assert.is(read.body.organization.id, a.organizationId);
    assert.is(read.body.user.id, a.userId);
    assert.is(read.body.user.hash, undefined);
    const list = await t.http.get('/api/employee?relations=tags').set(a.auth);
    assert.equal(list.body.items[0].tags.map((tag: { id: string }) => tag.id), [mine.tag]);
  } finally {
    await t.db('tag_employee').where({ employeeId: mine.employee, tagId: theirs.tag }).delete();
  }
});

test("references to another tenant's records are a 400 and nothing is written", async () => {
  const userId = (await t.http.post('/api/auth/register').set(a.auth).send({ user: { email: uniqueEmail() }, password: PASSWORD })).body.id;
  const count = async () => Number((await t.db('employee').where({ tenantId: a.tenantId }).count({ n: '*' }))[0].n);
  const before = await count();
  assertError(await t.http.post('/api/employee').set(a.auth).send({ firstName: 'X', lastName: 'Y', userId: b.userId }), 400, 'userId must reference an existing user');
  assertError(await t.http.post('/api/employee').set(a.auth).send({ firstName: 'X', lastName: 'Y', userId, organizationId: b.organizationId }), 400, 'organizationId must reference an existing organization');
  assertError(await t.http.post('/api/employee').set(a.auth).send({ firstName: 'X', lastName: 'Y', userId, skillIds: [theirs.skill] }), 400, 'skills must reference an existing skill');
  assert.is(await count(), before);
  assertError(await t.http.patch(`/api/employee/${mine.employee}`).set(a.auth).send({ organizationId: b.organizationId }), 400, 'organizationId must reference an existing organization');
  assertError(await t.http.patch(`/api/employee/${mine.employee}`).set(a.auth).send({ userId: b.userId }), 400, 'userId must reference an existing user');
  const stored = await row('employee', mine.employee);
  assert.is(stored.organizationId, a.organizationId);
  assert.is(stored.userId, a.userId);
});

test('tenantId in a body: the same value is ignored, another is a 403 and nothing is written', async () => {
  const same = await t.http.post('/api/tags').set(a.auth).send({ name: 'same-tenant', color: 'c', tenantId: a.tenantId.toUpperCase() });
  assert.is(same.status, 201, JSON.stringify(same.body));
  assert.is(same.body.tenantId, a.tenantId);

  assertForbidden(await t.http.post('/api/tags').set(a.auth).send({ name: 'other-tenant', color: 'c', tenantId: b.tenantId }));
  assertForbidden(await t.http.post('/api/tags').set(a.auth).send({ name: 'bad-tenant', color: 'c', tenantId: 'nonsense' }));
  assertForbidden(await t.http.post('/api/tags').set(a.auth).send({ name: 'null-tenant', color: 'c', tenantId: null }));
  assert.is((await t.db('tag').whereIn('name', ['other-tenant', 'bad-tenant', 'null-tenant'])).length, 0);

  assertForbidden(await t.http.put(`/api/tags/${mine.tag}`).set(a.auth).send({ name: 'moved', color: 'c', tenantId: b.tenantId }));
  assertForbidden(await t.http.patch(`/api/tags/${mine.tag}`).set(a.auth).send({ name: 'moved', tenantId: b.tenantId }));
  const stored = await row('tag', mine.tag);
  assert.is(stored.tenantId, a.tenantId);
  assert.is(stored.name, 'alpha-tag');

  const patched = await t.http.patch(`/api/tags/${mine.tag}`).set(a.auth).send({ description: 'same tenant', tenantId: a.tenantId });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
});

test('a where[tenantId] naming another tenant is a 403; the same one is redundant', async () => {
  assertForbidden(await t.http.get(`/api/employee?where[tenantId]=${b.tenantId}`).set(a.auth));
  assertForbidden(await t.http.post('/api/employee/search').set(a.auth).send({ where: { tenantId: b.tenantId } }));
  const same = await t.http.get(`/api/employee?where[tenantId]=${a.tenantId}`).set(a.auth);
  assert.is(same.status, 200, JSON.stringify(same.body));
  assert.is(same.body.total, 1);
});

test('a Tenant-Id header naming another tenant is a 403 on every method; the own tenant passes', async () => {
  const header = { 'Tenant-Id': b.tenantId };
  assertForbidden(await t.http.get('/api/tags').set(a.auth).set(header));
  assertForbidden(await t.http.get(`/api/tags/${mine.tag}`).set(a.auth).set(header));
  assertForbidden(await t.http.post('/api/tags').set(a.auth).set(header).send({ name: 'via-header', color: 'c' }));
  assertForbidden(await t.http.patch(`/api/tags/${mine.tag}`).set(a.auth).set(header).send({ name: 'via-header' }));
  assertForbidden(await t.http.delete(`/api/tags/${mine.tag}`).set(a.auth).set(header));
  assertForbidden(await t.http.get('/api/tags').set(a.auth).set('Tenant-Id', 'garbage'));
  assert.is((await t.db('tag').where({ name: 'via-header' })).length, 0);
  assert.ok(await row('tag', mine.tag));
  const own = await t.http.get('/api/tags').set(a.auth).set('Tenant-Id', a.tenantId);
  assert.is(own.status, 200);
  assertForbidden(await t.http.post('/api/auth/register').set(a.auth).set(header).send({ user: { email: uniqueEmail() }, password: PASSWORD }));
});

test.run();
