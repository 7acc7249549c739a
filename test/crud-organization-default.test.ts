// organizationId is optional when creating a record of an organization-scoped resource. It comes
// from the body, else the Organization-Id header, else the caller's employee organization (in
// the token), else the tenant's only organization; with none of them it is a 400.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, PASSWORD, uniqueEmail, type Session } from './helpers/accounts.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { assertError } from './helpers/error-envelope.js';

type Admin = Session & { organizationId: string };

let t: TestApp;

test.before(async () => {
  t = await createTestApp();
});
test.after(async () => {
  await t.close();
});

const tagOrganization = async (id: string) => (await t.db('tag').where({ id }).first())?.organizationId;

async function addOrganization(admin: Admin, name: string): Promise<string> {
  const res = await t.http.post('/api/organization').set(admin.auth).send({ name, currency: 'EUR' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

test("the tenant's only organization is the default", async () => {
  const admin = await newTenant(t);
  const res = await t.http.post('/api/tags').set(admin.auth).send({ name: 'only', color: 'red' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.organizationId, admin.organizationId);
  assert.is(await tagOrganization(res.body.id), admin.organizationId);
});

test('with no organization at all, or several and no way to choose, it is a 400 and nothing is written', async () => {
  const email = uniqueEmail('lonely');
  const reg = await t.http.post('/api/auth/register').send({ user: { email }, password: PASSWORD });
  assert.is(reg.status, 201);
  const lonely = await login(t, email);
  const none = await t.http.post('/api/skill').set(lonely.auth).send({ name: 'nothing' });
  assertError(none, 400, 'organizationId should not be empty');

  const admin = await newTenant(t);
  await addOrganization(admin, 'Second');
  const several = await t.http.post('/api/tags').set(admin.auth).send({ name: 'which', color: 'red' });
  assertError(several, 400, 'organizationId should not be empty');
  assert.is((await t.db('tag').where({ name: 'which' })).length, 0);
  assert.is((await t.db('skill').where({ tenantId: lonely.tenantId })).length, 0);
});

test('the body wins over the header, the header over the token and the only organization', async () => {
  const admin = await newTenant(t);
  const second = await addOrganization(admin, 'Second');
  const third = await addOrganization(admin, 'Third');
  const fromBody = await t.http.post('/api/tags').set(admin.auth).set('Organization-Id', third).send({ name: 'body', color: 'red', organizationId: second });
  assert.is(fromBody.status, 201, JSON.stringify(fromBody.body));
  assert.is(await tagOrganization(fromBody.body.id), second);
  const fromHeader = await t.http.post('/api/tags').set(admin.auth).set('Organization-Id', third.toUpperCase()).send({ name: 'header', color: 'red' });
  assert.is(fromHeader.status, 201, JSON.stringify(fromHeader.body));
  assert.is(await tagOrganization(fromHeader.body.id), third);
});

test("the caller's employee organization (from the token) is the default when the tenant has several", async () => {
  const admin = await newTenant(t);
  const second = await addOrganization(admin, 'Second');
  const email = uniqueEmail('manager');
  const reg = await t.http.post('/api/auth/register').set(admin.auth).send({ user: { email, role: 'MANAGER', firstName: 'M', lastName: 'G' }, password: PASSWORD });
  assert.is(reg.status, 201, JSON.stringify(reg.body));
  const employee = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'M', lastName: 'G', userId: reg.body.id, organizationId: second });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  const manager = await login(t, email);
  const res = await t.http.post('/api/tags').set(manager.auth).send({ name: 'mine', color: 'red' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(await tagOrganization(res.body.id), second);
  const header = await t.http.post('/api/tags').set(manager.auth).set('Organization-Id', admin.organizationId).send({ name: 'header', color: 'red' });
  assert.is(await tagOrganization(header.body.id), admin.organizationId, 'the header still wins over the token');
});

test("an organization of another tenant, by body or header, is a 400 and nothing is written", async () => {
  const admin = await newTenant(t);
  const stranger = await newTenant(t, 'Stranger');
  const body = await t.http.post('/api/tags').set(admin.auth).send({ name: 'x', color: 'red', organizationId: stranger.organizationId });
  assertError(body, 400, 'organizationId must reference an existing organization');
  const header = await t.http.post('/api/tags').set(admin.auth).set('Organization-Id', stranger.organizationId).send({ name: 'y', color: 'red' });
  assertError(header, 400, 'organizationId must reference an existing organization');
  const malformed = await t.http.post('/api/tags').set(admin.auth).set('Organization-Id', 'not-a-uuid').send({ name: 'z', color: 'red' });
  assertError(malformed, 400, 'Organization-Id header must be a UUID');
  assert.is((await t.db('tag').where({ tenantId: admin.tenantId })).length, 0);
  assert.is((await t.db('tag').where({ organizationId: stranger.organizationId })).length, 0);
});

test('organizationId is not reset by a replace and cannot be set to null', async () => {
  const admin = await newTenant(t);
  const created = await t.http.post('/api/skill').set(admin.auth).send({ name: 'Go', description: 'lang' });
  const replaced = await t.http.put(`/api/skill/${created.body.id}`).set(admin.auth).send({ name: 'Go' });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.is(replaced.body.organizationId, admin.organizationId);
  assert.is(replaced.body.description, null);
  const nulled = await t.http.patch(`/api/skill/${created.body.id}`).set(admin.auth).send({ organizationId: null });
  assertError(nulled, 400, 'organizationId must be a string');
  assert.is((await t.db('skill').where({ id: created.body.id }).first()).organizationId, admin.organizationId);
});

test.run();
