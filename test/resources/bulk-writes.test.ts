// Bulk writes (POST, PATCH and DELETE /api/{r}/bulk): all or nothing, answers in request order,
// every bad item named by its index, the tenant and owner rules per item, unique rules found
// while writing, parents touched by their children, Idempotency-Key on the bulk create, the
// organization header, If-Match refused, GET a 405; and the rate limits counting each item.
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESOURCES_DIR } from '../../app/paths.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden } from '../helpers/error-envelope.js';

type Admin = Session & { organizationId: string };

const fixtureDir = fileURLToPath(new URL('../fixtures/ledger', import.meta.url));
const fixtureMigrations = fileURLToPath(new URL('../fixtures/ledger/migrations', import.meta.url));

let t: TestApp;
let admin: Admin;
let other: Admin;
let seq = 0;
const unique = (prefix: string) => `${prefix}-${++seq}-${Date.now().toString(36)}`;

const tagCount = async (tenantId: string, names: string[]) => Number((await t.db('tag').where({ tenantId }).whereIn('name', names).count({ n: '*' }))[0].n);
const tagsOf = (names: string[]) => names.map((name) => ({ name, color: '#123456' }));
const bulk = (method: 'post' | 'patch' | 'delete', path: string, session: Session, body: unknown) => t.http[method](`/api/${path}/bulk`).set(session.auth).send(body as object);

async function newTags(session: Session, count: number): Promise<Array<{ id: string; name: string }>> {
  const res = await bulk('post', 'tags', session, tagsOf(Array.from({ length: count }, () => unique('tag'))));
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body.items;
}

test('set up', async () => {
  t = await createTestApp({ resourceDirs: [RESOURCES_DIR, fixtureDir], migrationDirs: [fixtureMigrations] });
  admin = await newTenant(t);
  other = await newTenant(t, 'Other');
});

test('POST bulk creates every item and answers them in order, each as a create would', async () => {
  const names = [unique('a'), unique('b'), unique('c')];
  const res = await bulk('post', 'tags', admin, [...tagsOf(names), { name: unique('d'), color: '#00ff00', tagIds: undefined }].slice(0, 3));
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body.items.map((i: any) => i.name), names);
  for (const item of res.body.items) {
    assert.is(item.tenantId, admin.tenantId);
    assert.is(item.organizationId, admin.organizationId, "the tenant's only organization, as a create chooses it");
    assert.ok(item.id && item.createdAt);
  }
  const single = await t.http.get(`/api/tags/${res.body.items[0].id}`).set(admin.auth);
  assert.equal(Object.keys(res.body.items[0]).sort(), Object.keys(single.body).sort(), 'the same fields as a read');
  assert.is(await tagCount(admin.tenantId, names), 3);
  // The alias takes bulk writes too.
  const viaAlias = await bulk('post', 'tag', admin, tagsOf([unique('alias')]));
  assert.is(viaAlias.status, 201);
});

test('POST bulk: every bad item is listed by index and nothing is written', async () => {
  const good = unique('good');
  const res = await bulk('post', 'tags', admin, [{ name: good, color: '#123456' }, { color: '#123456' }, { name: unique('x'), color: '#123456', salary: 1 }, 'nope']);
  assertError(res, 400);
  const indexes = res.body.errors.map((e: any) => e.index);
  assert.equal([...new Set(indexes)], [1, 2, 3], JSON.stringify(res.body.errors));
  assert.ok(res.body.errors.some((e: any) => e.index === 1 && /name/.test(e.message)));
  assert.ok(res.body.errors.some((e: any) => e.index === 2 && /salary should not exist/.test(e.message)));
  assert.ok(res.body.message.some((m: string) => m.startsWith('[1] ')), 'the envelope lists the same, by index');
  assert.is(await tagCount(admin.tenantId, [good]), 0, 'nothing written');
});

test('POST bulk: not an array, empty, too many are 400s', async () => {
  assertError(await bulk('post', 'tags', admin, { name: 'x' }), 400, /must be an array/);
  assertError(await bulk('post', 'tags', admin, []), 400, /at least one item/);
  const many = await bulk('post', 'tags', admin, tagsOf(Array.from({ length: 1001 }, (_, i) => `many-${i}`)));
  assertError(many, 400);
  assert.is(await tagCount(admin.tenantId, ['many-0']), 0);
});

test('BULK_MAX_ITEMS bounds a bulk write', async () => {
  const small = await createTestApp({ env: { BULK_MAX_ITEMS: '2' } });
  try {
    const owner = await newTenant(small);
    const res = await small.http.post('/api/tags/bulk').set(owner.auth).send(tagsOf(['m1', 'm2', 'm3']));
    assertError(res, 400, /at most 2 items \(it holds 3\)/);
    assert.is((await small.http.post('/api/tags/bulk').set(owner.auth).send(tagsOf(['m1', 'm2']))).status, 201);
    assert.is((small.openapi as any).paths['/api/tags/bulk'].post.requestBody.content['application/json'].schema.maxItems, 2);
  } finally {
    await small.close();
  }
});

test('POST bulk: a unique rule broken at item k (with the database or between items) writes nothing and names k', async () => {
  const [existing] = await newTags(admin, 1);
  const fresh = [unique('u1'), unique('u2')];
  const res = await bulk('post', 'tags', admin, [...tagsOf(fresh), { name: existing.name, color: '#123456' }]);
  assertError(res, 409, /already exists/);
  assert.equal(res.body.errors.map((e: any) => e.index), [2]);
  assert.is(await tagCount(admin.tenantId, fresh), 0);
  const twice = unique('twice');
  const inRequest = await bulk('post', 'tags', admin, tagsOf([unique('ok'), twice, twice]));
  assertError(inRequest, 409);
  assert.equal(inRequest.body.errors.map((e: any) => e.index), [2]);
  assert.is(await tagCount(admin.tenantId, [twice]), 0);
});

test('POST bulk: children are written with each parent; a bad child names its item', async () => {
  const body = (n: number, quantity = 1) => ({
    invoiceNumber: n,
    invoiceDate: '2026-01-05',
    dueDate: '2026-02-05',
    fromOrganizationId: admin.organizationId,
    invoiceItems: [{ quantity, price: 10 }],
  });
  const base = 7000 + Math.floor(Math.random() * 1000);
  const res = await bulk('post', 'invoice', admin, [body(base), body(base + 1)]);
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.items[1].invoiceItems.length, 1);
  assert.is(res.body.items[1].invoiceItems[0].invoiceId, res.body.items[1].id);
  const bad = await bulk('post', 'invoice', admin, [body(base + 2), body(base + 3, 0)]);
  assertError(bad, 400);
  assert.equal(bad.body.errors.map((e: any) => e.index), [1]);
  assert.match(bad.body.errors[0].message, /invoiceItems\.0\.quantity/);
  assert.is(Number((await t.db('invoice').where({ tenantId: admin.tenantId }).whereIn('invoiceNumber', [base + 2, base + 3]).count({ n: '*' }))[0].n), 0);
});

test('POST bulk honours Idempotency-Key: a retry replays the answer and writes nothing', async () => {
  const names = [unique('i1'), unique('i2')];
  const key = unique('key');
  const first = await bulk('post', 'tags', admin, tagsOf(names)).set('Idempotency-Key', key);
  assert.is(first.status, 201);
  const again = await bulk('post', 'tags', admin, tagsOf(names)).set('Idempotency-Key', key);
  assert.is(again.status, 201);
  assert.is(again.headers['idempotent-replayed'], 'true');
  assert.equal(again.body, first.body);
  assert.is(await tagCount(admin.tenantId, names), 2);
  assertError(await bulk('post', 'tags', admin, tagsOf([unique('other')])).set('Idempotency-Key', key), 422);
});

test('PATCH bulk changes every record, answers them in order; bad items, duplicates, foreign ids fail the whole request', async () => {
  const tags = await newTags(admin, 3);
  const res = await bulk('patch', 'tags', admin, [{ id: tags[2].id, color: '#000002' }, { id: tags[0].id.toUpperCase(), color: '#000000' }]);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.items.map((i: any) => [i.id, i.color]), [[tags[2].id, '#000002'], [tags[0].id, '#000000']]);
  const colour = async (id: string) => (await t.db('tag').where({ id }).first()).color;
  assert.is(await colour(tags[2].id), '#000002');

  const bad = await bulk('patch', 'tags', admin, [{ id: tags[0].id, color: '#111111' }, { id: tags[1].id, color: 5 }, { color: '#111111' }]);
  assertError(bad, 400);
  assert.equal([...new Set(bad.body.errors.map((e: any) => e.index))], [2], 'the id is checked first');
  const badField = await bulk('patch', 'tags', admin, [{ id: tags[0].id, color: '#111111' }, { id: tags[1].id, color: 5 }]);
  assertError(badField, 400);
  assert.equal(badField.body.errors.map((e: any) => e.index), [1]);
  assert.is(await colour(tags[0].id), '#000000', 'nothing written');

  const dup = await bulk('patch', 'tags', admin, [{ id: tags[0].id, color: '#111111' }, { id: tags[0].id, color: '#222222' }]);
  assertError(dup, 400, /name each record once/);
  assert.equal(dup.body.errors.map((e: any) => e.index), [1]);

  const [theirs] = await newTags(other, 1);
  const foreign = await bulk('patch', 'tags', admin, [{ id: tags[0].id, color: '#333333' }, { id: theirs.id, color: '#333333' }, { id: '00000000-0000-4000-8000-000000000001', color: '#333333' }]);
  assertError(foreign, 404, 'The requested record was not found');
  assert.equal(foreign.body.errors.map((e: any) => e.index), [1, 2]);
  assert.is(await colour(tags[0].id), '#000000');
  assert.is(await colour(theirs.id), '#123456');

  const taken = await bulk('patch', 'tags', admin, [{ id: tags[0].id, color: '#444444' }, { id: tags[1].id, name: tags[2].name }]);
  assertError(taken, 409, /already exists/);
  assert.equal(taken.body.errors.map((e: any) => e.index), [1]);
  assert.is(await colour(tags[0].id), '#000000', 'rolled back');
  assertError(await bulk('patch', 'tags', admin, []), 400);
  assertError(await bulk('patch', 'tags', admin, { id: tags[0].id }), 400, /must be an array/);
});

test('DELETE bulk deletes every record or none', async () => {
  const tags = await newTags(admin, 3);
  const [theirs] = await newTags(other, 1);
  const exists = async (id: string) => Boolean(await t.db('tag').where({ id }).first());
  const foreign = await t.http.delete('/api/tags/bulk').set(admin.auth).send({ ids: [tags[0].id, theirs.id] });
  assertError(foreign, 404);
  assert.equal(foreign.body.errors.map((e: any) => e.index), [1]);
  assert.ok(await exists(tags[0].id), 'nothing deleted');
  assert.ok(await exists(theirs.id));
  assertError(await t.http.delete('/api/tags/bulk').set(admin.auth).send({ ids: [tags[0].id, tags[0].id] }), 400, /once/);
  assertError(await t.http.delete('/api/tags/bulk').set(admin.auth).send({ ids: [] }), 400, /at least one/);
  assertError(await t.http.delete('/api/tags/bulk').set(admin.auth).send({ ids: ['nope'] }), 400, /UUID/);
  assertError(await t.http.delete('/api/tags/bulk').set(admin.auth).send({ ids: [tags[0].id], all: true }), 400, /all should not exist/);
  assertError(await t.http.delete('/api/tags/bulk').set(admin.auth), 400);
  assertError(await t.http.delete('/api/tags/bulk').set(admin.auth).set('Content-Type', 'text/plain').send('x'), 415);
  const res = await t.http.delete('/api/tags/bulk').set(admin.auth).send({ ids: tags.map((tag) => tag.id) });
  assert.is(res.status, 204);
  for (const tag of tags) assert.not.ok(await exists(tag.id));
  // A single DELETE still ignores a body.
  const [one] = await newTags(admin, 1);
  assert.is((await t.http.delete(`/api/tags/${one.id}`).set(admin.auth).set('Content-Type', 'text/plain').send('x')).status, 204);
});

test('DELETE bulk: a record still referenced fails the whole request naming it', async () => {
  const contacts = await bulk('post', 'organization-contact', admin, [{ name: unique('free') }, { name: unique('held') }]);
  assert.is(contacts.status, 201, JSON.stringify(contacts.body));
  const [free, held] = contacts.body.items;
  const project = await t.http.post('/api/organization-project').set(admin.auth).send({ name: unique('p'), organizationContactId: held.id });
  assert.is(project.status, 201, JSON.stringify(project.body));
  const res = await t.http.delete('/api/organization-contact/bulk').set(admin.auth).send({ ids: [free.id, held.id] });
  assertError(res, 400);
  assert.equal(res.body.errors.map((e: any) => e.index), [1]);
  assert.ok(await t.db('organization_contact').where({ id: free.id }).first(), 'nothing deleted');
});

test('the owner rule: an EMPLOYEE changes only its own records; another employee\'s id is a 404 for the whole request', async () => {
  const mine = await userWithRole(t, admin, 'EMPLOYEE', true);
  const theirs = await userWithRole(t, admin, 'EMPLOYEE', true);
  const plan = (session: Session) => ({ date: '2026-03-02', workTimePlanned: 4, status: 'open' });
  const own = await bulk('post', 'daily-plan', mine, [plan(mine), plan(mine)]);
  assert.is(own.status, 201, JSON.stringify(own.body));
  for (const item of own.body.items) assert.is(item.employeeId, mine.employeeId, 'the owner field defaults to its own');
  const forOther = await bulk('post', 'daily-plan', mine, [plan(mine), { ...plan(mine), employeeId: theirs.employeeId }]);
  assertForbidden(forOther);
  assert.equal(forOther.body.errors.map((e: any) => e.index), [1]);
  const others = await bulk('post', 'daily-plan', theirs, [plan(theirs)]);
  const theirId = others.body.items[0].id;
  const patch = await bulk('patch', 'daily-plan', mine, [{ id: own.body.items[0].id, workTimePlanned: 6 }, { id: theirId, workTimePlanned: 6 }]);
  assertError(patch, 404);
  assert.equal(patch.body.errors.map((e: any) => e.index), [1]);
  assert.is(Number((await t.db('daily_plan').where({ id: own.body.items[0].id }).first()).workTimePlanned), 4);
  assertError(await t.http.delete('/api/daily-plan/bulk').set(mine.auth).send({ ids: [theirId] }), 404);
  assert.is((await t.http.delete('/api/daily-plan/bulk').set(mine.auth).send({ ids: own.body.items.map((i: any) => i.id) })).status, 204);
  assert.ok(await t.db('daily_plan').where({ id: theirId }).first());
});

test('a child written in bulk touches its parent: the parent\'s ETag moves', async () => {
  const invoice = await t.http.post('/api/invoice').set(admin.auth).send({ invoiceNumber: 9000 + Math.floor(Math.random() * 900), invoiceDate: '2026-01-05', dueDate: '2026-02-05', fromOrganizationId: admin.organizationId });
  assert.is(invoice.status, 201, JSON.stringify(invoice.body));
  const etag = async () => (await t.http.get(`/api/invoice/${invoice.body.id}`).set(admin.auth)).headers.etag;
  const before = await etag();
  const items = await bulk('post', 'invoice-item', admin, [{ invoiceId: invoice.body.id, quantity: 1, price: 1 }, { invoiceId: invoice.body.id, quantity: 2, price: 1 }]);
  assert.is(items.status, 201, JSON.stringify(items.body));
  const afterCreate = await etag();
  assert.is.not(afterCreate, before);
  assert.is((await bulk('patch', 'invoice-item', admin, [{ id: items.body.items[0].id, quantity: 3 }])).status, 200);
  const afterPatch = await etag();
  assert.is.not(afterPatch, afterCreate);
  assert.is((await t.http.delete('/api/invoice-item/bulk').set(admin.auth).send({ ids: items.body.items.map((i: any) => i.id) })).status, 204);
  assert.is.not(await etag(), afterPatch);
});

test('If-Match: refused on bulk changes (400), and a resource that requires it takes none in bulk (428)', async () => {
  const [tag] = await newTags(admin, 1);
  assertError(await bulk('patch', 'tags', admin, [{ id: tag.id, color: '#555555' }]).set('If-Match', '*'), 400, /If-Match/);
  assertError(await t.http.delete('/api/tags/bulk').set(admin.auth).set('If-Match', '*').send({ ids: [tag.id] }), 400, /If-Match/);
  const entries = await bulk('post', 'ledger-entry', admin, [{ memo: 'one' }, { memo: 'two' }]);
  assert.is(entries.status, 201, 'creates need no If-Match');
  assertError(await bulk('patch', 'ledger-entry', admin, [{ id: entries.body.items[0].id, memo: 'x' }]), 428, /one by one/);
  assertError(await t.http.delete('/api/ledger-entry/bulk').set(admin.auth).send({ ids: [entries.body.items[0].id] }), 428);
});

test('/bulk is a fixed path: GET is a 405 naming its methods, never a read of the id "bulk"; permissions apply', async () => {
  const res = await t.http.get('/api/tags/bulk').set(admin.auth);
  assertError(res, 405);
  assert.is(res.headers.allow, 'POST, PATCH, DELETE');
  assertError(await t.http.put('/api/tags/bulk').set(admin.auth).send({}), 405);
  const viewer = await userWithRole(t, admin, 'VIEWER');
  assertForbidden(await bulk('post', 'tags', viewer, tagsOf([unique('v')])));
  assertError(await t.http.post('/api/tags/bulk').send(tagsOf(['x'])), 401);
});

test('POST bulk: the Organization-Id header applies to every item; another tenant\'s tenantId is a 403 naming the item', async () => {
  const second = await t.http.post('/api/organization').set(admin.auth).send({ name: unique('Second'), currency: 'EUR' });
  const names = [unique('h1'), unique('h2')];
  const res = await bulk('post', 'tags', admin, tagsOf(names)).set('Organization-Id', second.body.id);
  assert.is(res.status, 201, JSON.stringify(res.body));
  for (const item of res.body.items) assert.is(item.organizationId, second.body.id);
  assertError(await t.http.post('/api/tags/bulk').set(admin.auth).set('Organization-Id', 'nope').send(tagsOf([unique('h')])), 400, /Organization-Id/);
  const foreign = await bulk('post', 'tags', admin, [{ name: unique('f'), color: '#123456' }, { name: unique('f'), color: '#123456', tenantId: other.tenantId }]);
  assertForbidden(foreign);
  assert.equal(foreign.body.errors, [{ index: 1, message: 'Forbidden resource' }]);
});

test('the document declares the bulk operations, their bodies and answers', () => {
  const doc = t.openapi as any;
  const item = doc.paths['/api/tags/bulk'];
  assert.equal(Object.keys(item).filter((k) => ['get', 'post', 'patch', 'delete'].includes(k)), ['post', 'patch', 'delete']);
  assert.is(item.post.requestBody.content['application/json'].schema.type, 'array');
  assert.ok(item.post.responses['201'] && item.post.responses['400'] && item.post.responses['409'] && item.post.responses['429']);
  assert.ok(item.post.parameters.some((p: any) => p.name === 'Idempotency-Key'));
  assert.ok(item.patch.responses['404'] && item.delete.responses['204']);
  assert.ok(doc.paths['/api/ledger-entry/bulk'].patch.responses['428']);
  assert.equal(item['x-aliases'], ['/api/tag/bulk'], 'the alias answers as this path item, not in paths again');
  assert.is(doc.paths['/api/tag/bulk'], undefined);
});

test('tear down', async () => {
  await t.close();
});

test.run();
