// What a customer does with a share link, without an account (resources/public-share/
// public-routes.ts): opens the invoice or estimate, sees only its whitelisted fields and the
// relations of the enum (a 400 for any other), and answers an estimate once. Every way a token can
// fail (unknown, malformed, expired, revoked, another record's, the other kind, another tenant's)
// is the same 404, and nothing of the tenant beyond the record reaches the customer.
import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../engine/log/log.js';
import { PUBLIC_RELATIONS } from '../../resources/public-share/customer-view.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertNotFound } from '../helpers/error-envelope.js';
import { buildShareWorld, invoiceOf, publicUrl, share, type ShareWorld } from '../helpers/share-links.js';

let t: TestApp;
let w: ShareWorld;
/** Live links of the invoice and of the estimate. */
let invoiceToken: string;
let estimateToken: string;

/** The app's log lines, parsed. */
const lines: Array<Record<string, any>> = [];
const sink = new Writable({
  write(chunk, _encoding, done) {
    for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});

test.before(async () => {
  t = await createTestApp({ env: { LOG_LEVEL: 'info' }, appOptions: { logger: createLogger('info', sink) } });
  w = await buildShareWorld(t);
  invoiceToken = (await share(t, w.acme, w.invoice.id)).token;
  estimateToken = (await share(t, w.acme, w.estimate.id)).token;
});
test.after(async () => {
  await t?.close();
});

const ALL = PUBLIC_RELATIONS.map((r) => `relations[]=${r}`).join('&');
const INVOICE_FIELDS = [
  'currency', 'discountType', 'discountValue', 'dueDate', 'estimateDecidedAt', 'estimateStatus', 'fromOrganizationId', 'id', 'invoiceDate',
  'invoiceNumber', 'isEstimate', 'organizationId', 'status', 'tax', 'taxType', 'terms', 'toContactId', 'totalValue',
];

/** OpenAPI 3.0's boolean exclusiveMinimum/Maximum as draft-07's numbers, for Ajv. */
function draft07(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(draft07);
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, draft07(v)]));
  for (const [exclusive, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']]) {
    if (typeof out[exclusive] !== 'boolean') continue;
    if (out[exclusive]) out[exclusive] = out[bound];
    else delete out[exclusive];
    if (out[exclusive] !== undefined) delete out[bound];
  }
  return out;
}

/** Validates against a schema of the document (Ajv understands nullable). */
function documented(schemaName: string) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'doc', components: draft07((t.openapi as any).components) });
  // A plain boolean check: as a type guard it would narrow the bodies it checks to unknown.
  return ajv.compile({ $ref: `doc#/components/schemas/${schemaName}` }) as unknown as { (value: unknown): boolean; errors?: unknown };
}

const invoiceRow = (id: string) => t.db('invoice').where({ id }).first();

test('the invoice opens without a bearer token: its customer fields only, and each relation with its own few fields', async () => {
  const bare = await t.http.get(publicUrl('invoice', w.invoice.id, invoiceToken));
  assert.is(bare.status, 200, JSON.stringify(bare.body));
  assert.equal(Object.keys(bare.body).sort(), INVOICE_FIELDS);
  assert.is(bare.body.id, w.invoice.id);
  assert.is(bare.body.totalValue, 1500);
  assert.is(bare.body.terms, 'Net 30');
  assert.is(bare.body.invoiceDate, '2026-03-01T00:00:00.000Z');

  const full = await t.http.get(`${publicUrl('invoice', w.invoice.id, invoiceToken)}?${ALL}`);
  assert.is(full.status, 200, JSON.stringify(full.body));
  assert.equal(Object.keys(full.body).sort(), [...INVOICE_FIELDS, 'fromOrganization', 'invoiceItems', 'organization', 'toContact'].sort());
  assert.equal(full.body.organization, { id: w.acme.organizationId, name: 'Acme', website: null });
  assert.equal(full.body.fromOrganization, full.body.organization);
  assert.equal(full.body.toContact, { id: w.contact, name: 'Globex' });
  assert.is(full.body.invoiceItems.length, 2);
  const design = full.body.invoiceItems.find((i: any) => i.description === 'Design');
  const hosting = full.body.invoiceItems.find((i: any) => i.description === 'Hosting');
  assert.equal(design, {
    id: design.id, description: 'Design', quantity: 10, price: 100, totalValue: 1000, employeeId: w.employee.id, projectId: w.project,
    employee: { id: w.employee.id, firstName: 'Erin', lastName: 'Coder' },
    project: { id: w.project, name: 'Website' },
  });
  assert.equal([hosting.employee, hosting.project], [null, null]);
  const valid = documented('PublicInvoice');
  assert.ok(valid(full.body) && valid(bare.body), JSON.stringify(valid.errors));
  assert.not.ok(valid({ ...bare.body, tenantId: w.acme.tenantId }), 'the document allows no other field');

  // Nothing of the tenant beyond the record: no tenant id, user id or email, rate, budget or task.
  const text = JSON.stringify(full.body).toLowerCase();
  for (const secret of [w.acme.tenantId, w.acme.userId, w.employee.email, 'billing@globex.example', w.task, 'billrate', 'budget', 'internal budget notes', 'tenantid', 'userid', 'email', 'createdat']) {
    assert.not.ok(text.includes(secret.toLowerCase()), `the answer shows ${secret}`);
  }
  // A nested relation brings its parent; the list spellings work.
  const nested = await t.http.get(`${publicUrl('invoice', w.invoice.id, invoiceToken)}?relations=invoiceItems.project`);
  assert.is(nested.status, 200);
  assert.equal(Object.keys(nested.body).filter((k) => !INVOICE_FIELDS.includes(k)), ['invoiceItems']);
  assert.equal(Object.keys(nested.body.invoiceItems[0]).sort(), ['description', 'employeeId', 'id', 'price', 'project', 'projectId', 'quantity', 'totalValue']);
});

test('the estimate opens under /api/public/estimate, the same way', async () => {
  const res = await t.http.get(`${publicUrl('estimate', w.estimate.id, estimateToken)}?relations[]=toContact`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.isEstimate, true);
  assert.is(res.body.estimateStatus, null);
  assert.equal(res.body.toContact, { id: w.contact, name: 'Globex' });
});

test('relations outside the enum, other query parameters or a malformed id are 400s naming what is allowed', async () => {
  const url = publicUrl('invoice', w.invoice.id, invoiceToken);
  const allowed = `allowed: ${PUBLIC_RELATIONS.join(', ')}`;
  for (const relation of ['tags', 'invoiceItems.task', 'invoiceItems.employee.user', 'toContact.projects', 'tenant', 'user']) {
    assertError(await t.http.get(`${url}?relations[]=${relation}`), 400, `relations: '${relation}' is not allowed; ${allowed}`);
  }
  assertError(await t.http.get(`${url}?relations[]=toContact&relations[]=invoiceItems.employee.user`), 400, /invoiceItems\.employee\.user' is not allowed/);
  assertError(await t.http.get(`${url}?where[id]=x`), 400, 'where is not a supported parameter when reading one record; supported: relations');
  assertError(await t.http.get(publicUrl('invoice', 'not-a-uuid', invoiceToken)), 400, 'id must be a UUID');
  assertError(await t.http.get(publicUrl('estimate', '1', estimateToken)), 400, 'id must be a UUID');
  // Even with a wrong token the parameters are checked first: a 400 says nothing about the token.
  assertError(await t.http.get(`${publicUrl('invoice', w.invoice.id, 'x')}?relations[]=tags`), 400, /'tags' is not allowed/);
});

test('every way a token fails is the same 404: unknown, malformed, expired, revoked, another record, the other kind, another tenant', async () => {
  const expired = await share(t, w.acme, w.invoice.id);
  await t.db('invoice_share_link').where({ id: expired.id }).update({ expiresAt: new Date(Date.now() - 1000) });
  const revoked = await share(t, w.acme, w.invoice.id);
  assert.is((await t.http.delete(`/api/invoice/${w.invoice.id}/share-link/${revoked.id}`).set(w.acme.auth)).status, 204);
  const foreign = await share(t, w.other, w.foreignInvoice.id);
  const secondInvoice = await invoiceOf(t, w.acme);
  const failing: Array<[string, string]> = [
    ['unknown token', publicUrl('invoice', w.invoice.id, randomBytes(32).toString('base64url'))],
    ['malformed token', publicUrl('invoice', w.invoice.id, 'abc')],
    ['token with a character too many', publicUrl('invoice', w.invoice.id, `${invoiceToken}A`)],
    ['token with one character changed', publicUrl('invoice', w.invoice.id, `${invoiceToken.slice(0, -1)}${invoiceToken.endsWith('A') ? 'B' : 'A'}`)],
    ['unknown record', publicUrl('invoice', randomUUID(), invoiceToken)],
    ['expired link', publicUrl('invoice', w.invoice.id, expired.token)],
    ['revoked link', publicUrl('invoice', w.invoice.id, revoked.token)],
    ["another record's token", publicUrl('invoice', secondInvoice.id, invoiceToken)],
    ['an invoice as an estimate', publicUrl('estimate', w.invoice.id, invoiceToken)],
    ['an estimate as an invoice', publicUrl('invoice', w.estimate.id, estimateToken)],
    ["tenant A's token on tenant B's invoice", publicUrl('invoice', w.foreignInvoice.id, invoiceToken)],
    ["tenant B's token on tenant A's invoice", publicUrl('invoice', w.invoice.id, foreign.token)],
  ];
  let first: unknown;
  for (const [what, url] of failing) {
    const res = await t.http.get(url);
    assertNotFound(res);
    first ??= res.body;
    assert.equal(res.body, first, `${what}: the same body`);
    // The same token and id under the estimate's PUT (the two cases of the other kind are their own test).
    if (!what.includes(' as an ')) assertNotFound(await t.http.put(url.replace('/public/invoice/', '/public/estimate/')).send({ status: 'ACCEPTED' }));
  }
  // The other tenant's link still opens its own invoice, for its own customer.
  assert.is((await t.http.get(publicUrl('invoice', w.foreignInvoice.id, foreign.token))).status, 200);
  assert.is((await invoiceRow(w.estimate.id)).estimateStatus, null, 'no failed PUT answered the estimate');
});

test('a bearer token changes nothing: the same answer with a valid, a bad or another tenant\'s token', async () => {
  const url = publicUrl('invoice', w.invoice.id, invoiceToken);
  const plain = await t.http.get(url);
  for (const auth of [w.other.auth, w.acme.auth, { Authorization: 'Bearer not.a.token' }]) {
    const res = await t.http.get(url).set(auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body, plain.body);
  }
  assertNotFound(await t.http.get(publicUrl('invoice', w.foreignInvoice.id, invoiceToken)).set(w.other.auth));
});

test("a customer accepts an estimate once: estimateStatus and when; the same answer again is a 200 that changes nothing; another is a 409", async () => {
  const estimate = await invoiceOf(t, w.acme, { isEstimate: true });
  const { token } = await share(t, w.acme, estimate.id);
  const url = publicUrl('estimate', estimate.id, token);
  const accepted = await t.http.put(url).send({ status: 'ACCEPTED' });
  assert.is(accepted.status, 200, JSON.stringify(accepted.body));
  assert.equal(Object.keys(accepted.body).sort(), INVOICE_FIELDS);
  assert.is(accepted.body.estimateStatus, 'ACCEPTED');
  assert.ok(documented('PublicInvoice')(accepted.body));
  const row = await invoiceRow(estimate.id);
  assert.is(row.estimateStatus, 'ACCEPTED');
  assert.ok(row.estimateDecidedAt instanceof Date);
  assert.is(accepted.body.estimateDecidedAt, row.estimateDecidedAt.toISOString());
  assert.is(row.status, 'DRAFT', 'the invoice status is the issuer\'s, untouched');

  const again = await t.http.put(url).send({ status: 'ACCEPTED' });
  assert.is(again.status, 200);
  assert.equal(again.body, accepted.body);
  assertError(await t.http.put(url).send({ status: 'REJECTED' }), 409, 'This estimate was already accepted; its answer cannot be changed');
  assert.equal(await invoiceRow(estimate.id), row, 'the row is as the first answer left it');

  // The staff's view shows the answer, read-only.
  const read = await t.http.get(`/api/invoice/${estimate.id}`).set(w.acme.auth);
  assert.is(read.body.estimateStatus, 'ACCEPTED');
  const listed = await t.http.get('/api/invoice?where[estimateStatus]=ACCEPTED').set(w.acme.auth);
  assert.equal(listed.body.items.map((i: any) => i.id), [estimate.id]);
  // A full replace by the issuer resets its own optional fields, not the customer's answer.
  const { invoiceNumber, invoiceDate, dueDate, fromOrganizationId } = estimate;
  const replaced = await t.http.put(`/api/invoice/${estimate.id}`).set(w.acme.auth).send({ invoiceNumber, invoiceDate, dueDate, fromOrganizationId, isEstimate: true });
  assert.is(replaced.status, 200, JSON.stringify(replaced.body));
  assert.equal([replaced.body.estimateStatus, replaced.body.estimateDecidedAt], ['ACCEPTED', accepted.body.estimateDecidedAt]);
});

test('a rejection is kept the same way; a void estimate takes no answer (409)', async () => {
  const estimate = await invoiceOf(t, w.acme, { isEstimate: true });
  const { token } = await share(t, w.acme, estimate.id);
  const rejected = await t.http.put(publicUrl('estimate', estimate.id, token)).send({ status: 'REJECTED' });
  assert.is(rejected.status, 200, JSON.stringify(rejected.body));
  assert.is((await invoiceRow(estimate.id)).estimateStatus, 'REJECTED');
  assertError(await t.http.put(publicUrl('estimate', estimate.id, token)).send({ status: 'ACCEPTED' }), 409, 'This estimate was already rejected; its answer cannot be changed');

  const voided = await invoiceOf(t, w.acme, { isEstimate: true, status: 'VOID' });
  const link = await share(t, w.acme, voided.id);
  assertError(await t.http.put(publicUrl('estimate', voided.id, link.token)).send({ status: 'ACCEPTED' }), 409, 'This estimate is void: it can no longer be accepted or rejected');
  const row = await invoiceRow(voided.id);
  assert.equal([row.estimateStatus, row.estimateDecidedAt], [null, null]);
});

test('the answer is the status and nothing else: other fields, other values, no body or a query are 400s that write nothing', async () => {
  const estimate = await invoiceOf(t, w.acme, { isEstimate: true });
  const { token } = await share(t, w.acme, estimate.id);
  const url = publicUrl('estimate', estimate.id, token);
  const before = await invoiceRow(estimate.id);
  const refused: Array<[unknown, string]> = [
    [{ status: 'ACCEPTED', totalValue: 1 }, 'property totalValue should not exist'],
    [{ status: 'ACCEPTED', isEstimate: false }, 'property isEstimate should not exist'],
    [{ estimateStatus: 'ACCEPTED' }, 'property estimateStatus should not exist'],
    [{ status: 'PAID' }, 'status must be one of the following values: ACCEPTED, REJECTED'],
    [{ status: 'accepted' }, 'status must be one of the following values: ACCEPTED, REJECTED'],
    [{}, 'status should not be empty'],
  ];
  for (const [body, message] of refused) assertError(await t.http.put(url).send(body as object), 400, message);
  assertError(await t.http.put(url), 400, 'status should not be empty');
  assertError(await t.http.put(`${url}?relations[]=toContact`).send({ status: 'ACCEPTED' }), 400, 'relations is not a supported parameter of this route');
  assert.is((await t.http.put(url).set('content-type', 'text/plain').send('ACCEPTED')).status, 415);
  assertError(await t.http.put(publicUrl('estimate', 'x', token)).send({ status: 'ACCEPTED' }), 400, 'id must be a UUID');
  assert.equal(await invoiceRow(estimate.id), before);
});

test('an invoice takes no answer: PUT under /api/public/invoice is a 405, and its token under /api/public/estimate a 404', async () => {
  const before = await invoiceRow(w.invoice.id);
  const res = await t.http.put(publicUrl('invoice', w.invoice.id, invoiceToken)).send({ status: 'ACCEPTED' });
  assertError(res, 405);
  assert.is(res.headers.allow, 'GET, HEAD');
  assertNotFound(await t.http.put(publicUrl('estimate', w.invoice.id, invoiceToken)).send({ status: 'ACCEPTED' }));
  assert.equal(await invoiceRow(w.invoice.id), before);
});

test("the request log shows a link's route, never its token", async () => {
  lines.length = 0;
  const res = await t.http.get(publicUrl('estimate', w.estimate.id, estimateToken)).set('X-Request-Id', 'share-log-1');
  assert.is(res.status, 200);
  const line = lines.find((l) => l.reqId === 'share-log-1');
  assert.ok(line, JSON.stringify(lines));
  assert.is(line!.path, `/api/public/estimate/${w.estimate.id}/:token`);
  assert.not.ok(lines.some((l) => JSON.stringify(l).includes(estimateToken)), 'no line holds the token');
  // Other paths are written as they are.
  await t.http.get('/api/health').set('X-Request-Id', 'share-log-2');
  assert.is(lines.find((l) => l.reqId === 'share-log-2')?.path, '/api/health');
});

test("a near miss of a link (no route's path) leaves no token in the log either", async () => {
  lines.length = 0;
  const id = w.estimate.id;
  const nearMisses = [`${publicUrl('estimate', id, estimateToken)}/more`, `/api/public/Estimate/${id}/${estimateToken}`, `/api/public/estimate//${id}/${estimateToken}`];
  for (const [i, url] of nearMisses.entries()) {
    // Not a route: a 401 without a token (docs/authentication.md), a 404 with one.
    assert.is((await t.http.get(url).set('X-Request-Id', `share-near-${i}`)).status, 401, url);
    assert.is((await t.http.delete(url).set(w.acme.auth)).status, 404, url);
  }
  assert.ok(lines.some((l) => l.reqId === 'share-near-0'), JSON.stringify(lines));
  assert.not.ok(lines.some((l) => JSON.stringify(l).includes(estimateToken)), JSON.stringify(lines.map((l) => l.path)));
});

test('the document: public operations without security, relations[] as the enum, the answers named', () => {
  const doc = t.openapi as any;
  for (const [path, methods] of [['/api/public/invoice/{id}/{token}', ['get']], ['/api/public/estimate/{id}/{token}', ['get', 'put']]] as const) {
    for (const method of methods) {
      const op = doc.paths[path][method];
      assert.equal(op.security, [], `${method} ${path}`);
      assert.ok(op.responses['404'] && op.responses['400'] && op.responses['429'], `${method} ${path}`);
    }
    const relations = doc.paths[path].get.parameters.find((p: any) => p.name === 'relations[]');
    assert.equal(relations.schema.items.enum, [...PUBLIC_RELATIONS]);
  }
  assert.equal(doc.components.schemas.EstimateDecision.properties.status.enum, ['ACCEPTED', 'REJECTED']);
  assert.is(doc.components.schemas.PublicInvoice.additionalProperties, false);
  assert.equal(Object.keys(doc.components.schemas.PublicEmployee.properties), ['id', 'firstName', 'lastName']);
  assert.match(doc.paths['/api/public/invoice/{id}/{token}'].get.description, /the `anonymous` tier, 100 per 60 s, per client address whatever token/);
  assert.ok(doc.paths['/api/invoice/{id}/share-link'].post.responses['403'], 'the link routes take a token');
});

test.run();
