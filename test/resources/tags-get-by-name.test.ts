// GET /api/tags/getByName/{name} and ?name=: the caller's tenant's tag by its exact name, 404 or
// 400 otherwise, each answer with the deprecation headers (Deprecation: true, a Link to its
// successor, the list filtered by name), and documented as deprecated in the OpenAPI document.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, userWithRole } from '../helpers/accounts.js';
import { assertError, assertNotFound, assertUnauthorized } from '../helpers/error-envelope.js';

type Tenant = Awaited<ReturnType<typeof newTenant>>;

let t: TestApp;
let acme: Tenant;
let other: Tenant;
let urgent: Record<string, any>;
let spaced: Record<string, any>;

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const created = async (session: Tenant, name: string) => {
    const res = await t.http.post('/api/tags').set(session.auth).send({ name, color: '#ff0000' });
    assert.is(res.status, 201, JSON.stringify(res.body));
    return res.body;
  };
  urgent = await created(acme, 'Urgent');
  spaced = await created(acme, 'Needs review / QA & more');
  await created(other, 'Theirs');
  await created(other, 'Urgent');
});
test.after(async () => {
  await t.close();
});

function assertDeprecated(res: { headers: Record<string, any> }, successor: string) {
  assert.is(res.headers.deprecation, 'true');
  assert.is(res.headers.link, `<${successor}>; rel="successor-version"`);
}

test('the name in the path: the tag of the caller\'s tenant, with the deprecation headers', async () => {
  const res = await t.http.get('/api/tags/getByName/Urgent').set(acme.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, urgent);
  assertDeprecated(res, '/api/tags?where[name]=Urgent');
});

test('the name in ?name=: the same answer, and the successor link lists the same tag', async () => {
  const res = await t.http.get('/api/tags/getByName?name=Urgent').set(acme.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, urgent);
  assertDeprecated(res, '/api/tags?where[name]=Urgent');
  const successor = await t.http.get('/api/tags?where[name]=Urgent').set(acme.auth);
  assert.equal(successor.body.items, [urgent]);
});

test('a name with spaces, slashes and ampersands is found both ways; the link encodes it', async () => {
  const encoded = encodeURIComponent(spaced.name);
  for (const path of [`/api/tags/getByName/${encoded}`, `/api/tags/getByName?name=${encoded}`]) {
    const res = await t.http.get(path).set(acme.auth);
    assert.is(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
    assert.is(res.body.id, spaced.id);
    assertDeprecated(res, `/api/tags?where[name]=${encoded}`);
    const successor = await t.http.get(`/api/tags?where[name]=${encoded}`).set(acme.auth);
    assert.equal(successor.body.items.map((tag: { id: string }) => tag.id), [spaced.id], 'the link finds the same tag');
  }
});

test('the match is exact: another case, a prefix or another tenant\'s tag is a 404, still deprecated', async () => {
  for (const name of ['urgent', 'Urg', 'Theirs']) {
    const res = await t.http.get(`/api/tags/getByName/${name}`).set(acme.auth);
    assertNotFound(res);
    assertDeprecated(res, `/api/tags?where[name]=${name}`);
    assertNotFound(await t.http.get(`/api/tags/getByName?name=${name}`).set(acme.auth));
  }
  const theirs = await t.http.get('/api/tags/getByName/Urgent').set(other.auth);
  assert.is(theirs.status, 200);
  assert.is.not(theirs.body.id, urgent.id, 'each tenant gets its own tag of that name');
  assert.is(theirs.body.tenantId, other.tenantId);
});

test('no name, an empty one, two of them or another parameter is a 400', async () => {
  for (const query of ['', '?name=', '?other=1']) {
    const res = await t.http.get(`/api/tags/getByName${query}`).set(acme.auth);
    assertError(res, 400, 'name should not be empty');
    assert.is(res.headers.deprecation, 'true');
  }
  assertError(await t.http.get('/api/tags/getByName?name=a&name=b').set(acme.auth), 400, 'name must be a string');
  assertError(await t.http.get('/api/tags/getByName?name=Urgent&relations[]=x').set(acme.auth), 400, /^relations\[\] is not a supported parameter/);
  assertError(await t.http.get('/api/tags/getByName/Urgent?name=Urgent').set(acme.auth), 400, /^name is not a supported parameter/);
});

test('any signed-in user of the tenant may ask; without a token it is a 401', async () => {
  const employee = await userWithRole(t, acme, 'EMPLOYEE');
  const res = await t.http.get('/api/tags/getByName/Urgent').set(employee.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.id, urgent.id);
  assertUnauthorized(await t.http.get('/api/tags/getByName/Urgent'));
});

test('the generated routes of /api/tags still answer around it', async () => {
  const read = await t.http.get(`/api/tags/${urgent.id}`).set(acme.auth);
  assert.is(read.status, 200);
  assert.is(read.headers.deprecation, undefined, 'only the deprecated route says so');
  assertError(await t.http.get('/api/tags/not-a-uuid').set(acme.auth), 400, 'id must be a UUID');
});

test('OpenAPI: both spellings documented as deprecated, with their headers and the successor named', async () => {
  const doc = t.openapi as Record<string, any>;
  for (const [path, where] of [['/api/tags/getByName', 'query'], ['/api/tags/getByName/{name}', 'path']]) {
    const op = doc.paths[path]?.get;
    assert.ok(op, `${path} is documented`);
    assert.is(op.deprecated, true);
    assert.ok(op.description.includes('/api/tags?where[name]='), op.description);
    assert.ok(op.parameters.some((p: any) => p.name === 'name' && p.in === where && p.required === true));
    assert.equal(Object.keys(op.responses['200'].headers).sort().filter((h: string) => ['Deprecation', 'Link'].includes(h)), ['Deprecation', 'Link']);
    assert.equal(op.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Tag' });
    assert.ok(op.responses['404'] && op.responses['400']);
  }
});

test.run();
