// POST /api/{resource}/search: the list parameters in a JSON body, plain or wrapped as
// {findInput: {...}} (the Ever Gauzy form), with JSON-typed values; same answers as the GET list.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, userWithRole } from '../helpers/accounts.js';
import { badRequestBody, FORBIDDEN_BODY, ids, insertEmployees, insertTags, link, minutesFrom, sorted, type EmployeeRow } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
let ann: EmployeeRow, bob: EmployeeRow, cid: EmployeeRow, dee: EmployeeRow;
let red: string;

const EMPLOYEE_PARAMETERS = 'take, skip, order, where, relations, select, cursor, count, search, startDate, endDate, tags';

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const created = minutesFrom('2026-07-01T00:00:00.000Z', 4);
  [ann, bob, cid, dee] = await insertEmployees(t, acme, [
    { firstName: 'Ann', lastName: 'Lee', isActive: true, startedWorkOn: '2026-01-05T00:00:00.000Z', createdAt: created[0] },
    { firstName: 'Bob', lastName: 'Lee', isActive: false, startedWorkOn: '2026-01-10T00:00:00.000Z', createdAt: created[1] },
    { firstName: 'Cid', lastName: 'Annable', isActive: false, createdAt: created[2] },
    { firstName: 'Dee', lastName: 'Moe', isActive: true, createdAt: created[3] },
  ]);
  await insertEmployees(t, other, [{ firstName: 'Ann', lastName: 'Lee' }]);
  [red] = await insertTags(t, acme, ['red']);
  await link(t, 'tag_employee', 'employeeId', 'tagId', [[ann.id, red], [cid.id, red]]);
});
test.after(async () => {
  await t.close();
});

const FORMS: Array<[string, (body: Record<string, unknown>) => unknown]> = [
  ['plain', (body) => body],
  ['findInput', (body) => ({ findInput: body })],
];

const search = (body: unknown, session: Tenant = acme) => t.http.post('/api/employee/search').set(session.auth).send(body as object);

for (const [form, wrap] of FORMS) {
  test(`${form}: an empty body is the default page, like GET without parameters`, async () => {
    const res = await search(wrap({}));
    assert.is(res.status, 200, JSON.stringify(res.body));
    const list = await t.http.get('/api/employee').set(acme.auth);
    assert.equal(res.body, list.body);
    assert.equal(ids(res.body), [dee.id, cid.id, bob.id, ann.id]);
    assert.is(res.body.total, 4);
  });

  test(`${form}: take and skip as JSON numbers page like the query`, async () => {
    const res = await search(wrap({ take: 2, skip: 1 }));
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(ids(res.body), [cid.id, bob.id]);
    assert.is(res.body.total, 4);
    const list = await t.http.get('/api/employee?take=2&skip=1').set(acme.auth);
    assert.equal(res.body, list.body);
  });

  test(`${form}: bad take and skip are 400s with the query's messages`, async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ take: 0 }, ['take must not be less than 1']],
      [{ take: -1 }, ['take must not be less than 1']],
      [{ take: 2.5 }, ['take must be an integer number']],
      [{ take: 'abc' }, ['take must be an integer number']],
      [{ take: true }, ['take must be an integer number']],
      [{ take: null }, ['take must be an integer number']],
      [{ take: [1, 2] }, ['take must be a single value']],
      [{ skip: -1 }, ['skip must not be less than 0']],
      [{ skip: 1.5 }, ['skip must be an integer number']],
      [{ skip: { a: 1 } }, ['skip must be a single value']],
    ];
    for (const [body, messages] of cases) {
      const res = await search(wrap(body));
      assert.is(res.status, 400, JSON.stringify(body));
      assert.equal(res.body, badRequestBody(messages), JSON.stringify(body));
    }
  });

  test(`${form}: order as an object is applied in the order given`, async () => {
    const res = await search(wrap({ order: { lastName: 'ASC', firstName: 'DESC' } }));
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(ids(res.body), [cid.id, bob.id, ann.id, dee.id]);
    const bad = await search(wrap({ order: { salary: 'ASC', firstName: 'SIDEWAYS' } }));
    assert.is(bad.status, 400);
    assert.equal(bad.body, badRequestBody([
      "order: 'salary' is not sortable; sortable: id, createdAt, updatedAt, firstName, lastName, startedWorkOn, billRateValue",
      'order.firstName must be one of the following values: ASC, DESC',
    ]));
    const list = await search(wrap({ order: ['firstName'] }));
    assert.equal(list.body, badRequestBody(['order must be an object of field to ASC or DESC, e.g. order[createdAt]=DESC']));
  });

  test(`${form}: where with JSON booleans, uuids and nested relation fields`, async () => {
    const inactive = await search(wrap({ where: { isActive: false } }));
    assert.is(inactive.status, 200, JSON.stringify(inactive.body));
    assert.equal(sorted(ids(inactive.body)), sorted([bob.id, cid.id]));
    assert.is(inactive.body.total, 2);
    const byUser = await search(wrap({ where: { userId: bob.userId, isActive: 'false' } }));
    assert.equal(ids(byUser.body), [bob.id]);
    const email = (await t.db('user').where({ id: ann.userId }).first()).email;
    const nested = await search(wrap({ where: { user: { email }, tags: { id: red } } }));
    assert.equal(ids(nested.body), [ann.id]);
    const byOrg = await search(wrap({ where: { organization: { name: 'Acme' }, organizationId: acme.organizationId, lastName: 'Lee' } }));
    assert.equal(sorted(ids(byOrg.body)), sorted([ann.id, bob.id]));
  });

  test(`${form}: where problems are 400s; a foreign tenantId is a 403`, async () => {
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ where: { userId: 'not-a-uuid' } }, ['where.userId must be a UUID']],
      [{ where: { userId: 5 } }, ['where.userId must be a UUID']],
      [{ where: { isActive: 'maybe' } }, ['where.isActive must be a boolean value']],
      [{ where: { isActive: [true] } }, ['where.isActive must be a single value']],
      [{ where: { isActive: null } }, ['where.isActive must be a boolean value']],
      [{ where: { salary: 1 } }, ["where: 'salary' is not filterable; filterable: id, organizationId, isActive, userId, firstName, lastName, payPeriod, billRateValue, startedWorkOn; relations: user, organization, tags, skills"]],
      [{ where: { user: { hash: 'x' } } }, ["where.user: 'hash' is not filterable; filterable: id, email, isActive, roleId"]],
      [{ where: { user: 'x' } }, ['where.user must be an object of user fields, e.g. where[user][id]=…']],
      [{ where: [] }, ['where must be an object of field to value, e.g. where[isActive]=true']],
    ];
    for (const [body, messages] of cases) {
      const res = await search(wrap(body));
      assert.is(res.status, 400, JSON.stringify(body));
      assert.equal(res.body, badRequestBody(messages), JSON.stringify(body));
    }
    const own = await search(wrap({ where: { tenantId: acme.tenantId } }));
    assert.is(own.status, 200);
    assert.is(own.body.total, 4);
    for (const tenantId of [other.tenantId, 42]) {
      const foreign = await search(wrap({ where: { tenantId } }));
      assert.is(foreign.status, 403);
      assert.equal(foreign.body, FORBIDDEN_BODY);
    }
  });

  test(`${form}: relations as an array, a comma list or dot notation`, async () => {
    for (const relations of [['user', 'tags'], 'user,tags', ['user.role', 'tags']]) {
      const res = await search(wrap({ relations, where: { id: ann.id } }));
      assert.is(res.status, 200, JSON.stringify(res.body));
      const [item] = res.body.items;
      assert.is(item.user.id, ann.userId);
      assert.not.ok('hash' in item.user);
      assert.equal(item.tags.map((tag: any) => tag.id), [red]);
    }
    const cases: Array<[unknown, string[]]> = [
      [['salary'], ["relations: 'salary' is not allowed; allowed: user, organization, tags, skills"]],
      [['organization.employees.user.role'], ["relations: 'organization.employees.user.role' is deeper than 3 levels"]],
      [[1], ['relations must be an array of strings']],
      [true, ['relations must be an array of strings']],
    ];
    for (const [relations, messages] of cases) {
      const res = await search(wrap({ relations }));
      assert.is(res.status, 400, JSON.stringify(relations));
      assert.equal(res.body, badRequestBody(messages));
    }
  });

  test(`${form}: search, startDate/endDate and tags in the body`, async () => {
    const found = await search(wrap({ search: 'ANN' }));
    assert.equal(sorted(ids(found.body)), sorted([ann.id, cid.id]));
    const dated = await search(wrap({ startDate: '2026-01-05', endDate: '2026-01-05' }));
    assert.equal(ids(dated.body), [ann.id]);
    const tagged = await search(wrap({ tags: [red], where: { isActive: false } }));
    assert.equal(ids(tagged.body), [cid.id]);
    const cases: Array<[Record<string, unknown>, string[]]> = [
      [{ search: 5 }, ['search must be a string']],
      [{ startDate: '2026-01-06', endDate: '2026-01-05' }, ['startDate must not be after endDate']],
      [{ startDate: 20260105 }, ['startDate must be a valid ISO 8601 date string']],
      [{ endDate: 'yesterday' }, ['endDate must be a valid ISO 8601 date string']],
      [{ tags: ['red'] }, ['tags.0 must be a UUID']],
      [{ tags: [red, 7] }, ['tags.1 must be a UUID']],
    ];
    for (const [body, messages] of cases) {
      const res = await search(wrap(body));
      assert.is(res.status, 400, JSON.stringify(body));
      assert.equal(res.body, badRequestBody(messages), JSON.stringify(body));
    }
  });

  test(`${form}: an unknown key is a 400 naming it`, async () => {
    const res = await search(wrap({ page: 2, take: 1 }));
    assert.is(res.status, 400);
    assert.equal(res.body, badRequestBody([`page is not a supported list parameter of employee; supported: ${EMPLOYEE_PARAMETERS}`]));
  });
}

test('the search body never reaches another tenant', async () => {
  const res = await search({ where: { firstName: 'Ann' } }, other);
  assert.is(res.status, 200);
  assert.is(res.body.total, 1);
  assert.is(res.body.items[0].tenantId, other.tenantId);
});

test('take above the maximum is clamped in a body too', async () => {
  const owner = await newTenant(t, 'Many');
  await insertTags(t, owner, Array.from({ length: 52 }, (_, i) => `t${i}`));
  for (const body of [{ take: 51 }, { findInput: { take: 1e6 } }, { take: '999' }]) {
    const res = await t.http.post('/api/tags/search').set(owner.auth).send(body);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.is(res.body.items.length, 50);
    assert.is(res.body.total, 52);
  }
});

test('a body that is not an object is a 400', async () => {
  for (const body of [[], [{ take: 1 }]]) {
    const res = await search(body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.equal(res.body, badRequestBody(['body must be an object']));
  }
  // JSON scalars are refused by the JSON parser already, with the same sentence.
  for (const raw of ['"x"', '5', 'null', 'true']) {
    const res = await t.http.post('/api/employee/search').set(acme.auth).set('Content-Type', 'application/json').send(raw);
    assert.is(res.status, 400, raw);
    assert.equal(res.body, badRequestBody(['body must be an object']), raw);
  }
});

test('findInput that is not an object is a 400', async () => {
  for (const findInput of ['x', 5, null, [], [{ take: 1 }], true]) {
    const res = await search({ findInput });
    assert.is(res.status, 400, JSON.stringify(findInput));
    assert.equal(res.body, badRequestBody(['findInput must be an object']));
  }
});

test('findInput beside other keys is not unwrapped: the stray key is named', async () => {
  const res = await search({ findInput: { take: 1 }, take: 2 });
  assert.is(res.status, 400);
  assert.equal(res.body, badRequestBody([`findInput is not a supported list parameter of employee; supported: ${EMPLOYEE_PARAMETERS}`]));
});

test('search needs the read permission of the resource', async () => {
  const employee = await userWithRole(t, acme, 'EMPLOYEE');
  const res = await search({}, employee as Tenant);
  assert.is(res.status, 403);
  assert.equal(res.body, FORBIDDEN_BODY);
  const anonymous = await t.http.post('/api/employee/search').send({});
  assert.is(anonymous.status, 401);
});

test.run();
