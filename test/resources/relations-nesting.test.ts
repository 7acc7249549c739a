// A hasMany relation is allowed only as the first segment of a relations[] path. First, its
// parents are the page, so what it loads is bounded by take; after another segment it is not:
// employee?take=10&relations[]=organization.employees would load every employee of the
// organization under each of the ten rows. What follows a first hasMany stays allowed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { badRequestBody, insertEmployees, sorted, type EmployeeRow } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
/** Acme's second organization ("Beta"; the first is "Acme"), so a page of one organization can be told apart. */
let beta: string;
let acmeStaff: EmployeeRow[];
let betaStaff: EmployeeRow[];

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const org = await t.http.post('/api/organization').set(acme.auth).send({ name: 'Beta', currency: 'USD' });
  assert.is(org.status, 201, JSON.stringify(org.body));
  beta = org.body.id;
  acmeStaff = await insertEmployees(t, acme, [{ firstName: 'Ann' }, { firstName: 'Bob' }, { firstName: 'Cid' }]);
  betaStaff = await insertEmployees(t, { tenantId: acme.tenantId, organizationId: beta }, [{ firstName: 'Dee' }, { firstName: 'Eve' }]);
  await insertEmployees(t, other, [{ firstName: 'Zed' }]);
});
test.after(async () => {
  await t?.close();
});

const NESTED_HAS_MANY = ['organization.employees', 'organization.employees.user', 'organization.employees.tags'];

/** The part of the refusal that holds whatever the list of names after the prefix says. */
const refusedAfter = (path: string, prefix: string) => `relations: '${path}' is not allowed; allowed after '${prefix}': `;

function assertRefused(res: { status: number; body: any }, path: string, prefix: string) {
  assert.is(res.status, 400, `${path}: ${JSON.stringify(res.body)}`);
  assert.is(res.body.statusCode, 400);
  assert.is(res.body.error, 'Bad Request');
  assert.is(res.body.message.length, 1, JSON.stringify(res.body));
  assert.ok(res.body.message[0].startsWith(refusedAfter(path, prefix)), JSON.stringify(res.body));
}

test('a hasMany after another segment is a 400 on list, read one and search', async () => {
  const [ann] = acmeStaff;
  for (const path of NESTED_HAS_MANY) {
    assertRefused(await t.http.get(`/api/employee?take=10&relations[]=${path}`).set(acme.auth), path, 'organization');
    assertRefused(await t.http.get(`/api/employee/${ann.id}?relations[]=${path}`).set(acme.auth), path, 'organization');
    assertRefused(await t.http.post('/api/employee/search').set(acme.auth).send({ take: 10, relations: [path] }), path, 'organization');
    assertRefused(await t.http.post('/api/employee/search').set(acme.auth).send({ findInput: { relations: [path] } }), path, 'organization');
  }
  // The same below a first hasMany: organization → employees → organization → employees.
  const deep = 'employees.organization.employees';
  assertRefused(await t.http.get(`/api/organization?relations[]=${deep}`).set(acme.auth), deep, 'employees.organization');
  // One refused path refuses the request, the allowed ones beside it included.
  const mixed = await t.http.get('/api/employee?relations[]=user&relations[]=organization.employees').set(acme.auth);
  assert.is(mixed.status, 400);
  assert.is(mixed.body.message.length, 1, JSON.stringify(mixed.body));
});

test('what leads to the refused paths still loads: organization and its belongsTo/manyToMany relations', async () => {
  const res = await t.http.get('/api/employee?take=50&relations[]=organization.tags&order[firstName]=ASC').set(acme.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.items.map((e: any) => e.firstName), ['Ann', 'Bob', 'Cid', 'Dee', 'Eve']);
  for (const item of res.body.items) {
    assert.is(item.organization.id, item.organizationId);
    assert.equal(item.organization.tags, []);
    assert.not.ok('employees' in item.organization, 'an organization under an employee never carries its employees');
  }
});

test('a first-segment hasMany loads the children of the page\'s rows only, with nested relations after it', async () => {
  const page = async (skip: number) => {
    const res = await t.http.get(`/api/organization?take=1&skip=${skip}&order[name]=ASC&relations[]=employees.user&relations[]=employees.organization`).set(acme.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.is(res.body.total, 2);
    assert.is(res.body.items.length, 1);
    return res.body.items[0];
  };
  const first = await page(0);
  const second = await page(1);
  assert.is(first.name, 'Acme');
  assert.is(second.name, 'Beta');
  for (const [org, staff] of [[first, acmeStaff], [second, betaStaff]] as const) {
    const stored = await t.db('employee').where({ tenantId: acme.tenantId, organizationId: org.id }).select('id', 'userId');
    assert.equal(sorted(org.employees.map((e: any) => e.id)), sorted(stored.map((e: { id: string }) => e.id)), 'every employee of that organization');
    assert.equal(sorted(org.employees.map((e: any) => e.id)), sorted(staff.map((e) => e.id)), 'and none of the other one');
    for (const employee of org.employees) {
      assert.is(employee.organizationId, org.id);
      assert.is(employee.organization.id, org.id);
      assert.is(employee.user.id, stored.find((e: { id: string }) => e.id === employee.id).userId);
      assert.is(employee.user.tenantId, acme.tenantId);
      assert.not.ok('hash' in employee.user);
    }
  }
  const one = await t.http.get(`/api/organization/${beta}?relations[]=employees`).set(acme.auth);
  assert.is(one.status, 200, JSON.stringify(one.body));
  assert.equal(sorted(one.body.employees.map((e: any) => e.id)), sorted(betaStaff.map((e) => e.id)));
});

test('the OpenAPI relations[] enums list a hasMany only first', async () => {
  const res = await t.http.get('/swg-json');
  assert.is(res.status, 200);
  const doc = res.body;
  const enumOf = (path: string) => {
    const param = doc.paths[path].get.parameters.find((p: any) => p.name === 'relations[]');
    return [...param.schema.items.enum] as string[];
  };
  for (const path of ['/api/employee', '/api/employee/{id}']) {
    const paths = enumOf(path);
    assert.ok(paths.includes('organization') && paths.includes('organization.tags'), paths.join(', '));
    assert.equal(paths.filter((p) => p.startsWith('organization.employees')), [], `${path}: ${paths.join(', ')}`);
  }
  const organization = enumOf('/api/organization');
  for (const allowed of ['employees', 'employees.user', 'employees.user.role', 'employees.organization', 'employees.tags']) {
    assert.ok(organization.includes(allowed), `${allowed} in ${organization.join(', ')}`);
  }
  assert.equal(organization.filter((p) => p.split('.').slice(1).includes('employees')), [], organization.join(', '));
  // The search body documents the same list as the query parameter.
  assert.equal(sorted(doc.components.schemas.EmployeeFindInput.properties.relations.anyOf[0].items.enum), sorted(enumOf('/api/employee')));
});

// The names listed after the prefix must be the paths the server accepts there, not every
// relation of the resource reached.
test('the refusal lists only what is allowed after the prefix', async () => {
  const res = await t.http.get('/api/employee?relations[]=organization.employees.user').set(acme.auth);
  assert.equal(res.body, badRequestBody(["relations: 'organization.employees.user' is not allowed; allowed after 'organization': tags, skills, contact"]));
  const deep = await t.http.get('/api/organization?relations[]=employees.organization.employees').set(acme.auth);
  assert.equal(deep.body, badRequestBody(["relations: 'employees.organization.employees' is not allowed; allowed after 'employees.organization': tags, skills, contact"]));
});

test.run();
