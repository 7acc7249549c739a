// A tenant named beside the token: a `tenantId` query
// parameter, like the `Tenant-Id` header, naming another tenant is a 403 on every route that takes
// a token (generated, hand-written, auth); the caller's own tenant id is accepted and ignored,
// never a 400 "not a supported parameter".
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden } from '../helpers/error-envelope.js';
import { operationsOf } from '../helpers/openapi.js';

let t: TestApp;
type Tenant = Session & { organizationId: string };
let admin: Tenant;
let other: Tenant;
let employeeId: string;
let tagId: string;

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t, 'Own');
  other = await newTenant(t, 'Other');
  const employee = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Ada', lastName: 'Own', userId: admin.userId });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  employeeId = employee.body.id;
  const tag = await t.http.post('/api/tags').set(admin.auth).send({ name: 'Urgent', color: 'red' });
  assert.is(tag.status, 201, JSON.stringify(tag.body));
  tagId = tag.body.id;
});
test.after(async () => {
  await t?.close();
});

const takesToken = (op: Record<string, any>) => op.security === undefined || op.security.some((s: object) => 'bearer' in s);

test("every documented operation that takes a token: ?tenantId of another tenant is a 403, documented as such", async () => {
  const doc = t.openapi as Record<string, any>;
  const parameter = doc.components.parameters.TenantIdQuery;
  assert.equal({ ...parameter, description: undefined }, { name: 'tenantId', in: 'query', required: false, description: undefined, schema: { type: 'string', format: 'uuid' }, 'x-every-operation': true });
  let checked = 0;
  for (const { path, method, op } of operationsOf(doc)) {
    if (!takesToken(op)) continue;
    assert.ok(op.parameters.some((p: { $ref?: string }) => p.$ref === '#/components/parameters/TenantIdQuery'), `${method} ${path} documents tenantId`);
    assert.ok(op.responses['403'], `${method} ${path} documents its 403`);
    const url = `${path.replace(/\{[^}]+\}/g, randomUUID())}?tenantId=${other.tenantId}`;
    const req = (t.http as any)[method](url).set(admin.auth);
    assertForbidden(method === 'get' || method === 'delete' ? await req : await req.send({}));
    checked += 1;
  }
  assert.ok(checked > 100, `${checked} operations`);
});

test('a refused tenantId writes nothing', async () => {
  const count = async () => Number((await t.db('tag').where({ tenantId: admin.tenantId }).count({ n: '*' }))[0].n);
  const before = await count();
  assertForbidden(await t.http.post(`/api/tags?tenantId=${other.tenantId}`).set(admin.auth).send({ name: 'Sneaky', color: 'blue' }));
  assertForbidden(await t.http.patch(`/api/tags/${tagId}?tenantId=${other.tenantId}`).set(admin.auth).send({ name: 'Renamed' }));
  assertForbidden(await t.http.delete(`/api/tags/${tagId}?tenantId=${other.tenantId}`).set(admin.auth));
  assert.is(await count(), before);
  assert.is((await t.db('tag').where({ id: tagId }).first()).name, 'Urgent');
});

test("every spelling of the parameter is checked; any value but the caller's tenant id is a 403", async () => {
  const own = admin.tenantId;
  const foreign = [
    `tenantId=${other.tenantId}`,
    `tenantId[]=${other.tenantId}`,
    `tenantId[0]=${other.tenantId}`,
    `[tenantId]=${other.tenantId}`,
    `tenant%49d=${other.tenantId}`,
    `tenantId=${own}&tenantId=${other.tenantId}`,
    `tenantId[]=${own}&tenantId[]=${other.tenantId}`,
    'tenantId=not-a-uuid',
    'tenantId=',
    `tenantId=${own}x`,
  ];
  for (const query of foreign) {
    assertForbidden(await t.http.get(`/api/employee?${query}`).set(admin.auth));
    assertForbidden(await t.http.get(`/api/employee/${employeeId}?${query}`).set(admin.auth));
  }
  // Without a token there is no tenant to compare with: the token's absence is what is answered.
  assertError(await t.http.get(`/api/employee?tenantId=${other.tenantId}`), 401, 'Unauthorized');
});

test("the caller's own tenant id (any case, any spelling) is accepted and ignored on every kind of route", async () => {
  const own = admin.tenantId.toUpperCase();
  const routes = [
    '/api/employee',
    '/api/employee/count',
    '/api/employee/pagination',
    `/api/employee/${employeeId}`,
    `/api/employee/${employeeId}?relations[]=user`,
    `/api/employee/${employeeId}/statistics`,
    '/api/tags/getByName?name=Urgent',
    '/api/tags/getByName/Urgent',
    '/api/event-type',
    '/api/report',
    '/api/report/time-log-daily?startDate=2026-01-01&endDate=2026-01-07',
    '/api/export/tag?format=json',
    '/api/user/me',
    '/api/auth/check',
    '/api/auth/authenticated',
  ];
  for (const route of routes) {
    const plain = await t.http.get(route).set(admin.auth);
    assert.is(plain.status, 200, `${route}: ${JSON.stringify(plain.body)}`);
    const join = route.includes('?') ? '&' : '?';
    for (const spelling of [`tenantId=${own}`, `tenantId=${admin.tenantId}&tenantId=${own}`, `tenantId[]=${own}`]) {
      const named = await t.http.get(`${route}${join}${spelling}`).set(admin.auth);
      assert.is(named.status, 200, `${route} ${spelling}: ${JSON.stringify(named.body)}`);
      if (!route.startsWith('/api/auth/check')) assert.equal(named.body, plain.body, `${route} ${spelling}`);
    }
  }
  // With the header too, and in a search body.
  const both = await t.http.get(`/api/tags?tenantId=${own}`).set(admin.auth).set('Tenant-Id', own);
  assert.is(both.status, 200);
  assert.is(both.body.total, 1);
  const search = await t.http.post('/api/tags/search').set(admin.auth).send({ tenantId: own, where: { name: 'Urgent' } });
  assert.is(search.status, 200, JSON.stringify(search.body));
  assert.is(search.body.total, 1);
  // Writes: the parameter changes nothing of what is written.
  const created = await t.http.post(`/api/tags?tenantId=${own}`).set(admin.auth).send({ name: 'Later', color: 'green' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.is(created.body.tenantId, admin.tenantId);
});

test("a search body's tenantId naming another tenant (or no tenant) is a 403", async () => {
  for (const tenantId of [other.tenantId, 'nobody', 7, null]) {
    assertForbidden(await t.http.post('/api/tags/search').set(admin.auth).send({ tenantId }));
    assertForbidden(await t.http.post('/api/tags/search').set(admin.auth).send({ findInput: { tenantId } }));
  }
});

test.run();
