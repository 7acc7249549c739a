// A nested relation of two levels, relations[]=organization.contact: an
// organization's contact is its address, a contact record (resources/contact.yaml, as Ever
// Gauzy's Contact) named by organization.contactId. It loads on employee lists and reads, in
// the search body too, and is limited to the caller's tenant at every level.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
type Tenant = Session & { organizationId: string };
let acme: Tenant;
let other: Tenant;
let contactId: string;
let employeeId: string;

const ADDRESS = { name: 'Acme head office', country: 'DE', city: 'Berlin', address: 'Unter den Linden 1', postcode: '10117', latitude: 52.517, longitude: 13.389 };

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const contact = await t.http.post('/api/contact').set(acme.auth).send(ADDRESS);
  assert.is(contact.status, 201, JSON.stringify(contact.body));
  contactId = contact.body.id;
  const org = await t.http.patch(`/api/organization/${acme.organizationId}`).set(acme.auth).send({ contactId });
  assert.is(org.status, 200, JSON.stringify(org.body));
  assert.is(org.body.contactId, contactId);
  const employee = await t.http.post('/api/employee').set(acme.auth).send({ firstName: 'Ada', lastName: 'Lovelace', userId: acme.userId });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  employeeId = employee.body.id;
});
test.after(async () => {
  await t?.close();
});

test('a contact is a record of its own: created, read and stored in the caller tenant', async () => {
  const read = await t.http.get(`/api/contact/${contactId}`).set(acme.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.equal({ ...read.body, id: undefined, tenantId: undefined, createdAt: undefined, updatedAt: undefined }, {
    ...ADDRESS, id: undefined, tenantId: undefined, createdAt: undefined, updatedAt: undefined,
    firstName: null, lastName: null, address2: null, regionCode: null, fax: null, fiscalInformation: null, website: null,
  });
  const row = await t.db('contact').where({ id: contactId }).first();
  assert.is(row.tenantId, acme.tenantId);
  assert.is(row.city, 'Berlin');
  assertError(await t.http.post('/api/contact').set(acme.auth).send({ latitude: 91 }), 400, 'latitude must not be greater than 90');
});

test('GET /api/employee?relations[]=organization.contact loads the organization and its contact', async () => {
  const list = await t.http.get('/api/employee?relations[]=organization.contact').set(acme.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  const [item] = list.body.items;
  assert.is(item.id, employeeId);
  assert.is(item.organization.id, acme.organizationId);
  assert.is(item.organization.contact.id, contactId);
  assert.is(item.organization.contact.city, 'Berlin');
  // A read, with other relations beside it, and the search body.
  const read = await t.http.get(`/api/employee/${employeeId}?relations[]=user&relations[]=organization.contact`).set(acme.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.is(read.body.organization.contact.postcode, '10117');
  assert.is(read.body.user.id, acme.userId);
  const search = await t.http.post('/api/employee/search').set(acme.auth).send({ relations: ['organization.contact'] });
  assert.is(search.body.items[0].organization.contact.id, contactId);
  // The organization itself takes relations[]=contact, and a filter on it.
  const org = await t.http.get(`/api/organization/${acme.organizationId}?relations[]=contact`).set(acme.auth);
  assert.is(org.body.contact.address, 'Unter den Linden 1');
  const berlin = await t.http.get('/api/organization?where[contact][city]=Berlin').set(acme.auth);
  assert.equal(berlin.body.items.map((o: { id: string }) => o.id), [acme.organizationId]);
});

test('an organization without a contact loads null; a contact deleted leaves its organization without one', async () => {
  const spare = await t.http.post('/api/contact').set(acme.auth).send({ name: 'Spare' });
  const second = await t.http.post('/api/organization').set(acme.auth).send({ name: 'Second', currency: 'EUR', contactId: spare.body.id });
  assert.is(second.status, 201, JSON.stringify(second.body));
  const plain = await t.http.post('/api/organization').set(acme.auth).send({ name: 'Plain', currency: 'EUR' });
  assert.is((await t.http.get(`/api/organization/${plain.body.id}?relations[]=contact`).set(acme.auth)).body.contact, null);
  assert.is((await t.http.delete(`/api/contact/${spare.body.id}`).set(acme.auth)).status, 204);
  const after = await t.http.get(`/api/organization/${second.body.id}?relations[]=contact`).set(acme.auth);
  assert.equal([after.body.contactId, after.body.contact], [null, null]);
});

test("tenant scope at every level: another tenant's contact can be neither named nor loaded", async () => {
  const theirs = await t.http.post('/api/contact').set(other.auth).send({ name: 'Theirs', city: 'Paris' });
  assert.is(theirs.status, 201);
  assertError(await t.http.patch(`/api/organization/${acme.organizationId}`).set(acme.auth).send({ contactId: theirs.body.id }), 400, 'contactId must reference an existing contact');
  assertError(await t.http.get(`/api/contact/${theirs.body.id}`).set(acme.auth), 404);
  // Linked across past the API (a corrupt row): the relation still loads nothing of the other tenant.
  await t.db('organization').where({ id: acme.organizationId }).update({ contactId: theirs.body.id });
  try {
    const list = await t.http.get('/api/employee?relations[]=organization.contact').set(acme.auth);
    assert.is(list.status, 200);
    assert.is(list.body.items[0].organization.id, acme.organizationId);
    assert.is(list.body.items[0].organization.contact, null);
    assert.equal((await t.http.get('/api/organization?where[contact][city]=Paris').set(acme.auth)).body.total, 0);
  } finally {
    await t.db('organization').where({ id: acme.organizationId }).update({ contactId });
  }
  const contacts = await t.http.get('/api/contact').set(acme.auth);
  assert.ok(contacts.body.items.every((c: { tenantId: string }) => c.tenantId === acme.tenantId));
});

test('the document lists organization.contact among the employee relations, and the contact paths', () => {
  const doc = t.openapi as Record<string, any>;
  const relations = doc.paths['/api/employee'].get.parameters.find((p: any) => p.name === 'relations[]');
  assert.ok(relations.schema.items.enum.includes('organization.contact'));
  assert.ok(doc.paths['/api/contact'].post && doc.paths['/api/contact/{id}'].get);
  assert.ok(doc.components.schemas.Organization.properties.contactId);
});

test.run();
