// GET /api/{resource}: take/skip paging, order, and the parameters a list refuses (each a 400 naming it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { badRequestBody, ids, insertEmployees, insertTags, minutesFrom, sorted } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let paging: Tenant;
/** Twelve employees, created a minute apart: newest first is the reverse of this list. */
let twelve: string[];

const EMPLOYEE_PARAMETERS = 'take, skip, order, where, relations, select, cursor, count, search, startDate, endDate, tags';
const EMPLOYEE_SORTABLE = 'id, createdAt, updatedAt, firstName, lastName, startedWorkOn, billRateValue';

test.before(async () => {
  t = await createTestApp();
  paging = await newTenant(t, 'Paging');
  const created = minutesFrom('2026-03-01T08:00:00.000Z', 12);
  const rows = await insertEmployees(t, paging, created.map((createdAt, i) => ({ createdAt, isActive: i % 3 !== 0 })));
  twelve = rows.map((r) => r.id);
});
test.after(async () => {
  await t.close();
});

const get = (session: { auth: Record<string, string> }, query: string) => t.http.get(`/api/employee?${query}`).set(session.auth);
const newestFirst = () => [...twelve].reverse();

test('without parameters: the first 10 records, newest first, and the total of all 12', async () => {
  const res = await get(paging, '');
  assert.is(res.status, 200, JSON.stringify(res.body));
  // More follow: the cursor of the next page comes with this one.
  assert.equal(Object.keys(res.body).sort(), ['items', 'nextCursor', 'total']);
  assert.equal(ids(res.body), newestFirst().slice(0, 10));
  assert.is(res.body.total, 12);
  const [{ count }] = await t.db('employee').where({ tenantId: paging.tenantId }).count({ count: '*' });
  assert.is(Number(count), res.body.total);
});

test('take=3&skip=3 is the second page of three', async () => {
  const res = await get(paging, 'take=3&skip=3');
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(ids(res.body), newestFirst().slice(3, 6));
  assert.is(res.body.total, 12);
});

test('paging with take=5 visits every record once; a skip past the end is an empty page with the total', async () => {
  const seen: string[] = [];
  for (let skip = 0; skip < 15; skip += 5) {
    const res = await get(paging, `take=5&skip=${skip}`);
    assert.is(res.status, 200);
    assert.is(res.body.total, 12);
    seen.push(...ids(res.body));
  }
  assert.equal(seen, newestFirst());
  const past = await get(paging, 'skip=100');
  assert.is(past.status, 200);
  assert.equal(past.body, { items: [], total: 12 });
});

test('total counts every match of the filter, not only the page', async () => {
  const inactive = await t.db('employee').where({ tenantId: paging.tenantId, isActive: false }).pluck('id');
  assert.is(inactive.length, 4);
  const res = await get(paging, 'where[isActive]=false&take=2');
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.items.length, 2);
  assert.is(res.body.total, 4);
  for (const item of res.body.items) assert.ok(inactive.includes(item.id));
});

test('take above the maximum (50) is clamped, however large', async () => {
  const tagsTenant = await newTenant(t, 'Many tags');
  await insertTags(t, tagsTenant, Array.from({ length: 56 }, (_, i) => `tag-${String(i).padStart(2, '0')}`));
  for (const take of ['51', '100', '99999999999999999999']) {
    const res = await t.http.get(`/api/tags?take=${take}`).set(tagsTenant.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.is(res.body.items.length, 50, `take=${take}`);
    assert.is(res.body.total, 56);
  }
  const last = await t.http.get('/api/tags?take=50&skip=50').set(tagsTenant.auth);
  assert.is(last.status, 200);
  assert.is(last.body.items.length, 6);
  const all = [...ids((await t.http.get('/api/tags?take=50').set(tagsTenant.auth)).body), ...ids(last.body)];
  assert.equal(sorted(all), sorted(await t.db('tag').where({ tenantId: tagsTenant.tenantId }).pluck('id')));
});

for (const [query, messages] of [
  ['take=0', ['take must not be less than 1']],
  ['take=-1', ['take must not be less than 1']],
  ['take=abc', ['take must be an integer number']],
  ['take=', ['take must be an integer number']],
  ['take=2.5', ['take must be an integer number']],
  ['skip=-1', ['skip must not be less than 0']],
  ['skip=1.5', ['skip must be an integer number']],
  ['skip=1e3', ['skip must be an integer number']],
  ['take=1&take=2', ['take must be a single value']],
  ['skip[]=1', ['skip must be a single value']],
  ['take=0&skip=-1', ['take must not be less than 1', 'skip must not be less than 0']],
] as Array<[string, string[]]>) {
  test(`${query} is a 400 naming the problem`, async () => {
    const res = await get(paging, query);
    assert.is(res.status, 400);
    assert.equal(res.body, badRequestBody(messages));
  });
}

test('a parameter the list does not support is a 400 naming it and the supported ones', async () => {
  for (const name of ['foo=1', 'page=2', 'limit=5', 'offset=1', 'sort=firstName']) {
    const res = await get(paging, name);
    assert.is(res.status, 400, name);
    const key = name.split('=')[0];
    assert.equal(res.body, badRequestBody([`${key} is not a supported list parameter of employee; supported: ${EMPLOYEE_PARAMETERS}`]));
  }
  // Every problem of a request is reported at once.
  const res = await get(paging, 'foo=1&take=0');
  assert.equal(res.body, badRequestBody([`foo is not a supported list parameter of employee; supported: ${EMPLOYEE_PARAMETERS}`, 'take must not be less than 1']));
});

test('a query string beyond the parser limits is a 400, never silently truncated', async () => {
  const many = Array.from({ length: 150 }, () => 'relations[]=user').join('&');
  const tooMany = await get(paging, many);
  assert.is(tooMany.status, 400);
  assert.equal(tooMany.body, badRequestBody(['a query parameter must not have more than 100 values']));
  const params = Array.from({ length: 201 }, (_, i) => `p${i}=1`).join('&');
  const tooManyParams = await get(paging, params);
  assert.is(tooManyParams.status, 400);
  assert.equal(tooManyParams.body, badRequestBody(['the query string must not have more than 200 parameters']));
  const deep = await get(paging, 'where[or][0][user][email][in][0][x]=a');
  assert.is(deep.status, 400);
  assert.equal(deep.body, badRequestBody(['query parameters must not be nested deeper than 6 levels']));
});

test('the default order is createdAt DESC, ties broken by id', async () => {
  const owner = await newTenant(t, 'Default order');
  const [a, b, c] = minutesFrom('2026-04-01T00:00:00.000Z', 3);
  const rows = await insertEmployees(t, owner, [{ createdAt: b }, { createdAt: a }, { createdAt: c }, { createdAt: b }]);
  const res = await get(owner, '');
  assert.is(res.status, 200, JSON.stringify(res.body));
  const sameTime = sorted([rows[0].id, rows[3].id]).reverse();
  assert.equal(ids(res.body), [rows[2].id, ...sameTime, rows[1].id]);
});

test('order with several fields is applied in the order given', async () => {
  const owner = await newTenant(t, 'Order');
  const rows = await insertEmployees(t, owner, [
    { firstName: 'Ann', lastName: 'Zed' },
    { firstName: 'Ann', lastName: 'Bee' },
    { firstName: 'Bob', lastName: 'Zed' },
  ]);
  const [annZed, annBee, bobZed] = rows.map((r) => r.id);
  const byFirst = await get(owner, 'order[firstName]=ASC&order[lastName]=DESC');
  assert.is(byFirst.status, 200, JSON.stringify(byFirst.body));
  assert.equal(ids(byFirst.body), [annZed, annBee, bobZed]);
  const byLast = await get(owner, 'order[lastName]=DESC&order[firstName]=ASC');
  assert.is(byLast.status, 200);
  assert.equal(ids(byLast.body), [annZed, bobZed, annBee]);
  // Directions are case-insensitive.
  const lower = await get(owner, 'order[firstName]=desc&order[lastName]=asc');
  assert.is(lower.status, 200);
  assert.equal(ids(lower.body), [bobZed, annBee, annZed]);
});

test('equal sort values are broken by id, so take=2 pages never overlap or skip a record', async () => {
  const owner = await newTenant(t, 'Ties');
  const rows = await insertEmployees(t, owner, Array.from({ length: 7 }, () => ({ firstName: 'Same', lastName: 'Name', createdAt: '2026-05-01T00:00:00.000Z' })));
  for (const direction of ['ASC', 'DESC']) {
    const seen: string[] = [];
    for (let skip = 0; skip < 8; skip += 2) {
      const res = await get(owner, `order[firstName]=${direction}&take=2&skip=${skip}`);
      assert.is(res.status, 200, JSON.stringify(res.body));
      assert.is(res.body.total, 7);
      seen.push(...ids(res.body));
    }
    assert.is(seen.length, 7);
    assert.equal(sorted(seen), sorted(rows.map((r) => r.id)), 'every record exactly once');
    // The tie-breaker follows the direction of the last sort field.
    assert.equal(seen, direction === 'ASC' ? sorted(seen) : sorted(seen).reverse());
  }
  const byId = await get(owner, 'order[id]=ASC');
  assert.equal(ids(byId.body), sorted(rows.map((r) => r.id)));
});

test('order on a field that is not sortable is a 400 naming it and listing the sortable fields', async () => {
  for (const field of ['salary', 'userId', 'tenantId']) {
    const res = await get(paging, `order[${field}]=ASC`);
    assert.is(res.status, 400, field);
    assert.equal(res.body, badRequestBody([`order: '${field}' is not sortable; sortable: ${EMPLOYEE_SORTABLE}`]));
  }
});

test('order with a bad direction, or not as field=direction, is a 400', async () => {
  const bad = await get(paging, 'order[firstName]=UP');
  assert.is(bad.status, 400);
  assert.equal(bad.body, badRequestBody(['order.firstName must be one of the following values: ASC, DESC']));
  const twice = await get(paging, 'order[firstName]=ASC&order[firstName]=DESC');
  assert.equal(twice.body, badRequestBody(['order.firstName must be one of the following values: ASC, DESC']));
  const flat = await get(paging, 'order=firstName');
  assert.is(flat.status, 400);
  assert.equal(flat.body, badRequestBody(['order must be an object of field to ASC or DESC, e.g. order[createdAt]=DESC']));
});

test('lists need a token', async () => {
  const res = await t.http.get('/api/employee');
  assert.is(res.status, 401);
  assert.equal(res.body, { statusCode: 401, message: 'Unauthorized', error: 'Unauthorized' });
});

test.run();
