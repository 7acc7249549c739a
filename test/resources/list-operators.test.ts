// where[field][operator]=value and where[or][n][…] on GET /api/{resource} and in a search body:
// every operator on each type it takes, several on one field, OR groups, operators on related
// fields, the definition's narrowed operator sets, and every way a filter is refused (a 400 naming
// the field and what it takes), with the tenant never widened by an OR group.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { FORBIDDEN_BODY, ids, insertEmployees, listAssertions, sorted, type EmployeeRow } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
let ann: EmployeeRow, bob: EmployeeRow, cid: EmployeeRow, dee: EmployeeRow;
let foreign: EmployeeRow;

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  [ann, bob, cid, dee] = await insertEmployees(t, acme, [
    { firstName: 'Ann', lastName: 'Lee', billRateValue: 10, startedWorkOn: '2026-01-05T00:00:00Z', payPeriod: 'WEEKLY', isActive: true },
    { firstName: 'Bob', lastName: 'O_Neil', billRateValue: 20, startedWorkOn: '2026-02-01T00:00:00Z', payPeriod: 'MONTHLY', isActive: false },
    { firstName: 'Cid', lastName: '100%', billRateValue: 30, startedWorkOn: '2026-03-15T00:00:00Z', isActive: true },
    { firstName: 'Dee', lastName: 'Back\\slash', billRateValue: null, startedWorkOn: null, isActive: true },
  ]);
  [foreign] = await insertEmployees(t, other, [{ firstName: 'Ann', lastName: 'Lee', billRateValue: 10, startedWorkOn: '2026-01-05T00:00:00Z' }]);
});
test.after(async () => {
  await t.close();
});

const get = (query: string, who: Tenant = acme) => t.http.get(`/api/employee?${query}`).set(who.auth);
const { expectIds, expect400 } = listAssertions((query) => get(query));
const search = (body: object, who: Tenant = acme) => t.http.post('/api/employee/search').set(who.auth).send(body);

test('comparisons on a number: lt, lte, gt, gte, between (both ends included), several on one field all holding', async () => {
  await expectIds('where[billRateValue][lt]=20', [ann.id]);
  await expectIds('where[billRateValue][lte]=20', [ann.id, bob.id]);
  await expectIds('where[billRateValue][gt]=10', [bob.id, cid.id]);
  await expectIds('where[billRateValue][gte]=30', [cid.id]);
  await expectIds('where[billRateValue][between]=10,20', [ann.id, bob.id]);
  await expectIds('where[billRateValue][between][]=20&where[billRateValue][between][]=30', [bob.id, cid.id]);
  await expectIds('where[billRateValue][gt]=10&where[billRateValue][lt]=30', [bob.id]);
  // A plain value is still an exact match.
  await expectIds('where[billRateValue]=20', [bob.id]);
  await expectIds('where[billRateValue][eq]=20', [bob.id]);
});

test('dates take the same ranges; a date-only value is midnight UTC', async () => {
  await expectIds('where[startedWorkOn][gte]=2026-02-01', [bob.id, cid.id]);
  await expectIds('where[startedWorkOn][lt]=2026-02-01T00:00:00Z', [ann.id]);
  await expectIds('where[startedWorkOn][between]=2026-01-01,2026-02-28', [ann.id, bob.id]);
});

test('ne and nin count an empty field as different; isNull finds (or excludes) empty fields', async () => {
  await expectIds('where[billRateValue][ne]=10', [bob.id, cid.id, dee.id]);
  await expectIds('where[payPeriod][nin]=WEEKLY,MONTHLY', [cid.id, dee.id]);
  await expectIds('where[billRateValue][isNull]=true', [dee.id]);
  await expectIds('where[billRateValue][isNull]=false', [ann.id, bob.id, cid.id]);
  await expectIds('where[billRateValue][isNull]=false&where[billRateValue][ne]=30', [ann.id, bob.id]);
});

test('in: repeated, indexed or comma-separated in a query string; a JSON array in a search body', async () => {
  await expectIds('where[firstName][in][]=Ann&where[firstName][in][]=Cid', [ann.id, cid.id]);
  await expectIds('where[firstName][in][0]=Ann&where[firstName][in][1]=Bob', [ann.id, bob.id]);
  await expectIds('where[firstName][in]=Bob,Dee', [bob.id, dee.id]);
  await expectIds(`where[id][in]=${ann.id},${foreign.id}`, [ann.id]);
  const res = await search({ where: { billRateValue: { in: [10, 30] }, isActive: { eq: true } } });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(sorted(ids(res.body)), sorted([ann.id, cid.id]));
});

test('ilike: % and _ are wildcards, a backslash makes the next character literal, case does not matter', async () => {
  await expectIds('where[firstName][ilike]=a%25', [ann.id]);
  await expectIds('where[lastName][ilike]=%25o_n%25', [bob.id]);
  // _ literal: O_Neil matches, a name with another character there would not.
  await expectIds('where[lastName][ilike]=o%5C_neil', [bob.id]);
  await expectIds('where[lastName][ilike]=%25%5C%25', [cid.id]);
  await expectIds('where[lastName][ilike]=back%5C%5Cslash', [dee.id]);
  await expect400('where[lastName][ilike]=abc%5C', ['where.lastName.ilike must not end with a lone backslash (\\\\ matches a backslash)']);
});

test('operators on a related field: where[user][email][ilike]', async () => {
  const user = await t.db('user').where({ id: ann.userId }).first();
  const domain = user.email.slice(user.email.indexOf('@'));
  const local = user.email.slice(0, user.email.indexOf('@'));
  await expectIds(`where[user][email][ilike]=${encodeURIComponent(local)}%25`, [ann.id]);
  const res = await get(`where[user][email][ilike]=%25${encodeURIComponent(domain)}`);
  assert.is(res.status, 200);
  assert.ok(ids(res.body).includes(ann.id) && !ids(res.body).includes(foreign.id));
});

test('OR groups: one of them must hold, beside the plain conditions; in a body as "or": [...]', async () => {
  await expectIds('where[or][0][firstName]=Ann&where[or][1][billRateValue][gte]=30', [ann.id, cid.id]);
  await expectIds('where[isActive]=true&where[or][0][firstName]=Bob&where[or][1][billRateValue][isNull]=true', [dee.id]);
  const res = await search({ where: { or: [{ firstName: 'Bob' }, { lastName: { ilike: 'lee' } }] } });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(sorted(ids(res.body)), sorted([ann.id, bob.id]));
  // An OR group never reaches another tenant's records.
  await expectIds(`where[or][0][id]=${foreign.id}&where[or][1][firstName]=Ann`, [ann.id]);
  // The most groups there may be; indexes written out of order are still groups.
  const many = Array.from({ length: 19 }, (_, i) => `where[or][${19 - i}][firstName]=Nobody${i}`).join('&');
  await expectIds(`${many}&where[or][0][firstName]=Cid`, [cid.id]);
  await expect400(`${many}&where[or][0][firstName]=Cid&where[or][20][firstName]=Ann`, ['where.or must not hold more than 20 groups']);
});

test('a where[or] group naming another tenant is a 403, as at the top', async () => {
  const res = await get(`where[or][0][tenantId]=${other.tenantId}`);
  assert.is(res.status, 403);
  assert.equal(res.body, FORBIDDEN_BODY);
});

test('refused: unknown or disallowed operators, wrong types, empty in, between without two values, nesting, empties', async () => {
  await expect400('where[billRateValue][like]=1', ["where.billRateValue: 'like' is not an operator; billRateValue takes eq, ne, in, nin, lt, lte, gt, gte, between, isNull"]);
  await expect400('where[isActive][gt]=true', ['where.isActive.gt is not allowed: isActive takes eq, ne, isNull']);
  await expect400('where[billRateValue][ilike]=1%25', ['where.billRateValue.ilike is not allowed: billRateValue takes eq, ne, in, nin, lt, lte, gt, gte, between, isNull']);
  await expect400('where[billRateValue][gt]=ten', ['where.billRateValue.gt must be an integer number']);
  await expect400('where[startedWorkOn][lt]=yesterday', ['where.startedWorkOn.lt must be a valid ISO 8601 date string']);
  await expect400('where[id][in]=1,2', ['where.id.in.0 must be a UUID', 'where.id.in.1 must be a UUID']);
  await expect400('where[payPeriod][in]=WEEKLY,DAILY', ['where.payPeriod.in.1 must be one of the following values: NONE, BI_WEEKLY, WEEKLY, TWICE_PER_MONTH, MONTHLY']);
  await expect400('where[firstName][in]=', ['where.firstName.in should not be empty']);
  await expect400('where[billRateValue][between]=10', ['where.billRateValue.between must be two values (from, to), e.g. [1, 10] or 1,10']);
  await expect400('where[billRateValue][between]=1,2,3', ['where.billRateValue.between must be two values (from, to), e.g. [1, 10] or 1,10']);
  await expect400('where[billRateValue][isNull]=maybe', ['where.billRateValue.isNull must be a boolean value']);
  await expect400('where[billRateValue][gt][]=1', ['where.billRateValue.gt must be a single value']);
  await expect400('where[or]=x', ['where.or must be a list of groups, e.g. where[or][0][name]=a&where[or][1][name]=b']);
  await expect400('where[or][0][or][0][firstName]=Ann', ['where.or.0.or is not allowed: OR groups are one level deep']);
  await expect400('where[or][0][salary]=1', ["where.or.0: 'salary' is not filterable; filterable: id, organizationId, isActive, userId, firstName, lastName, payPeriod, billRateValue, startedWorkOn; relations: user, organization, tags, skills"]);
  // Every problem is named, not only the first.
  await expect400('where[billRateValue][gt]=x&where[isActive][lt]=1', ['where.billRateValue.gt must be an integer number', 'where.isActive.lt is not allowed: isActive takes eq, ne, isNull']);
});

test('refused in a search body too: a null where an operator needs a value, a non-array or, an empty group', async () => {
  const cases: Array<[object, string[]]> = [
    [{ where: { billRateValue: { gt: null } } }, ['where.billRateValue.gt must be an integer number']],
    [{ where: { firstName: { in: ['Ann', 1] } } }, ['where.firstName.in.1 must be a string']],
    [{ where: { firstName: {} } }, ['where.firstName should not be empty: give a value, or operators such as where.firstName[eq]']],
    [{ where: { or: [] } }, ['where.or should not be empty']],
    [{ where: { or: [{}] } }, ['where.or.0 should not be empty']],
    [{ where: { or: { name: 'x' } } }, ['where.or must be a list of groups, e.g. where[or][0][name]=a&where[or][1][name]=b']],
  ];
  for (const [body, messages] of cases) {
    const res = await search(body);
    assert.is(res.status, 400, JSON.stringify(body));
    assert.equal(res.body, { statusCode: 400, message: messages, error: 'Bad Request' }, JSON.stringify(body));
  }
});

test('a definition narrows a field: invoice status takes eq, ne, in, nin only', async () => {
  const res = await t.http.get('/api/invoice?where[status][ilike]=D%25').set(acme.auth);
  assert.is(res.status, 400);
  assert.equal(res.body.message, ['where.status.ilike is not allowed: status takes eq, ne, in, nin']);
  const ok = await t.http.get('/api/invoice?where[status][in]=DRAFT,SENT&where[totalValue][gte]=0&where[dueDate][lt]=2030-01-01').set(acme.auth);
  assert.is(ok.status, 200, JSON.stringify(ok.body));
});

test.run();
