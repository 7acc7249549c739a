// Invoices (resources/invoice.yaml) and their items: defaults and rules (dueDate >= invoiceDate,
// invoiceNumber unique per organization), items sent with the invoice written in its transaction
// (all or nothing, checked in the database), replaced by PUT and PATCH, the relations[]
// whitelist, the nested items in the OpenAPI bodies, permissions and tenant isolation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadRoles } from '../../auth/roles.js';
import { ROLES_FILE } from '../../app/paths.js';
import { compileDefinitions } from '../../engine/resource/compile.js';
import { DefinitionError, parseDefinition } from '../../engine/resource/load.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';

type Tenant = Awaited<ReturnType<typeof newTenant>>;
let t: TestApp;
let acme: Tenant;
let other: Tenant;
let viewer: Session;
let employee: Session & { employeeId?: string };
let dataEntry: Session;
let contact: string, foreignContact: string, task: string, foreignTask: string, project: string, red: string;
let nextNumber = 1000;

const created = async (tenant: Tenant, path: string, body: Record<string, unknown>) => {
  const res = await t.http.post(`/api/${path}`).set(tenant.auth).send(body);
  assert.is(res.status, 201, `${path}: ${JSON.stringify(res.body)}`);
  return res.body.id as string;
};

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  viewer = await userWithRole(t, acme, 'VIEWER');
  employee = await userWithRole(t, acme, 'EMPLOYEE', true);
  dataEntry = await userWithRole(t, acme, 'DATA_ENTRY');
  contact = await created(acme, 'organization-contact', { name: 'Globex', contactType: 'CLIENT' });
  foreignContact = await created(other, 'organization-contact', { name: 'Initech' });
  project = await created(acme, 'organization-project', { name: 'Website' });
  task = await created(acme, 'task', { title: 'Build the site', projectId: project });
  foreignTask = await created(other, 'task', { title: 'Their task' });
  red = await created(acme, 'tags', { name: 'red', color: '#f00' });
});
test.after(async () => {
  await t.close();
});

/** A valid invoice body with a fresh number. */
const invoiceBody = (extra: Record<string, unknown> = {}) => ({
  invoiceNumber: nextNumber++,
  // Named, since the tenant has two organizations once the uniqueness test has run.
  organizationId: acme.organizationId,
  invoiceDate: '2026-03-01',
  dueDate: '2026-03-31',
  fromOrganizationId: acme.organizationId,
  toContactId: contact,
  currency: 'EUR',
  ...extra,
});

const postInvoice = (body: Record<string, unknown>, session: Session = acme) => t.http.post('/api/invoice').set(session.auth).send(body);
const count = async (table: string, where: Record<string, unknown> = {}) => Number((await t.db(table).where(where).count({ n: '*' }))[0].n);
const itemsOf = (invoiceId: string) => t.db('invoice_item').where({ invoiceId }).orderBy('price');

test('invoice: create answers 201 with the defaults; the row holds what was sent', async () => {
  const body = invoiceBody({ tax: 20, taxType: 'PERCENT', totalValue: 120, terms: 'Net 30' });
  const res = await postInvoice(body);
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.status, 'DRAFT');
  assert.is(res.body.discountValue, 0);
  assert.is(res.body.isEstimate, false);
  assert.is(res.body.invoiceDate, '2026-03-01T00:00:00.000Z');
  assert.is(res.body.organizationId, acme.organizationId);
  assert.not.ok('invoiceItems' in res.body, 'no items sent, none answered');
  const row = await t.db('invoice').where({ id: res.body.id }).first();
  assert.is(row.invoiceNumber, body.invoiceNumber);
  assert.is(row.toContactId, contact);
  assert.is(row.status, 'DRAFT');
  assert.is(row.tenantId, acme.tenantId);
});

test('invoice: each required field, the enums, the bounds and references are 400s that write nothing', async () => {
  const before = await count('invoice');
  for (const field of ['invoiceNumber', 'invoiceDate', 'dueDate', 'fromOrganizationId']) {
    assertError(await postInvoice(invoiceBody({ [field]: undefined })), 400, `${field} should not be empty`);
  }
  assertError(
    await postInvoice(invoiceBody({ status: 'PAID', discountType: 'HALF', taxType: 'ALL', discountValue: -1, invoiceNumber: 1.5 })),
    400,
    'status must be one of the following values: DRAFT, SENT, VIEWED, FULLY_PAID, PARTIALLY_PAID, OVERPAID, VOID',
    'discountType must be one of the following values: PERCENT, FLAT',
    'taxType must be one of the following values: PERCENT, FLAT',
    'discountValue must not be less than 0',
    'invoiceNumber must be an integer number',
  );
  assertError(await postInvoice(invoiceBody({ toContactId: foreignContact })), 400, 'toContactId must reference an existing organization-contact');
  assertError(await postInvoice(invoiceBody({ fromOrganizationId: other.organizationId })), 400, 'fromOrganizationId must reference an existing organization');
  assert.is(await count('invoice'), before);
});

test('invoice: dueDate before invoiceDate is a 400 with the rule\'s message, on create and on a partial update', async () => {
  const before = await count('invoice');
  assertError(await postInvoice(invoiceBody({ dueDate: '2026-02-28' })), 400, 'dueDate must not be earlier than invoiceDate');
  assert.is(await count('invoice'), before, 'nothing written');
  // The same day is allowed.
  const res = await postInvoice(invoiceBody({ dueDate: '2026-03-01' }));
  assert.is(res.status, 201, JSON.stringify(res.body));
  assertError(await t.http.patch(`/api/invoice/${res.body.id}`).set(acme.auth).send({ invoiceDate: '2026-03-02' }), 400, 'dueDate must not be earlier than invoiceDate');
  const row = await t.db('invoice').where({ id: res.body.id }).first();
  assert.is(new Date(row.invoiceDate).toISOString(), '2026-03-01T00:00:00.000Z', 'unchanged');
});

test('invoice: invoiceNumber is unique per organization (409 with its message), not across organizations', async () => {
  const body = invoiceBody();
  assert.is((await postInvoice(body)).status, 201);
  const again = await postInvoice({ ...body, invoiceDate: '2026-04-01', dueDate: '2026-04-02' });
  assertError(again, 409, 'An invoice with this number already exists in this organization');
  assert.is(await count('invoice', { invoiceNumber: body.invoiceNumber }), 1);
  // Another organization of the same tenant has its own numbers.
  const branch = await created(acme, 'organization', { name: 'Acme Branch', currency: 'EUR' });
  const there = await postInvoice({ ...body, organizationId: branch, fromOrganizationId: branch });
  assert.is(there.status, 201, JSON.stringify(there.body));
  // Renumbering onto a taken number is the same 409.
  const second = await postInvoice(invoiceBody());
  assertError(await t.http.patch(`/api/invoice/${second.body.id}`).set(acme.auth).send({ invoiceNumber: body.invoiceNumber }), 409, 'An invoice with this number already exists in this organization');
});

test('invoice with items: the invoice and every item are written together; the answer carries the items', async () => {
  const body = invoiceBody({
    invoiceItems: [
      { description: 'Design', quantity: 10, price: 50, totalValue: 500, taskId: task, projectId: project },
      { description: 'Hosting', quantity: 1, price: 0, employeeId: employee.employeeId },
    ],
  });
  const res = await postInvoice(body);
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.invoiceItems.length, 2);
  for (const item of res.body.invoiceItems) {
    assert.is(item.invoiceId, res.body.id, 'filled in by the server');
    assert.is(item.organizationId, acme.organizationId, "the invoice's organization");
    assert.is(item.tenantId, acme.tenantId);
  }
  const rows = await itemsOf(res.body.id);
  assert.equal(rows.map((r) => [r.description, r.quantity, r.price, r.taskId, r.employeeId, r.projectId]), [
    ['Hosting', 1, 0, null, employee.employeeId, null],
    ['Design', 10, 50, task, null, project],
  ]);
  assert.equal(rows.map((r) => r.id).sort(), res.body.invoiceItems.map((i: any) => i.id).sort());
  assert.ok(await t.db('invoice').where({ id: res.body.id }).first(), 'the invoice is there');
  // They read back through the relation.
  const read = await t.http.get(`/api/invoice/${res.body.id}?relations[]=invoiceItems`).set(acme.auth);
  assert.equal(read.body.invoiceItems.map((i: any) => i.description).sort(), ['Design', 'Hosting']);
});

test('invoice with a bad item: a 400 naming the item, and neither the invoice nor any item is written', async () => {
  const invoices = await count('invoice');
  const items = await count('invoice_item');
  const good = { description: 'Fine', quantity: 1, price: 10 };
  const cases: Array<[unknown[], string]> = [
    [[good, { ...good, quantity: 0 }], 'invoiceItems.1.quantity must be greater than 0'],
    [[{ ...good, price: -5 }], 'invoiceItems.0.price must not be less than 0'],
    [[good, good, { description: 'No price', quantity: 1 }], 'invoiceItems.2.price should not be empty'],
    [[{ ...good, invoiceId: '00000000-0000-4000-8000-000000000000' }], 'property invoiceItems.0.invoiceId should not exist'],
    [[{ ...good, organizationId: other.organizationId }], 'property invoiceItems.0.organizationId should not exist'],
    [[{ ...good, colour: 'red' }], 'property invoiceItems.0.colour should not exist'],
    [['a string'], 'invoiceItems.0 must be an object'],
    // Looked up in the caller's tenant once the invoice is written: the whole transaction rolls back.
    [[good, { ...good, taskId: foreignTask }], 'invoiceItems.1.taskId must reference an existing task'],
    [[{ ...good, employeeId: '00000000-0000-4000-8000-000000000000' }], 'invoiceItems.0.employeeId must reference an existing employee'],
  ];
  for (const [invoiceItems, message] of cases) {
    const body = invoiceBody({ invoiceItems });
    assertError(await postInvoice(body), 400, message);
    assert.is(await count('invoice', { invoiceNumber: body.invoiceNumber }), 0, `${message}: no invoice`);
  }
  assertError(await postInvoice(invoiceBody({ invoiceItems: { quantity: 1 } })), 400, 'invoiceItems must be an array');
  assert.is(await count('invoice'), invoices);
  assert.is(await count('invoice_item'), items);
});

test('invoice with items whose invoice breaks a rule: a 409 or 400, and no item is left behind', async () => {
  const items = await count('invoice_item');
  const taken = invoiceBody();
  assert.is((await postInvoice(taken)).status, 201);
  const item = { description: 'Orphan?', quantity: 1, price: 1 };
  assertError(await postInvoice({ ...taken, invoiceItems: [item] }), 409, 'An invoice with this number already exists in this organization');
  assertError(await postInvoice(invoiceBody({ dueDate: '2026-01-01', invoiceItems: [item] })), 400, 'dueDate must not be earlier than invoiceDate');
  assert.is(await count('invoice_item'), items);
});

test('replacing items: PUT and PATCH with invoiceItems replace them; without, they stay; [] removes them', async () => {
  const res = await postInvoice(invoiceBody({ invoiceItems: [{ description: 'Old A', quantity: 1, price: 1 }, { description: 'Old B', quantity: 2, price: 2 }] }));
  const id = res.body.id;
  const oldIds = (await itemsOf(id)).map((r) => r.id);

  const put = await t.http.put(`/api/invoice/${id}`).set(acme.auth).send(invoiceBody({ invoiceNumber: res.body.invoiceNumber, invoiceItems: [{ description: 'New', quantity: 3, price: 30 }] }));
  assert.is(put.status, 200, JSON.stringify(put.body));
  let rows = await itemsOf(id);
  assert.equal(rows.map((r) => r.description), ['New']);
  assert.is(await count('invoice_item', { id: oldIds[0] }), 0, 'the old items are deleted');
  assert.equal(put.body.invoiceItems.map((i: any) => i.id), [rows[0].id]);

  // PATCH without items, and PUT without them: the items are records of their own and stay.
  assert.is((await t.http.patch(`/api/invoice/${id}`).set(acme.auth).send({ status: 'SENT' })).status, 200);
  assert.is((await t.http.put(`/api/invoice/${id}`).set(acme.auth).send(invoiceBody({ invoiceNumber: res.body.invoiceNumber }))).status, 200);
  assert.equal((await itemsOf(id)).map((r) => r.description), ['New']);

  const patch = await t.http.patch(`/api/invoice/${id}`).set(acme.auth).send({ invoiceItems: [{ description: 'P1', quantity: 1, price: 5 }, { description: 'P2', quantity: 1, price: 6 }] });
  assert.is(patch.status, 200, JSON.stringify(patch.body));
  rows = await itemsOf(id);
  assert.equal(rows.map((r) => r.description), ['P1', 'P2']);

  // A bad item in a PATCH: nothing of it happens, the invoice's own fields included.
  const bad = await t.http.patch(`/api/invoice/${id}`).set(acme.auth).send({ status: 'VOID', invoiceItems: [{ description: 'X', quantity: 1, price: 1, taskId: foreignTask }] });
  assertError(bad, 400, 'invoiceItems.0.taskId must reference an existing task');
  assert.equal((await itemsOf(id)).map((r) => r.description), ['P1', 'P2']);
  assert.is((await t.db('invoice').where({ id }).first()).status, 'DRAFT', 'the PUT reset it; the failed PATCH did not change it');

  // What a read answers can be sent back: the items' read-only fields are ignored.
  const read = await t.http.get(`/api/invoice/${id}?relations[]=invoiceItems`).set(acme.auth);
  const roundTrip = read.body.invoiceItems.map(({ invoiceId, organizationId, ...item }: any) => item);
  const back = await t.http.patch(`/api/invoice/${id}`).set(acme.auth).send({ invoiceItems: roundTrip });
  assert.is(back.status, 200, JSON.stringify(back.body));
  assert.equal((await itemsOf(id)).map((r) => r.description), ['P1', 'P2']);

  const cleared = await t.http.patch(`/api/invoice/${id}`).set(acme.auth).send({ invoiceItems: [] });
  assert.is(cleared.status, 200, JSON.stringify(cleared.body));
  assert.equal(cleared.body.invoiceItems, []);
  assert.is(await count('invoice_item', { invoiceId: id }), 0);
});

test('invoice-item on its own path: quantity > 0, price >= 0, an invoice of the tenant; deleting the invoice (soft) keeps its items', async () => {
  const invoice = (await postInvoice(invoiceBody())).body.id;
  const ok = await t.http.post('/api/invoice-item').set(acme.auth).send({ invoiceId: invoice, organizationId: acme.organizationId, quantity: 0.5, price: 0 });
  assert.is(ok.status, 201, JSON.stringify(ok.body));
  assertError(await t.http.post('/api/invoice-item').set(acme.auth).send({ invoiceId: invoice, quantity: 0, price: -1 }), 400, 'quantity must be greater than 0', 'price must not be less than 0');
  assertError(await t.http.post('/api/invoice-item').set(acme.auth).send({ quantity: 1, price: 1 }), 400, 'invoiceId should not be empty');
  const theirs = (await postInvoice({ ...invoiceBody(), organizationId: other.organizationId, fromOrganizationId: other.organizationId, toContactId: foreignContact }, other)).body.id;
  assertError(await t.http.post('/api/invoice-item').set(acme.auth).send({ invoiceId: theirs, organizationId: acme.organizationId, quantity: 1, price: 1 }), 400, 'invoiceId must reference an existing invoice');
  const read = await t.http.get(`/api/invoice-item/${ok.body.id}?relations[]=invoice`).set(acme.auth);
  assert.is(read.body.invoice.id, invoice);
  await t.http.delete(`/api/invoice/${invoice}`).set(acme.auth).expect(204);
  assert.is(await count('invoice_item', { id: ok.body.id }), 1);
});

test('invoice tags: set by ids of the tenant, filtered by tags[]', async () => {
  const tagged = await postInvoice(invoiceBody({ tagIds: [red] }));
  assert.is(tagged.status, 201, JSON.stringify(tagged.body));
  const plain = await postInvoice(invoiceBody());
  const foreignTag = await created(other, 'tags', { name: 'theirs', color: '#000' });
  assertError(await postInvoice(invoiceBody({ tags: [{ id: foreignTag }] })), 400, 'tags must reference an existing tag');
  const list = await t.http.get(`/api/invoice?tags[]=${red}&take=50`).set(acme.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  const ids = list.body.items.map((i: any) => i.id);
  assert.ok(ids.includes(tagged.body.id));
  assert.not.ok(ids.includes(plain.body.id));
});

test("invoice relations: its whitelist (toContact, fromOrganization, invoiceItems) loads; tags and anything else are a 400", async () => {
  const res = await postInvoice(invoiceBody({ tagIds: [red], invoiceItems: [{ quantity: 1, price: 9, taskId: task }] }));
  const id = res.body.id;
  const read = await t.http.get(`/api/invoice/${id}?relations=toContact,fromOrganization,invoiceItems,invoiceItems.task`).set(acme.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  assert.is(read.body.toContact.name, 'Globex');
  assert.is(read.body.fromOrganization.id, acme.organizationId);
  assert.is(read.body.invoiceItems[0].task.title, 'Build the site');
  assert.is(read.body.tags, undefined);
  const allowed = 'allowed: toContact, fromOrganization, invoiceItems';
  for (const unlisted of ['tags', 'items', 'organization', 'contact', 'employee']) {
    assertError(await t.http.get(`/api/invoice/${id}?relations[]=${unlisted}`).set(acme.auth), 400, new RegExp(`^relations: '${unlisted}' is not allowed; ${allowed}`));
    assertError(await t.http.get(`/api/invoice?relations[]=${unlisted}`).set(acme.auth), 400, new RegExp(`^relations: '${unlisted}' is not allowed; ${allowed}`));
  }
});

test('OpenAPI: the invoice bodies carry invoiceItems as item bodies without invoiceId and organizationId', async () => {
  const doc = (await t.http.get('/swg-json')).body;
  for (const kind of ['InvoiceCreate', 'InvoiceReplace', 'InvoicePatch']) {
    const items = doc.components.schemas[kind].properties.invoiceItems;
    assert.is(items.type, 'array', kind);
    assert.equal(Object.keys(items.items.properties).sort(), ['description', 'employeeId', 'price', 'projectId', 'quantity', 'taskId', 'totalValue']);
    assert.equal(items.items.required, ['quantity', 'price']);
    assert.is(items.items.additionalProperties, false);
  }
  // The item's own create body still takes invoiceId.
  assert.ok(doc.components.schemas.InvoiceItemCreate.required.includes('invoiceId'));
});

test('permissions: VIEWER reads, DATA_ENTRY writes, EMPLOYEE neither', async () => {
  const res = await postInvoice(invoiceBody());
  assert.is((await t.http.get(`/api/invoice/${res.body.id}`).set(viewer.auth)).status, 200);
  assertForbidden(await postInvoice(invoiceBody(), viewer));
  assertForbidden(await t.http.post('/api/invoice-item').set(viewer.auth).send({ invoiceId: res.body.id, quantity: 1, price: 1 }));
  assertForbidden(await t.http.get('/api/invoice').set(employee.auth));
  assertForbidden(await t.http.get('/api/invoice-item').set(employee.auth));
  const byDataEntry = await postInvoice(invoiceBody({ invoiceItems: [{ quantity: 1, price: 1 }] }), dataEntry);
  assert.is(byDataEntry.status, 201, JSON.stringify(byDataEntry.body));
});

test('tenant isolation: another tenant gets 404 and the invoice and its items are unchanged', async () => {
  const res = await postInvoice(invoiceBody({ status: 'SENT', invoiceItems: [{ description: 'Kept', quantity: 1, price: 1 }] }));
  const id = res.body.id;
  assertNotFound(await t.http.get(`/api/invoice/${id}`).set(other.auth));
  assertNotFound(await t.http.patch(`/api/invoice/${id}`).set(other.auth).send({ status: 'VOID', invoiceItems: [] }));
  assertNotFound(await t.http.put(`/api/invoice/${id}`).set(other.auth).send({ ...invoiceBody(), organizationId: other.organizationId, fromOrganizationId: other.organizationId, toContactId: undefined, invoiceItems: [] }));
  assertNotFound(await t.http.delete(`/api/invoice/${id}`).set(other.auth));
  const itemId = res.body.invoiceItems[0].id;
  assertNotFound(await t.http.get(`/api/invoice-item/${itemId}`).set(other.auth));
  // An item's change or delete that finds nothing is tried twice (a parent missed while it waited): still a 404.
  assertNotFound(await t.http.patch(`/api/invoice-item/${itemId}`).set(other.auth).send({ description: 'Taken' }));
  assertNotFound(await t.http.delete(`/api/invoice-item/${itemId}`).set(other.auth));
  assertError(await t.http.patch(`/api/invoice-item/${itemId}`).set(other.auth).set('If-Match', '"0"').send({ description: 'Taken' }), 404);
  assert.is((await t.db('invoice').where({ id }).first()).status, 'SENT');
  assert.equal((await itemsOf(id)).map((r) => r.description), ['Kept']);
});

// The definition format behind invoiceItems: a writable hasMany, checked at start-up.

/** The problems of a parent (box) and child (part) definition pair, compiled on their own. */
function problemsOf(boxRelations: string, partFields: string, partRelations = '', partSoftDelete = false): string[] {
  const box = ['name: box', 'scope: tenant', 'permissions: { read: authenticated, write: authenticated }', 'fields:', '  label: { type: string }', 'relations:', boxRelations, ''].join('\n');
  const part = ['name: part', 'scope: tenant', ...(partSoftDelete ? ['softDelete: true'] : []), 'permissions: { read: authenticated, write: authenticated }', 'fields:', partFields, ...(partRelations ? ['relations:', partRelations] : []), ''].join('\n');
  try {
    compileDefinitions([parseDefinition(box, 'box.yaml'), parseDefinition(part, 'part.yaml')], { permissions: loadRoles(ROLES_FILE).permissions });
    return [];
  } catch (err) {
    assert.instance(err, DefinitionError);
    return (err as DefinitionError).problems.map((p) => p.replace(/:\d+:\d+ /, ' '));
  }
}

test('definition format: a writable hasMany needs a writable via on the child, nests one level, and takes no idsKey', () => {
  const parts = '  parts: { hasMany: part, via: boxId, writable: true }';
  assert.equal(problemsOf(parts, '  boxId: { type: uuid, references: box }'), []);
  assert.equal(problemsOf(parts, '  boxId: { type: uuid, readOnly: true }'), ['box.yaml relations.parts.via: "boxId" of part is not writable: the engine could not set it on the children']);
  assert.equal(problemsOf(`${parts}\n  others: { hasMany: part, via: boxId, writable: true, idsKey: otherIds }`, '  boxId: { type: uuid }'), [
    'box.yaml relations.others.idsKey: applies only to a writable manyToMany relation',
  ]);
  assert.equal(problemsOf(parts, '  boxId: { type: uuid }', '  boxes: { hasMany: box, via: label, writable: true }'), [
    'box.yaml relations.parts.writable: part takes children itself (boxes): writable hasMany relations nest one level only',
    'part.yaml relations.boxes.via: "label" is a string field of box; via must be a uuid field pointing at part',
    'part.yaml relations.boxes.writable: box takes children itself (parts): writable hasMany relations nest one level only',
  ]);
  // Written children are replaced with their parent: they cannot be soft-deleted.
  assert.equal(problemsOf(parts, '  boxId: { type: uuid }', '', true), [
    'box.yaml relations.parts.writable: part has softDelete: writable children are replaced when their parent is written, so they cannot be soft-deleted',
  ]);
});

test.run();
