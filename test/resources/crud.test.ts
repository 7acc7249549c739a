// Create, read, replace, modify and delete, on employees, tags, skills and
// organizations: what each answers and what the database holds afterwards.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertNotFound } from '../helpers/error-envelope.js';

type Admin = Session & { organizationId: string };

let t: TestApp;
let admin: Admin;
let other: Admin;
const tags: string[] = [];
const skills: string[] = [];

/** A user of the admin's tenant, to give employee records to (one per user per organization). */
async function newUser(owner: Admin): Promise<string> {
  const res = await t.http.post('/api/auth/register').set(owner.auth).send({ user: { email: uniqueEmail('staff'), firstName: 'S', lastName: 'T' }, password: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

const linked = async (table: string, column: string, id: string, other: string) =>
  (await t.db(table).select(other).where(column, id)).map((r: Record<string, string>) => r[other]).sort();

const employeeRow = (id: string) => t.db('employee').where({ id }).first();

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t);
  other = await newTenant(t, 'Other');
  for (const name of ['red', 'green', 'blue']) {
    const res = await t.http.post('/api/tags').set(admin.auth).send({ name, color: name });
    assert.is(res.status, 201, JSON.stringify(res.body));
    tags.push(res.body.id);
  }
  for (const name of ['TypeScript', 'SQL']) {
    const res = await t.http.post('/api/skill').set(admin.auth).send({ name });
    assert.is(res.status, 201, JSON.stringify(res.body));
    skills.push(res.body.id);
  }
});
test.after(async () => {
  await t.close();
});

test('create: 201 with the whole record, as stored', async () => {
  const userId = await newUser(admin);
  const res = await t.http.post('/api/employee').set(admin.auth).send({
    firstName: 'Ann',
    lastName: 'Lee',
    userId,
    startedWorkOn: '2026-01-05',
    billRateValue: 50,
    billRateCurrency: 'EUR',
    payPeriod: 'MONTHLY',
  });
  assert.is(res.status, 201, JSON.stringify(res.body));
  const body = res.body;
  assert.match(body.id, /^[0-9a-f-]{36}$/);
  assert.is(body.tenantId, admin.tenantId);
  assert.is(body.organizationId, admin.organizationId);
  assert.is(body.firstName, 'Ann');
  assert.is(body.startedWorkOn, '2026-01-05T00:00:00.000Z');
  assert.is(body.endWork, null);
  assert.is(body.isActive, true, 'the default applies');
  assert.match(body.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  assert.is(body.updatedAt, body.createdAt);
  const row = await employeeRow(body.id);
  assert.is(row.tenantId, admin.tenantId);
  assert.is(row.userId, userId);
  assert.is(new Date(row.startedWorkOn).toISOString(), '2026-01-05T00:00:00.000Z');
  assert.is(row.billRateValue, 50);
  assert.is(row.payPeriod, 'MONTHLY');
});

test('read: 200 with the record; list: {items, total}', async () => {
  const created = await t.http.post('/api/tags').set(admin.auth).send({ name: 'read-me', color: '#fff' });
  const read = await t.http.get(`/api/tags/${created.body.id}`).set(admin.auth);
  assert.is(read.status, 200);
  assert.equal(read.body, created.body);
  const upper = await t.http.get(`/api/tags/${created.body.id.toUpperCase()}`).set(admin.auth);
  assert.is(upper.status, 200, 'a UUID in capitals is the same id');
  const list = await t.http.get('/api/tags?where[name]=read-me').set(admin.auth);
  assert.is(list.status, 200);
  assert.equal(list.body, { items: [created.body], total: 1 });
});

test('dates: a date-only value is midnight UTC and returned as a full timestamp; a timestamp keeps its instant', async () => {
  const userId = await newUser(admin);
  const res = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'D', lastName: 'T', userId, startedWorkOn: '2026-01-05', endWork: '2026-03-01T10:30:00+02:00' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.startedWorkOn, '2026-01-05T00:00:00.000Z');
  assert.is(res.body.endWork, '2026-03-01T08:30:00.000Z');
  const read = await t.http.get(`/api/employee/${res.body.id}`).set(admin.auth);
  assert.is(read.body.startedWorkOn, '2026-01-05T00:00:00.000Z');
  for (const bad of ['2026-02-30', '05/01/2026', '2026-01-05T10', '2026-01-05T24:00', 'yesterday', '']) {
    assertError(await t.http.patch(`/api/employee/${res.body.id}`).set(admin.auth).send({ startedWorkOn: bad }), 400, 'startedWorkOn must be a valid ISO 8601 date string');
  }
  assert.is(new Date((await employeeRow(res.body.id)).startedWorkOn).toISOString(), '2026-01-05T00:00:00.000Z');
});

test('read-only fields in a body are ignored on create, replace and modify', async () => {
  const userId = await newUser(admin);
  const forged = {
    id: '11111111-1111-4111-8111-111111111111',
    tenantId: admin.tenantId,
    createdAt: '2000-01-01T00:00:00.000Z',
    updatedAt: '2000-01-01T00:00:00.000Z',
  };
  const created = await t.http.post('/api/employee').set(admin.auth).send({ ...forged, firstName: 'R', lastName: 'O', userId });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is.not(created.body.id, forged.id);
  assert.is.not(created.body.createdAt, forged.createdAt);
  assert.not.ok(await employeeRow(forged.id));
  const id = created.body.id;

  const replaced = await t.http.put(`/api/employee/${id}`).set(admin.auth).send({ ...forged, firstName: 'R2', lastName: 'O', userId });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.is(replaced.body.id, id);
  const patched = await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({ ...forged, lastName: 'O2' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.is(patched.body.id, id);
  const row = await employeeRow(id);
  assert.is(row.firstName, 'R2');
  assert.is(row.lastName, 'O2');
  assert.is(new Date(row.createdAt).toISOString(), created.body.createdAt);
  assert.ok(new Date(row.updatedAt) >= new Date(row.createdAt));
  assert.not.ok(await employeeRow(forged.id));
});

test('replace: every required field must be present', async () => {
  const userId = await newUser(admin);
  const created = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'P', lastName: 'Q', userId });
  const res = await t.http.put(`/api/employee/${created.body.id}`).set(admin.auth).send({ firstName: 'Only' });
  assertError(res, 400, 'lastName should not be empty', 'userId should not be empty');
  assert.is((await employeeRow(created.body.id)).firstName, 'P');
});

test('replace: absent optional fields go back to their default or null, absent writable relations to none', async () => {
  const userId = await newUser(admin);
  const created = await t.http.post('/api/employee').set(admin.auth).send({
    firstName: 'Full',
    lastName: 'Record',
    userId,
    startedWorkOn: '2025-05-01',
    billRateValue: 80,
    payPeriod: 'WEEKLY',
    isActive: false,
    tags: [{ id: tags[0] }],
    skillIds: [skills[0]],
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), [tags[0]]);

  const res = await t.http.put(`/api/employee/${id}`).set(admin.auth).send({ firstName: 'Full', lastName: 'Replaced', userId });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.lastName, 'Replaced');
  assert.is(res.body.startedWorkOn, null);
  assert.is(res.body.billRateValue, null);
  assert.is(res.body.payPeriod, null);
  assert.is(res.body.isActive, true, 'back to the default');
  assert.is(res.body.organizationId, admin.organizationId, 'the organization is kept');
  const row = await employeeRow(id);
  assert.is(row.startedWorkOn, null);
  assert.is(row.billRateValue, null);
  assert.is(row.isActive, true);
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), []);
  assert.equal(await linked('skill_employee', 'employeeId', id, 'skillId'), []);
});

test('modify: only the fields sent change; relations not sent stay linked', async () => {
  const userId = await newUser(admin);
  const created = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'M', lastName: 'N', userId, billRateValue: 10, tagIds: [tags[0], tags[1]] });
  const id = created.body.id;
  const res = await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({ lastName: 'Changed' });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal({ ...res.body, lastName: 'N', updatedAt: created.body.updatedAt }, created.body);
  const row = await employeeRow(id);
  assert.is(row.lastName, 'Changed');
  assert.is(row.billRateValue, 10);
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), [tags[0], tags[1]].sort());

  const cleared = await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({ billRateValue: null, tags: [] });
  assert.is(cleared.status, 200, JSON.stringify(cleared.body));
  assert.is((await employeeRow(id)).billRateValue, null);
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), []);

  const empty = await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({});
  assert.is(empty.status, 200, 'an empty patch changes nothing');
  assert.is((await employeeRow(id)).lastName, 'Changed');
});

test('delete: 204, then the record is a 404 and its links are gone', async () => {
  const userId = await newUser(admin);
  const created = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Del', lastName: 'Me', userId, tagIds: [tags[2]] });
  const id = created.body.id;
  const res = await t.http.delete(`/api/employee/${id}`).set(admin.auth);
  assert.is(res.status, 204);
  assert.is(res.text, '');
  assert.not.ok(await employeeRow(id));
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), []);
  assert.ok(await t.db('tag').where({ id: tags[2] }).first(), 'the tag itself stays');
  assertNotFound(await t.http.get(`/api/employee/${id}`).set(admin.auth));
  assertNotFound(await t.http.delete(`/api/employee/${id}`).set(admin.auth));
  assertNotFound(await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({ firstName: 'Back' }));
});

test('a field the resource does not have is a 400, on create, replace and modify', async () => {
  const userId = await newUser(admin);
  const before = Number((await t.db('employee').count({ n: '*' }))[0].n);
  assertError(await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'A', lastName: 'B', userId, foo: 'bar' }), 400, 'property foo should not exist');
  assert.is(Number((await t.db('employee').count({ n: '*' }))[0].n), before);
  const created = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'A', lastName: 'B', userId });
  const id = created.body.id;
  assertError(await t.http.put(`/api/employee/${id}`).set(admin.auth).send({ firstName: 'A', lastName: 'B', userId, salary: 1 }), 400, 'property salary should not exist');
  assertError(await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({ firstName: 'Z', user: { name: 'x' } }), 400, 'property user should not exist');
  assertError(await t.http.post('/api/tags').set(admin.auth).send({ name: 'n', color: 'c', hash: 'x' }), 400, 'property hash should not exist');
  assert.is((await employeeRow(id)).firstName, 'A');
});

test('many-to-many: employee tags and skills are set as [{id}] or ids, and replaced as a whole', async () => {
  const userId = await newUser(admin);
  const created = await t.http.post('/api/employee').set(admin.auth).send({
    firstName: 'T',
    lastName: 'S',
    userId,
    tags: [{ id: tags[0] }, { id: tags[1].toUpperCase() }],
    tagIds: [tags[1]],
    skills: [{ id: skills[1] }],
  });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), [tags[0], tags[1]].sort());
  assert.equal(await linked('skill_employee', 'employeeId', id, 'skillId'), [skills[1]]);

  const read = await t.http.get(`/api/employee/${id}?relations[]=tags&relations[]=skills`).set(admin.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.equal(read.body.tags.map((tag: { id: string }) => tag.id).sort(), [tags[0], tags[1]].sort());
  assert.equal(read.body.skills.map((skill: { name: string }) => skill.name), ['SQL']);

  const updated = await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({ tagIds: [tags[2]], skills: [{ id: skills[0] }, { id: skills[1] }] });
  assert.is(updated.status, 200, JSON.stringify(updated.body));
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), [tags[2]]);
  assert.equal(await linked('skill_employee', 'employeeId', id, 'skillId'), [...skills].sort());
});

test('many-to-many: organization tags are set the same way', async () => {
  const created = await t.http.post('/api/organization').set(admin.auth).send({ name: 'Tagged', currency: 'USD', tags: [{ id: tags[0] }] });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  assert.equal(await linked('tag_organization', 'organizationId', id, 'tagId'), [tags[0]]);
  const updated = await t.http.put(`/api/organization/${id}`).set(admin.auth).send({ name: 'Tagged', currency: 'USD', tagIds: [tags[1], tags[2]] });
  assert.is(updated.status, 200, JSON.stringify(updated.body));
  assert.equal(await linked('tag_organization', 'organizationId', id, 'tagId'), [tags[1], tags[2]].sort());
  const read = await t.http.get(`/api/organization/${id}?relations=tags`).set(admin.auth);
  assert.equal(read.body.tags.map((tag: { id: string }) => tag.id).sort(), [tags[1], tags[2]].sort());
  assert.is((await t.http.delete(`/api/organization/${id}`).set(admin.auth)).status, 204);
  assert.equal(await linked('tag_organization', 'organizationId', id, 'tagId'), []);
});

test("many-to-many: another tenant's id (or one that does not exist) is a 400 and nothing is written", async () => {
  const foreignTag = await t.http.post('/api/tags').set(other.auth).send({ name: 'theirs', color: 'black' });
  assert.is(foreignTag.status, 201);
  const userId = await newUser(admin);
  const employees = Number((await t.db('employee').count({ n: '*' }))[0].n);
  const links = Number((await t.db('tag_employee').count({ n: '*' }))[0].n);

  const create = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'X', lastName: 'Y', userId, tags: [{ id: tags[0] }, { id: foreignTag.body.id }] });
  assertError(create, 400, 'tags must reference an existing tag');
  assert.is(Number((await t.db('employee').count({ n: '*' }))[0].n), employees);
  assert.is(Number((await t.db('tag_employee').count({ n: '*' }))[0].n), links);

  const created = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'X', lastName: 'Y', userId, tagIds: [tags[0]] });
  const id = created.body.id;
  const update = await t.http.patch(`/api/employee/${id}`).set(admin.auth).send({ firstName: 'Changed', tagIds: [foreignTag.body.id] });
  assertError(update, 400, 'tags must reference an existing tag');
  const missing = await t.http.put(`/api/employee/${id}`).set(admin.auth).send({ firstName: 'X', lastName: 'Y', userId, skillIds: ['0b7e6d3c-52f3-4c8e-9a51-7f1f2a3b4c5d'] });
  assertError(missing, 400, 'skills must reference an existing skill');
  assert.is((await employeeRow(id)).firstName, 'X');
  assert.equal(await linked('tag_employee', 'employeeId', id, 'tagId'), [tags[0]]);
  assert.equal(await linked('tag_employee', 'tagId', foreignTag.body.id, 'employeeId'), []);

  const org = await t.http.post('/api/organization').set(admin.auth).send({ name: 'Nope', currency: 'EUR', tagIds: [foreignTag.body.id] });
  assertError(org, 400, 'tags must reference an existing tag');
  assert.not.ok(await t.db('organization').where({ name: 'Nope' }).first());
});

test('one employee per user per organization: a second is a 409 with a sentence; another organization is fine', async () => {
  const userId = await newUser(admin);
  const first = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'One', lastName: 'Only', userId });
  assert.is(first.status, 201);
  const second = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Two', lastName: 'Again', userId: userId.toUpperCase() });
  assertError(second, 409, 'This user already has an employee record in this organization');
  assert.is((await t.db('employee').where({ userId })).length, 1);

  const org = await t.http.post('/api/organization').set(admin.auth).send({ name: 'Second', currency: 'EUR' });
  const elsewhere = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Two', lastName: 'There', userId, organizationId: org.body.id });
  assert.is(elsewhere.status, 201, JSON.stringify(elsewhere.body));
  const moved = await t.http.patch(`/api/employee/${elsewhere.body.id}`).set(admin.auth).send({ organizationId: admin.organizationId });
  assertError(moved, 409, 'This user already has an employee record in this organization');
  assert.is((await employeeRow(elsewhere.body.id)).organizationId, org.body.id);
});

test('tags: unique name per organization (409), the same name in another organization is fine', async () => {
  const dup = await t.http.post('/api/tags').set(admin.auth).send({ name: 'red', color: 'pink', organizationId: admin.organizationId });
  assertError(dup, 409, 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization');
  const org = await t.http.post('/api/organization').set(admin.auth).send({ name: 'Third', currency: 'EUR' });
  const there = await t.http.post('/api/tags').set(admin.auth).send({ name: 'red', color: 'pink', organizationId: org.body.id });
  assert.is(there.status, 201, JSON.stringify(there.body));
  const renamed = await t.http.patch(`/api/tags/${tags[1]}`).set(admin.auth).send({ name: 'red' });
  assertError(renamed, 409, 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization');
  assert.is((await t.db('tag').where({ id: tags[1] }).first()).name, 'green');
});

test.run();
