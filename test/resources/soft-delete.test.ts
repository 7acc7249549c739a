// Soft delete (softDelete: true: invoices, tasks, candidates) and who changed what (changedBy):
// a DELETE marks the record, which then vanishes from reads, lists, counts, search, relations,
// references and unique rules; withDeleted shows it to a caller able to delete; PUT /{id}/recover
// and Ever Gauzy's DELETE /{id}/soft; createdById and updatedById set from the caller.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';

type Tenant = Awaited<ReturnType<typeof newTenant>>;
let t: TestApp;
let acme: Tenant;
let other: Tenant;
let viewer: Session;
let dataEntry: Session;
let contact: string;
let nextNumber = 5000;

const show = (res: { status: number; body: unknown }) => `${res.status} ${JSON.stringify(res.body)}`;

async function created(who: Session, path: string, body: Record<string, unknown>) {
  const res = await t.http.post(`/api/${path}`).set(who.auth).send(body);
  assert.is(res.status, 201, `${path}: ${show(res)}`);
  return res.body as Record<string, any>;
}

const invoice = (who: Session = acme, extra: Record<string, unknown> = {}) =>
  created(who, 'invoice', {
    invoiceNumber: nextNumber++,
    organizationId: acme.organizationId,
    invoiceDate: '2026-03-01',
    dueDate: '2026-03-31',
    fromOrganizationId: acme.organizationId,
    toContactId: contact,
    ...extra,
  });

const row = (table: string, id: string) => t.db(table).where({ id }).first();
const listed = async (path: string, who: Session, query: Record<string, unknown> = {}) => {
  const res = await t.http.get(`/api/${path}`).query({ take: 50, ...query }).set(who.auth);
  assert.is(res.status, 200, show(res));
  return res.body.items.map((i: { id: string }) => i.id) as string[];
};

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  viewer = await userWithRole(t, acme, 'VIEWER');
  dataEntry = await userWithRole(t, acme, 'DATA_ENTRY');
  contact = (await created(acme, 'organization-contact', { name: 'Globex', contactType: 'CLIENT' })).id;
});
test.after(async () => {
  await t.close();
});

test('DELETE marks the record deleted by the caller; it vanishes from read, list, count and search', async () => {
  const gone = await invoice();
  const kept = await invoice();
  const res = await t.http.delete(`/api/invoice/${gone.id}`).set(dataEntry.auth);
  assert.is(res.status, 204, show(res));
  const stored = await row('invoice', gone.id);
  assert.ok(stored.deletedAt instanceof Date, 'deletedAt is set');
  assert.is(stored.deletedById, dataEntry.userId);
  assert.is(stored.invoiceNumber, gone.invoiceNumber, 'the row is kept whole');
  assertNotFound(await t.http.get(`/api/invoice/${gone.id}`).set(acme.auth));
  const ids = await listed('invoice', acme);
  assert.ok(ids.includes(kept.id));
  assert.not.ok(ids.includes(gone.id));
  const counted = await t.http.get('/api/invoice/count').query({ 'where[invoiceNumber]': gone.invoiceNumber }).set(acme.auth);
  assert.equal(counted.body, { total: 0 });
  const searched = await t.http.post('/api/invoice/search').set(acme.auth).send({ where: { id: gone.id } });
  assert.equal([searched.body.items, searched.body.total], [[], 0]);
  // A second delete, a PATCH or a PUT find nothing.
  assertNotFound(await t.http.delete(`/api/invoice/${gone.id}`).set(acme.auth));
  assertNotFound(await t.http.patch(`/api/invoice/${gone.id}`).set(acme.auth).send({ currency: 'USD' }));
  assert.is((await row('invoice', gone.id)).currency, stored.currency, 'the deleted row is untouched');
});

test('withDeleted=true lists and reads deleted records for a caller with the delete permission; 403 without it', async () => {
  const gone = await invoice();
  await t.http.delete(`/api/invoice/${gone.id}`).set(acme.auth).expect(204);
  const all = await listed('invoice', acme, { withDeleted: true });
  assert.ok(all.includes(gone.id));
  const onlyDeleted = await listed('invoice', acme, { withDeleted: 'true', 'where[deletedAt][isNull]': 'false' });
  assert.ok(onlyDeleted.includes(gone.id));
  for (const id of onlyDeleted) assert.ok((await row('invoice', id)).deletedAt, 'only deleted ones');
  const read = await t.http.get(`/api/invoice/${gone.id}`).query({ withDeleted: true }).set(acme.auth);
  assert.is(read.status, 200, show(read));
  assert.is(read.body.deletedById, acme.userId);
  assert.ok(read.body.deletedAt);
  const counted = await t.http.get('/api/invoice/count').query({ withDeleted: true, 'where[id]': gone.id }).set(acme.auth);
  assert.equal(counted.body, { total: 1 });
  const searched = await t.http.post('/api/invoice/search').set(acme.auth).send({ withDeleted: true, where: { id: gone.id } });
  assert.is(searched.body.total, 1, show(searched));
  // false is the default; a reader without the delete permission may not ask.
  assert.not.ok((await listed('invoice', acme, { withDeleted: false })).includes(gone.id));
  assertForbidden(await t.http.get('/api/invoice').query({ withDeleted: true }).set(viewer.auth));
  assertForbidden(await t.http.get(`/api/invoice/${gone.id}`).query({ withDeleted: true }).set(viewer.auth));
  assertForbidden(await t.http.post('/api/invoice/search').set(viewer.auth).send({ withDeleted: true }));
  assert.is((await t.http.get('/api/invoice').query({ withDeleted: false }).set(viewer.auth)).status, 200);
  // Another tenant never sees it.
  assertNotFound(await t.http.get(`/api/invoice/${gone.id}`).query({ withDeleted: true }).set(other.auth));
  assert.not.ok((await listed('invoice', other, { withDeleted: true })).includes(gone.id));
});

test('withDeleted: a value other than true or false is a 400; a resource without softDelete does not take it', async () => {
  assertError(await t.http.get('/api/invoice').query({ withDeleted: 'yes' }).set(acme.auth), 400, 'withDeleted must be true or false');
  assertError(await t.http.get('/api/invoice?withDeleted=true&withDeleted=false').set(acme.auth), 400, 'withDeleted must be a single value');
  assertError(await t.http.get(`/api/invoice/${(await invoice()).id}`).query({ withDeleted: 'maybe' }).set(acme.auth), 400, 'withDeleted must be true or false');
  const res = await t.http.get('/api/organization-contact').query({ withDeleted: true }).set(acme.auth);
  assertError(res, 400, /^withDeleted is not a supported list parameter of organization-contact/);
  assertError(await t.http.get(`/api/organization-contact/${contact}`).query({ withDeleted: true }).set(acme.auth), 400, /^withDeleted is not a supported parameter/);
});

test('PUT /{id}/recover brings a deleted record back; 404 for a live, unknown or foreign one; 403 without the permission', async () => {
  const gone = await invoice();
  await t.http.delete(`/api/invoice/${gone.id}`).set(acme.auth).expect(204);
  assertForbidden(await t.http.put(`/api/invoice/${gone.id}/recover`).set(viewer.auth));
  assertNotFound(await t.http.put(`/api/invoice/${gone.id}/recover`).set(other.auth));
  assert.ok((await row('invoice', gone.id)).deletedAt, 'still deleted');
  const res = await t.http.put(`/api/invoice/${gone.id}/recover`).set(dataEntry.auth);
  assert.is(res.status, 200, show(res));
  assert.is(res.body.deletedAt, null);
  assert.is(res.body.deletedById, null);
  assert.is(res.body.updatedById, dataEntry.userId, 'a recovery is a change by its caller');
  assert.is(res.body.createdById, acme.userId);
  assert.match(res.headers.etag, /^"[^"]+"$/);
  const stored = await row('invoice', gone.id);
  assert.is(stored.deletedAt, null);
  assert.ok((await listed('invoice', acme)).includes(gone.id));
  assertNotFound(await t.http.put(`/api/invoice/${gone.id}/recover`).set(acme.auth));
  assertNotFound(await t.http.put('/api/invoice/00000000-0000-4000-8000-000000000000/recover').set(acme.auth));
  assertError(await t.http.put('/api/invoice/not-a-uuid/recover').set(acme.auth), 400, 'id must be a UUID');
  // A resource without softDelete has no recover.
  assert.is((await t.http.put(`/api/organization-contact/${contact}/recover`).set(acme.auth)).status, 404);
});

test('recover honours If-Match: a stale tag is a 412 and the record stays deleted', async () => {
  const gone = await invoice();
  const deleted = await t.http.delete(`/api/invoice/${gone.id}`).set(acme.auth);
  assert.is(deleted.status, 204);
  const read = await t.http.get(`/api/invoice/${gone.id}?withDeleted=true`).set(acme.auth);
  const stale = await t.http.put(`/api/invoice/${gone.id}/recover`).set(acme.auth).set('If-Match', '"0000"');
  assertError(stale, 412, /ETag/);
  assert.ok((await row('invoice', gone.id)).deletedAt, 'still deleted');
  const fresh = await t.http.put(`/api/invoice/${gone.id}/recover`).set(acme.auth).set('If-Match', read.headers.etag);
  assert.is(fresh.status, 200, show(fresh));
});

test('unique rules hold over records not deleted: a deleted number is free again; recovering into a taken one is a 409', async () => {
  const first = await invoice();
  await t.http.delete(`/api/invoice/${first.id}`).set(acme.auth).expect(204);
  const again = await invoice(acme, { invoiceNumber: first.invoiceNumber });
  assert.is(again.invoiceNumber, first.invoiceNumber);
  const res = await t.http.put(`/api/invoice/${first.id}/recover`).set(acme.auth);
  assertError(res, 409, 'An invoice with this number already exists in this organization');
  assert.ok((await row('invoice', first.id)).deletedAt, 'still deleted');
  // Two live ones with one number are still refused.
  const dup = await t.http.post('/api/invoice').set(acme.auth).send({ ...again, id: undefined, tenantId: undefined, createdAt: undefined, updatedAt: undefined });
  assert.is(dup.status, 409, show(dup));
});

test('a deleted record is no reference and no relation: a new record cannot point at it, a loaded relation is null', async () => {
  const task = await created(acme, 'task', { title: 'Will go' });
  const employee = { id: (await userWithRole(t, acme, 'EMPLOYEE', true)).employeeId! };
  const log = await created(acme, 'time-log', { employeeId: employee.id, startedAt: '2026-04-01T09:00:00Z', stoppedAt: '2026-04-01T10:00:00Z', taskId: task.id });
  await t.http.delete(`/api/tasks/${task.id}/soft`).set(acme.auth).expect(204);
  assert.ok((await row('task', task.id)).deletedAt, 'DELETE /{id}/soft marks it as DELETE does');
  const refused = await t.http.post('/api/time-log').set(acme.auth).send({ employeeId: employee.id, startedAt: '2026-04-02T09:00:00Z', taskId: task.id });
  assertError(refused, 400, 'taskId must reference an existing task');
  const read = await t.http.get(`/api/time-log/${log.id}?relations=task`).set(acme.auth);
  assert.is(read.status, 200, show(read));
  assert.is(read.body.taskId, task.id, 'the reference is kept');
  assert.is(read.body.task, null, 'the deleted task is not loaded');
  assert.not.ok((await listed('time-log', acme, { 'where[task][id]': task.id })).includes(log.id), 'nor filtered through');
  await t.http.put(`/api/task/${task.id}/recover`).set(acme.auth).expect(200);
  const back = await t.http.get(`/api/time-log/${log.id}?relations=task`).set(acme.auth);
  assert.is(back.body.task.id, task.id);
});

test("a deleted invoice's items are out of sight with it, through their own path too, until it is recovered", async () => {
  const made = await invoice(acme, { invoiceItems: [{ quantity: 2, price: 10 }] });
  const item = made.invoiceItems[0].id;
  // A change to an item changes its invoice: the caller is its last changer.
  const changed = await t.http.patch(`/api/invoice-item/${item}`).set(dataEntry.auth).send({ quantity: 3 });
  assert.is(changed.status, 200, show(changed));
  assert.is((await row('invoice', made.id)).updatedById, dataEntry.userId);
  await t.http.delete(`/api/invoice/${made.id}`).set(acme.auth).expect(204);
  assertNotFound(await t.http.get(`/api/invoice-item/${item}`).set(acme.auth));
  assertNotFound(await t.http.patch(`/api/invoice-item/${item}`).set(acme.auth).send({ quantity: 4 }));
  assertNotFound(await t.http.delete(`/api/invoice-item/${item}`).set(acme.auth));
  assert.not.ok((await listed('invoice-item', acme, { 'where[invoiceId]': made.id })).length, 'not listed');
  const refused = await t.http.post('/api/invoice-item').set(acme.auth).send({ invoiceId: made.id, quantity: 1, price: 1 });
  assertError(refused, 400, 'invoiceId must reference an existing invoice');
  assert.is((await row('invoice_item', item)).quantity, 3, 'the item is kept as it was');
  await t.http.put(`/api/invoice/${made.id}/recover`).set(acme.auth).expect(200);
  const back = await t.http.get(`/api/invoice/${made.id}?relations=invoiceItems`).set(acme.auth);
  assert.equal(back.body.invoiceItems.map((i: { id: string }) => i.id), [item]);
  assert.is((await t.http.get(`/api/invoice-item/${item}`).set(acme.auth)).status, 200);
});

test('changedBy: createdById and updatedById are the callers; a body cannot set them; they filter', async () => {
  const made = await invoice(acme, { createdById: dataEntry.userId, updatedById: dataEntry.userId });
  assert.is(made.createdById, acme.userId);
  assert.is(made.updatedById, acme.userId);
  const patched = await t.http.patch(`/api/invoice/${made.id}`).set(dataEntry.auth).send({ currency: 'USD', createdById: dataEntry.userId });
  assert.is(patched.status, 200, show(patched));
  assert.is(patched.body.createdById, acme.userId);
  assert.is(patched.body.updatedById, dataEntry.userId);
  const stored = await row('invoice', made.id);
  assert.equal([stored.createdById, stored.updatedById], [acme.userId, dataEntry.userId]);
  const replaced = await t.http.put(`/api/invoice/${made.id}`).set(acme.auth).send({
    invoiceNumber: made.invoiceNumber, invoiceDate: '2026-03-01', dueDate: '2026-03-31', fromOrganizationId: acme.organizationId,
  });
  assert.is(replaced.status, 200, show(replaced));
  assert.equal([replaced.body.createdById, replaced.body.updatedById], [acme.userId, acme.userId]);
  const byDataEntry = await invoice(dataEntry);
  const ids = await listed('invoice', acme, { 'where[createdById]': dataEntry.userId });
  assert.ok(ids.includes(byDataEntry.id));
  assert.not.ok(ids.includes(made.id));
  assertError(await t.http.get('/api/invoice').query({ 'where[createdById]': 'nobody' }).set(acme.auth), 400, /^where\.createdById must be a UUID/);
  // A resource without changedBy has neither.
  assert.is((await created(acme, 'organization-contact', { name: 'Plain' })).createdById, undefined);
});

test('bulk writes keep the rules: a bulk delete marks deleted, bulk creates and changes set createdById and updatedById', async () => {
  const bulk = await t.http.post('/api/invoice/bulk').set(dataEntry.auth).send([0, 1].map(() => ({
    invoiceNumber: nextNumber++, organizationId: acme.organizationId, invoiceDate: '2026-03-01', dueDate: '2026-03-31', fromOrganizationId: acme.organizationId,
  })));
  assert.is(bulk.status, 201, show(bulk));
  const ids = bulk.body.items.map((i: { id: string }) => i.id);
  for (const item of bulk.body.items) assert.equal([item.createdById, item.updatedById], [dataEntry.userId, dataEntry.userId]);
  const changed = await t.http.patch('/api/invoice/bulk').set(acme.auth).send(ids.map((id: string) => ({ id, currency: 'CHF' })));
  assert.is(changed.status, 200, show(changed));
  for (const item of changed.body.items) assert.equal([item.createdById, item.updatedById], [dataEntry.userId, acme.userId]);
  const deleted = await t.http.delete('/api/invoice/bulk').set(acme.auth).send({ ids });
  assert.is(deleted.status, 204, show(deleted));
  for (const id of ids) {
    const stored = await row('invoice', id);
    assert.ok(stored.deletedAt, 'kept, marked deleted');
    assert.is(stored.deletedById, acme.userId);
  }
  // Deleted ones are out of a bulk's reach, as of a single write's.
  assertNotFound(await t.http.delete('/api/invoice/bulk').set(acme.auth).send({ ids }));
  assertNotFound(await t.http.patch('/api/invoice/bulk').set(acme.auth).send([{ id: ids[0], currency: 'EUR' }]));
});

test('the OpenAPI document has recover, the /soft delete and withDeleted on softDelete resources only', async () => {
  const doc = (await t.http.get('/swg-json')).body;
  assert.ok(doc.paths['/api/invoice/{id}/recover'].put);
  assert.ok(doc.paths['/api/task/{id}/soft'].delete);
  assert.equal(doc.paths['/api/task/{id}/soft']['x-aliases'], ['/api/tasks/{id}/soft'], 'an alias of the task path');
  assert.is(doc.paths['/api/organization-contact/{id}/recover'], undefined);
  const names = (params: Array<{ name?: string }>) => params.map((p) => p.name);
  assert.ok(names(doc.paths['/api/invoice'].get.parameters).includes('withDeleted'));
  assert.ok(names(doc.paths['/api/invoice/{id}'].get.parameters).includes('withDeleted'));
  assert.not.ok(names(doc.paths['/api/organization-contact'].get.parameters).includes('withDeleted'));
  const record = doc.components.schemas.Invoice.properties;
  for (const field of ['createdById', 'updatedById', 'deletedAt', 'deletedById']) assert.is(record[field].readOnly, true, field);
});

test.run();
