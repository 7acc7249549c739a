// where[field] and where[relation][field] on GET /api/{resource}: exact match, values coerced to
// the field's type, only whitelisted fields, and the tenant never widened (a where[tenantId] of
// another tenant is a 403).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { FORBIDDEN_BODY, ids, insertEmployees, insertTags, link, sorted, type EmployeeRow, listAssertions } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
let secondOrg: string;
let ann: EmployeeRow, bob: EmployeeRow, cid: EmployeeRow, dan: EmployeeRow;
let red: string, blue: string;

const EMPLOYEE_FILTERS = 'id, organizationId, isActive, userId, firstName, lastName, payPeriod, billRateValue, startedWorkOn; relations: user, organization, tags, skills';

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const org = await t.http.post('/api/organization').set(acme.auth).send({ name: 'Second Org', currency: 'USD' });
  assert.is(org.status, 201, JSON.stringify(org.body));
  secondOrg = org.body.id;
  [ann, bob, cid] = await insertEmployees(t, acme, [
    { firstName: 'Ann', lastName: 'Lee', isActive: true, payPeriod: 'WEEKLY' },
    { firstName: 'Bob', lastName: 'Lee', isActive: false, payPeriod: 'MONTHLY' },
    { firstName: 'Cid', lastName: 'Moe', isActive: false },
  ]);
  [dan] = await insertEmployees(t, { tenantId: acme.tenantId, organizationId: secondOrg }, [{ firstName: 'Dan', lastName: 'Lee' }]);
  await insertEmployees(t, other, [{ firstName: 'Ann', lastName: 'Lee', isActive: false }]);
  [red, blue] = await insertTags(t, acme, ['red', 'blue']);
  await link(t, 'tag_employee', 'employeeId', 'tagId', [[ann.id, red], [ann.id, blue], [bob.id, blue]]);
});
test.after(async () => {
  await t.close();
});

const get = (query: string, session: Tenant = acme) => t.http.get(`/api/employee?${query}`).set(session.auth);
const { expectIds, expect400 } = listAssertions(get);



test('where[isActive]=false is coerced to a boolean (true, 1 and 0 too)', async () => {
  await expectIds('where[isActive]=false', [bob.id, cid.id]);
  await expectIds('where[isActive]=0', [bob.id, cid.id]);
  await expectIds('where[isActive]=true', [ann.id, dan.id]);
  await expectIds('where[isActive]=1', [ann.id, dan.id]);
  const inactive = await t.db('employee').where({ tenantId: acme.tenantId, isActive: false }).pluck('id');
  assert.equal(sorted(inactive), sorted([bob.id, cid.id]));
  await expect400('where[isActive]=yes', ['where.isActive must be a boolean value']);
});

test('where[userId] takes a UUID (any case); anything else is a 400', async () => {
  await expectIds(`where[userId]=${bob.userId}`, [bob.id]);
  await expectIds(`where[userId]=${bob.userId.toUpperCase()}`, [bob.id]);
  await expect400('where[userId]=not-a-uuid', ['where.userId must be a UUID']);
  await expect400('where[id]=1', ['where.id must be a UUID']);
});

test('where on string, enum and id fields is an exact match', async () => {
  await expectIds('where[lastName]=Lee', [ann.id, bob.id, dan.id]);
  await expectIds('where[lastName]=lee', []);
  await expectIds('where[lastName]=Le', []);
  await expectIds('where[firstName]=Ann&where[lastName]=Lee', [ann.id]);
  await expectIds('where[payPeriod]=WEEKLY', [ann.id]);
  await expectIds(`where[id]=${cid.id}`, [cid.id]);
  await expect400('where[payPeriod]=YEARLY', ['where.payPeriod must be one of the following values: NONE, BI_WEEKLY, WEEKLY, TWICE_PER_MONTH, MONTHLY']);
});

test('where[organizationId] narrows to one organization; another tenant\'s organization matches nothing', async () => {
  await expectIds(`where[organizationId]=${acme.organizationId}`, [ann.id, bob.id, cid.id]);
  await expectIds(`where[organizationId]=${secondOrg}`, [dan.id]);
  await expectIds(`where[organizationId]=${other.organizationId}`, []);
  await expect400('where[organizationId]=acme', ['where.organizationId must be a UUID']);
});

test('another tenant\'s rows never match, whatever the filter', async () => {
  const foreign = await t.db('employee').where({ tenantId: other.tenantId }).first();
  await expectIds(`where[id]=${foreign.id}`, []);
  await expectIds(`where[userId]=${foreign.userId}`, []);
  const theirs = await get('where[firstName]=Ann', other);
  assert.equal(ids(theirs.body), [foreign.id]);
});

test('where on a field that is not a filter is a 400 naming it and listing the filters', async () => {
  await expect400('where[unknown]=x', [`where: 'unknown' is not filterable; filterable: ${EMPLOYEE_FILTERS}`]);
  // Fields of the resource that are not declared filters are refused too.
  await expect400('where[endWork]=2026-01-01', [`where: 'endWork' is not filterable; filterable: ${EMPLOYEE_FILTERS}`]);
  await expect400('where[isActive][]=true', ['where.isActive must be a single value']);
  await expect400('where=isActive', ['where must be an object of field to value, e.g. where[isActive]=true']);
});

test('where[user][email] filters on the related user (email is one of user\'s filters)', async () => {
  const user = await t.db('user').where({ id: cid.userId }).first();
  await expectIds(`where[user][email]=${encodeURIComponent(user.email)}`, [cid.id]);
  await expectIds(`where[user][id]=${cid.userId}`, [cid.id]);
  await expectIds('where[user][email]=nobody%40example.com', []);
  // The outer and the nested filter both apply.
  await expectIds(`where[user][email]=${encodeURIComponent(user.email)}&where[isActive]=true`, []);
});

test('where[tags][id] finds records linked to that tag, each once', async () => {
  await expectIds(`where[tags][id]=${blue}`, [ann.id, bob.id]);
  await expectIds(`where[tags][id]=${red}`, [ann.id]);
  await expectIds(`where[tags][name]=blue`, [ann.id, bob.id]);
  await expect400('where[tags][id]=blue', ['where.tags.id must be a UUID']);
});

test('where[organization][name] filters on the related organization', async () => {
  await expectIds('where[organization][name]=Second%20Org', [dan.id]);
  await expectIds('where[organization][name]=Acme', [ann.id, bob.id, cid.id]);
  // Another tenant's organization of the same name is not a match for this tenant's rows.
  await expectIds('where[organization][name]=Other', []);
});

test('nested where on an unknown field, a hidden field or in a flat form is a 400', async () => {
  await expect400('where[user][hash]=x', ["where.user: 'hash' is not filterable; filterable: id, email, isActive, roleId"]);
  await expect400('where[organization][salary]=1', ["where.organization: 'salary' is not filterable; filterable: id, name, currency, isDefault, isActive"]);
  await expect400('where[user]=x', ['where.user must be an object of user fields, e.g. where[user][id]=…']);
  await expect400('where[user][isActive]=maybe', ['where.user.isActive must be a boolean value']);
  await expect400('where[salary][id]=1', [`where: 'salary' is not filterable; filterable: ${EMPLOYEE_FILTERS}`]);
});

test('where[tenantId]: the caller\'s own is ignored, another is a 403', async () => {
  await expectIds(`where[tenantId]=${acme.tenantId}`, [ann.id, bob.id, cid.id, dan.id]);
  await expectIds(`where[tenantId]=${acme.tenantId.toUpperCase()}`, [ann.id, bob.id, cid.id, dan.id]);
  for (const value of [other.tenantId, 'not-a-uuid']) {
    const res = await get(`where[tenantId]=${value}`);
    assert.is(res.status, 403);
    assert.equal(res.body, FORBIDDEN_BODY);
  }
});

test.run();
