// organizationId is optional when creating a record of an organization-scoped resource. It comes
// from the body, else the Organization-Id header, else the caller's employee organization (in
// the token), else the tenant's only organization. With none of them, a resource whose definition
// says organizationOptional (skill, tag, task, ...) makes a record of the whole tenant
// (organizationId null); any other (organization-team, employee, ...) answers a 400 saying how to
// name one. Such records are listed with the others, and where[organizationId]=null finds them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

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

const NO_ORGANIZATION =
  'organizationId should not be empty: this tenant has no organization yet, so create one first (POST /api/organization) and send its id as organizationId or in the Organization-Id header';
const SEVERAL_ORGANIZATIONS = 'organizationId should not be empty: this tenant has more than one organization, so name one with organizationId or in the Organization-Id header';

/** A new tenant's SUPER_ADMIN, without any organization. */
async function lonelyTenant(): Promise<Session> {
  const email = uniqueEmail('lonely');
  const reg = await t.http.post('/api/auth/register').send({ user: { email }, password: PASSWORD });
  assert.is(reg.status, 201);
  return login(t, email);
}

test('with no organization at all, a resource that allows it makes a record of the whole tenant; another is a 400 saying what to do', async () => {
  const lonely = await lonelyTenant();
  const skill = await t.http.post('/api/skill').set(lonely.auth).send({ name: 'nothing' });
  assert.is(skill.status, 201, JSON.stringify(skill.body));
  assert.is(skill.body.organizationId, null);
  const row = await t.db('skill').where({ id: skill.body.id }).first();
  assert.equal([row.tenantId, row.organizationId], [lonely.tenantId, null]);

  const team = await t.http.post('/api/organization-team').set(lonely.auth).send({ name: 'Core' });
  assertError(team, 400, NO_ORGANIZATION);
  assert.is(team.body.message.length, 1, 'one sentence');
  assert.is((await t.db('organization_team').where({ tenantId: lonely.tenantId })).length, 0);
});

test('with several organizations and nothing to choose one, the same: a record of none, or a 400 saying so', async () => {
  const admin = await newTenant(t);
  await addOrganization(admin, 'Second');
  const tag = await t.http.post('/api/tags').set(admin.auth).send({ name: 'which', color: 'red' });
  assert.is(tag.status, 201, JSON.stringify(tag.body));
  assert.is(await tagOrganization(tag.body.id), null);
  const team = await t.http.post('/api/organization-team').set(admin.auth).send({ name: 'which' });
  assertError(team, 400, SEVERAL_ORGANIZATIONS);
  assert.is((await t.db('organization_team').where({ tenantId: admin.tenantId })).length, 0);
});

test('organizationId null in a body asks for a record of no organization, where the resource allows it', async () => {
  const admin = await newTenant(t);
  const tag = await t.http.post('/api/tags').set(admin.auth).set('Organization-Id', admin.organizationId).send({ name: 'tenant', color: 'red', organizationId: null });
  assert.is(tag.status, 201, JSON.stringify(tag.body));
  assert.is(await tagOrganization(tag.body.id), null, 'the body wins over the header and the only organization');
  const team = await t.http.post('/api/organization-team').set(admin.auth).send({ name: 'x', organizationId: null });
  assertError(team, 400, 'organizationId must be a string');
  assert.is((await t.db('organization_team').where({ tenantId: admin.tenantId })).length, 0);
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

test('organizationId is not reset by a replace; null only where the resource allows records of none', async () => {
  const admin = await newTenant(t);
  const created = await t.http.post('/api/skill').set(admin.auth).send({ name: 'Go', description: 'lang' });
  const replaced = await t.http.put(`/api/skill/${created.body.id}`).set(admin.auth).send({ name: 'Go' });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.is(replaced.body.organizationId, admin.organizationId);
  assert.is(replaced.body.description, null);
  // A skill may belong to the whole tenant: PATCH moves it there, and back.
  const nulled = await t.http.patch(`/api/skill/${created.body.id}`).set(admin.auth).send({ organizationId: null });
  assert.is(nulled.status, 200, JSON.stringify(nulled.body));
  assert.is((await t.db('skill').where({ id: created.body.id }).first()).organizationId, null);
  const kept = await t.http.put(`/api/skill/${created.body.id}`).set(admin.auth).send({ name: 'Go' });
  assert.is(kept.body.organizationId, null, 'a replace keeps it');
  const back = await t.http.patch(`/api/skill/${created.body.id}`).set(admin.auth).send({ organizationId: admin.organizationId });
  assert.is(back.body.organizationId, admin.organizationId);

  // An organization team may not.
  const team = await t.http.post('/api/organization-team').set(admin.auth).send({ name: 'Core' });
  assert.is(team.status, 201, JSON.stringify(team.body));
  const refused = await t.http.patch(`/api/organization-team/${team.body.id}`).set(admin.auth).send({ organizationId: null });
  assertError(refused, 400, 'organizationId must be a string');
  assert.is((await t.db('organization_team').where({ id: team.body.id }).first()).organizationId, admin.organizationId);
});

test('records of no organization are listed with the others; where[organizationId]=null finds only them', async () => {
  const admin = await newTenant(t);
  const own = await t.http.post('/api/tags').set(admin.auth).send({ name: 'own', color: 'red' });
  const wide = await t.http.post('/api/tags').set(admin.auth).send({ name: 'wide', color: 'red', organizationId: null });
  const ids = (res: { body: { items: Array<{ id: string }> } }) => res.body.items.map((i) => i.id).sort();
  const all = await t.http.get('/api/tags').set(admin.auth);
  assert.is(all.status, 200, JSON.stringify(all.body));
  assert.equal(ids(all), [own.body.id, wide.body.id].sort());
  assert.is(all.body.total, 2);
  const none = await t.http.get('/api/tags').query({ 'where[organizationId]': 'null' }).set(admin.auth);
  assert.equal([ids(none), none.body.total], [[wide.body.id], 1]);
  const one = await t.http.get('/api/tags').query({ 'where[organizationId]': admin.organizationId }).set(admin.auth);
  assert.equal([ids(one), one.body.total], [[own.body.id], 1]);
  const searched = await t.http.post('/api/tags/search').set(admin.auth).send({ where: { organizationId: null } });
  assert.equal([ids(searched), searched.body.total], [[wide.body.id], 1]);
  // A resource whose records always name an organization has no such records to find.
  assertError(await t.http.get('/api/organization-team').query({ 'where[organizationId]': 'null' }).set(admin.auth), 400, 'where.organizationId must be a UUID');
  assertError(await t.http.post('/api/organization-team/search').set(admin.auth).send({ where: { organizationId: null } }), 400, 'where.organizationId must be a UUID');
});

test("tag names are unique in an organization, and among the tenant's tags of no organization", async () => {
  const admin = await newTenant(t);
  const other = await newTenant(t, 'Other');
  const message = 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization';
  const first = await t.http.post('/api/tags').set(admin.auth).send({ name: 'Urgent', color: 'red', organizationId: null });
  assert.is(first.status, 201, JSON.stringify(first.body));
  assertError(await t.http.post('/api/tags').set(admin.auth).send({ name: 'Urgent', color: 'blue', organizationId: null }), 409, message);
  // The same name in an organization, or in another tenant, is another tag.
  const inOrganization = await t.http.post('/api/tags').set(admin.auth).send({ name: 'Urgent', color: 'blue' });
  assert.is(inOrganization.status, 201, JSON.stringify(inOrganization.body));
  const elsewhere = await t.http.post('/api/tags').set(other.auth).send({ name: 'Urgent', color: 'blue', organizationId: null });
  assert.is(elsewhere.status, 201, JSON.stringify(elsewhere.body));
  // Moving the organization's tag to the tenant would make two: refused, nothing changed.
  assertError(await t.http.patch(`/api/tags/${inOrganization.body.id}`).set(admin.auth).send({ organizationId: null }), 409, message);
  assert.is(await tagOrganization(inOrganization.body.id), admin.organizationId);
  assert.is((await t.db('tag').where({ tenantId: admin.tenantId, name: 'Urgent' })).length, 2);
});

test.run();
