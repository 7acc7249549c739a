// Share links as the tenant's users manage them (resources/public-share/link-routes.ts): created
// for an invoice or estimate of the caller's tenant with INVOICES_EDIT (201, the token shown once,
// only its SHA-256 stored), listed without tokens, revoked (kept, with revokedAt); expiries checked;
// another tenant's invoice or link a 404 that writes nothing; the roles without the permission 403.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertNotFound, assertUnauthorized } from '../helpers/error-envelope.js';
import { buildShareWorld, invoiceOf, publicUrl, sha256, share, type ShareWorld } from '../helpers/share-links.js';

let t: TestApp;
let w: ShareWorld;
let viewer: Session;
let employee: Session;
let dataEntry: Session;

test.before(async () => {
  t = await createTestApp();
  w = await buildShareWorld(t);
  viewer = await userWithRole(t, w.acme, 'VIEWER');
  employee = await userWithRole(t, w.acme, 'EMPLOYEE', true);
  dataEntry = await userWithRole(t, w.acme, 'DATA_ENTRY');
});
test.after(async () => {
  await t?.close();
});

const DAY_MS = 24 * 60 * 60 * 1000;
const links = (where: Record<string, unknown> = {}) => t.db('invoice_share_link').where(where);
const count = async (where: Record<string, unknown> = {}) => Number((await links(where).count({ n: '*' }))[0].n);
const inDays = (days: number) => new Date(Date.now() + days * DAY_MS);
const path = (invoiceId: string) => `/api/invoice/${invoiceId}/share-link`;

test('a link is created with its token shown once: only the hash is stored, with tenant, creator and expiry', async () => {
  const link = await share(t, w.acme, w.invoice.id);
  assert.equal(Object.keys(link).sort(), ['active', 'createdAt', 'createdById', 'expiresAt', 'id', 'invoiceId', 'revokedAt', 'token', 'url']);
  assert.match(link.token, /^[A-Za-z0-9_-]{43}$/);
  assert.is(link.url, `${t.config.apiBaseUrl}${publicUrl('invoice', w.invoice.id, link.token)}`);
  assert.is(link.invoiceId, w.invoice.id);
  assert.is(link.createdById, w.acme.userId);
  assert.is(link.revokedAt, null);
  assert.is(link.active, true);
  const row = await links({ id: link.id }).first();
  assert.is(row.tokenHash, sha256(link.token));
  assert.is(row.tenantId, w.acme.tenantId);
  assert.is(row.invoiceId, w.invoice.id);
  assert.is(row.createdById, w.acme.userId);
  assert.is(row.revokedAt, null);
  assert.is(new Date(row.expiresAt).toISOString(), link.expiresAt);
  // The default expiry is 30 days out: between 29 and 31 days from now whatever the clock did meanwhile.
  const days = (new Date(link.expiresAt).getTime() - Date.now()) / DAY_MS;
  assert.ok(days > 29 && days <= 30, `${days} days`);
  assert.not.ok(JSON.stringify(await links({ id: link.id }).first()).includes(link.token), 'the token itself is stored nowhere');

  // An estimate's link opens under /api/public/estimate; each link has its own token.
  const estimate = await share(t, w.acme, w.estimate.id);
  assert.is(estimate.url, `${t.config.apiBaseUrl}${publicUrl('estimate', w.estimate.id, estimate.token)}`);
  assert.is.not(estimate.token, link.token);
});

test('an expiry may be given (a date or a date-time); past, more than 365 days ahead or malformed is a 400 and nothing is written', async () => {
  const at = inDays(3);
  at.setUTCMilliseconds(0);
  const link = await share(t, w.acme, w.invoice.id, { expiresAt: at.toISOString() });
  assert.is(link.expiresAt, at.toISOString());
  assert.is(new Date((await links({ id: link.id }).first()).expiresAt).toISOString(), at.toISOString());
  const day = inDays(10).toISOString().slice(0, 10);
  assert.is((await share(t, w.acme, w.invoice.id, { expiresAt: day })).expiresAt, `${day}T00:00:00.000Z`);
  // An empty body takes the default, like no body.
  assert.is((await share(t, w.acme, w.invoice.id, {})).active, true);

  const before = await count();
  const refused: Array<[unknown, string]> = [
    [{ expiresAt: inDays(-1).toISOString() }, 'expiresAt must be in the future'],
    [{ expiresAt: inDays(366).toISOString() }, 'expiresAt must not be more than 365 days ahead'],
    [{ expiresAt: 'next week' }, 'expiresAt must be a valid ISO 8601 date string'],
    [{ expiresAt: 1767225600 }, 'expiresAt must be a string'],
    [{ expiresAt: inDays(3).toISOString(), token: 'mine' }, 'property token should not exist'],
    [[], 'body must be an object'],
  ];
  for (const [body, message] of refused) assertError(await t.http.post(path(w.invoice.id)).set(w.acme.auth).send(body as object), 400, message);
  assertError(await t.http.post(`${path(w.invoice.id)}?expiresAt=x`).set(w.acme.auth), 400, 'expiresAt is not a supported parameter of this route');
  assert.is(await count(), before);
});

test("another tenant's invoice, an unknown one or a malformed id: 404 or 400, and no link is written", async () => {
  const before = await count();
  assertNotFound(await t.http.post(path(w.foreignInvoice.id)).set(w.acme.auth));
  assertNotFound(await t.http.post(path(randomUUID())).set(w.acme.auth));
  assertError(await t.http.post(path('not-a-uuid')).set(w.acme.auth), 400, 'id must be a UUID');
  assertNotFound(await t.http.post(path(w.invoice.id)).set(w.other.auth));
  assert.is(await count(), before);
  // The other tenant's links of its own invoice are its own.
  const theirs = await share(t, w.other, w.foreignInvoice.id);
  assert.is((await links({ id: theirs.id }).first()).tenantId, w.other.tenantId);
});

test('permissions: creating and revoking need INVOICES_EDIT, listing INVOICES_VIEW; no token is a 401', async () => {
  const link = await share(t, dataEntry, w.invoice.id);
  assert.is(link.createdById, dataEntry.userId);
  const before = await count();
  assertForbidden(await t.http.post(path(w.invoice.id)).set(viewer.auth));
  assertForbidden(await t.http.post(path(w.invoice.id)).set(employee.auth));
  assertUnauthorized(await t.http.post(path(w.invoice.id)));
  assert.is(await count(), before);

  const listed = await t.http.get(path(w.invoice.id)).set(viewer.auth);
  assert.is(listed.status, 200, JSON.stringify(listed.body));
  assertForbidden(await t.http.get(path(w.invoice.id)).set(employee.auth));
  assertUnauthorized(await t.http.get(path(w.invoice.id)));

  assertForbidden(await t.http.delete(`${path(w.invoice.id)}/${link.id}`).set(viewer.auth));
  assertForbidden(await t.http.delete(`${path(w.invoice.id)}/${link.id}`).set(employee.auth));
  assertUnauthorized(await t.http.delete(`${path(w.invoice.id)}/${link.id}`));
  assert.is((await links({ id: link.id }).first()).revokedAt, null);
});

test("the list holds the invoice's links, newest first, active or not, never a token or its hash", async () => {
  const invoice = await invoiceOf(t, w.acme);
  const first = await share(t, w.acme, invoice.id);
  const second = await share(t, w.acme, invoice.id);
  const third = await share(t, w.acme, invoice.id);
  await links({ id: first.id }).update({ expiresAt: new Date(Date.now() - DAY_MS) });
  assert.is((await t.http.delete(`${path(invoice.id)}/${second.id}`).set(w.acme.auth)).status, 204);
  // Order by creation: the three were written in this order, but may share a timestamp.
  await links({ id: first.id }).update({ createdAt: new Date(Date.now() - 3000) });
  await links({ id: second.id }).update({ createdAt: new Date(Date.now() - 2000) });
  const res = await t.http.get(path(invoice.id)).set(w.acme.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.total, 3);
  assert.equal(res.body.items.map((l: any) => l.id), [third.id, second.id, first.id]);
  assert.equal(res.body.items.map((l: any) => l.active), [true, false, false]);
  assert.ok(res.body.items[1].revokedAt, 'the revoked link says when');
  const text = JSON.stringify(res.body);
  for (const link of [first, second, third]) {
    assert.not.ok(text.includes(link.token), 'no token');
    assert.not.ok(text.includes(sha256(link.token)), 'no hash');
  }
  for (const item of res.body.items) assert.equal(Object.keys(item).sort(), ['active', 'createdAt', 'createdById', 'expiresAt', 'id', 'invoiceId', 'revokedAt']);

  assert.equal((await t.http.get(path((await invoiceOf(t, w.acme)).id)).set(w.acme.auth)).body, { items: [], total: 0 });
  assertNotFound(await t.http.get(path(w.foreignInvoice.id)).set(w.acme.auth));
  assertError(await t.http.get(`${path(invoice.id)}?take=5`).set(w.acme.auth), 400, 'take is not a supported parameter of this route');
});

test('revoking: 204, revokedAt set and kept; again 204 unchanged; a link of another invoice or tenant is a 404 that changes nothing', async () => {
  const link = await share(t, w.acme, w.invoice.id);
  const revoke = (invoiceId: string, linkId: string, session: Session = w.acme) => t.http.delete(`${path(invoiceId)}/${linkId}`).set(session.auth);
  const res = await revoke(w.invoice.id, link.id);
  assert.is(res.status, 204);
  assert.is(res.text, '');
  const revokedAt = (await links({ id: link.id }).first()).revokedAt;
  assert.ok(revokedAt instanceof Date);
  assert.is((await revoke(w.invoice.id, link.id)).status, 204);
  assert.equal((await links({ id: link.id }).first()).revokedAt, revokedAt, 'the first revocation is kept');
  assert.is(await count({ id: link.id }), 1, 'a revoked link stays as a record');

  const live = await share(t, w.acme, w.estimate.id);
  assertNotFound(await revoke(w.invoice.id, live.id)); // the estimate's link under the invoice's path
  assertNotFound(await revoke(w.invoice.id, randomUUID()));
  assertError(await revoke(w.invoice.id, 'nope'), 400, 'linkId must be a UUID');
  assertNotFound(await revoke(w.estimate.id, live.id, w.other));
  const theirs = await share(t, w.other, w.foreignInvoice.id);
  assertNotFound(await revoke(w.foreignInvoice.id, theirs.id));
  assertNotFound(await revoke(w.invoice.id, theirs.id));
  assert.is((await links({ id: live.id }).first()).revokedAt, null);
  assert.is((await links({ id: theirs.id }).first()).revokedAt, null);
});

test("estimateStatus is the customer's: ignored in invoice bodies; a deleted invoice's links open nothing until it is recovered", async () => {
  const estimate = await invoiceOf(t, w.acme, { isEstimate: true, estimateStatus: 'ACCEPTED', estimateDecidedAt: '2026-01-01T00:00:00Z' });
  assert.is(estimate.estimateStatus, null);
  assert.is(estimate.estimateDecidedAt, null);
  const patched = await t.http.patch(`/api/invoice/${estimate.id}`).set(w.acme.auth).send({ estimateStatus: 'REJECTED' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.is((await t.db('invoice').where({ id: estimate.id }).first()).estimateStatus, null);

  const link = await share(t, w.acme, estimate.id);
  const open = () => t.http.get(publicUrl('estimate', estimate.id, link.token));
  assert.is((await open()).status, 200);
  // Invoices are soft-deleted: the link is kept, and opens nothing while its invoice is deleted.
  assert.is((await t.http.delete(`/api/invoice/${estimate.id}`).set(w.acme.auth)).status, 204);
  assert.is(await count({ id: link.id }), 1);
  assert.is((await open()).status, 404);
  assert.is((await t.http.put(`/api/invoice/${estimate.id}/recover`).set(w.acme.auth)).status, 200);
  assert.is((await open()).status, 200);
});

test.run();
