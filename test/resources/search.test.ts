// search, startDate/endDate and tags[] on GET /api/{resource}: employee declares all three
// (search firstName/lastName, dateRange startedWorkOn, tagFilter tags); tags and skill do not.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { badRequestBody, ids, insertEmployees, insertTags, link, type EmployeeRow, listAssertions } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
/** Named people, for search. */
const people: Record<string, EmployeeRow> = {};
/** Employees by start of work, for date ranges. */
const started: Record<string, EmployeeRow> = {};
let red: string, blue: string, unused: string;

const TAG_PARAMETERS = 'take, skip, order, where, relations, select, cursor, count, search';

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const named: Array<[string, string, string]> = [
    ['ann', 'Ann', 'Lee'],
    ['anna', 'anna', 'Smith'],
    ['joanne', 'Joanne', 'Doe'],
    ['annison', 'Bob', 'ANNISON'],
    ['carl', 'Carl', 'Stone'],
    ['percent', '100%', 'Real'],
    ['percentless', '1000', 'Real'],
    ['underscore', 'under_score', 'Case'],
    ['underscoreless', 'underXscore', 'Case'],
    ['backslash', 'back\\slash', 'Case'],
  ];
  const rows = await insertEmployees(t, acme, named.map(([, firstName, lastName]) => ({ firstName, lastName })));
  named.forEach(([key], i) => (people[key] = rows[i]));
  // Another tenant's Ann must never be found.
  await insertEmployees(t, other, [{ firstName: 'Ann', lastName: 'Other', startedWorkOn: '2026-01-05T10:00:00.000Z' }]);

  const dated: Array<[string, string]> = [
    ['jan01', '2026-01-01T00:00:00.000Z'],
    ['jan05start', '2026-01-05T00:00:00.000Z'],
    ['jan05end', '2026-01-05T23:59:59.999Z'],
    ['jan06', '2026-01-06T00:00:00.000Z'],
  ];
  const datedRows = await insertEmployees(t, acme, dated.map(([key, startedWorkOn]) => ({ firstName: `Dated ${key}`, lastName: 'Dated', startedWorkOn })));
  dated.forEach(([key], i) => (started[key] = datedRows[i]));

  [red, blue, unused] = await insertTags(t, acme, ['red', 'blue', 'unused']);
  await link(t, 'tag_employee', 'employeeId', 'tagId', [
    [people.ann.id, red],
    [people.ann.id, blue],
    [people.carl.id, blue],
    [started.jan05start.id, red],
  ]);
});
test.after(async () => {
  await t.close();
});

const get = (query: string, session: Tenant = acme) => t.http.get(`/api/employee?${query}`).set(session.auth);
const { expectIds } = listAssertions(get);


async function expect400(query: string, messages: string[], path = '/api/employee') {
  const res = await t.http.get(`${path}?${query}`).set(acme.auth);
  assert.is(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
  assert.equal(res.body, badRequestBody(messages), query);
}

const p = (...keys: string[]) => keys.map((k) => people[k].id);
const s = (...keys: string[]) => keys.map((k) => started[k].id);

test('search is a case-insensitive substring match over firstName and lastName', async () => {
  await expectIds('search=ann', p('ann', 'anna', 'joanne', 'annison'));
  await expectIds('search=ANN', p('ann', 'anna', 'joanne', 'annison'));
  await expectIds('search=lee', p('ann'));
  await expectIds('search=%20ston%20', p('carl'));
  await expectIds('search=nobody', []);
});

test('search treats %, _ and \\ literally', async () => {
  await expectIds(`search=${encodeURIComponent('%')}`, p('percent'));
  await expectIds(`search=${encodeURIComponent('100%')}`, p('percent'));
  await expectIds(`search=${encodeURIComponent('_')}`, p('underscore'));
  await expectIds(`search=${encodeURIComponent('under_s')}`, p('underscore'));
  await expectIds(`search=${encodeURIComponent('\\')}`, p('backslash'));
  await expectIds(`search=${encodeURIComponent("'; drop table employee; --")}`, []);
  const [{ count }] = await t.db('employee').count({ count: '*' });
  assert.ok(Number(count) > 10, 'nothing was dropped');
});

test('search pages and counts like any filter, and combines with where', async () => {
  const res = await get('search=ann&take=1&order[lastName]=ASC');
  assert.is(res.status, 200);
  assert.is(res.body.total, 4);
  assert.equal(ids(res.body), p('annison'));
  await expectIds('search=ann&where[lastName]=Lee', p('ann'));
  // An empty or blank search is no filter.
  const all = await get('search=%20%20&take=50');
  assert.is(all.body.total, 14);
});

test('a bad search value is a 400', async () => {
  await expect400(`search=${'a'.repeat(201)}`, ['search must be shorter than or equal to 200 characters']);
  await expect400('search[]=a&search[]=b', ['search must be a single value']);
  await expect400('search[x]=a', ['search must be a single value']);
});

test('startDate and endDate are inclusive bounds over startedWorkOn; a date-only endDate includes that whole day', async () => {
  await expectIds('startDate=2026-01-05', s('jan05start', 'jan05end', 'jan06'));
  await expectIds('endDate=2026-01-05', s('jan01', 'jan05start', 'jan05end'));
  await expectIds('startDate=2026-01-05&endDate=2026-01-05', s('jan05start', 'jan05end'));
  await expectIds('startDate=2026-01-01&endDate=2026-01-06', s('jan01', 'jan05start', 'jan05end', 'jan06'));
  // With a time the bound is that instant, still inclusive.
  await expectIds('endDate=2026-01-05T00:00:00.000Z', s('jan01', 'jan05start'));
  await expectIds('startDate=2026-01-05T23:59:59.999Z&endDate=2026-01-06T00:00:00Z', s('jan05end', 'jan06'));
  await expectIds(`startDate=${encodeURIComponent('2026-01-05T01:00:00+01:00')}&endDate=${encodeURIComponent('2026-01-06T00:59:59.999+01:00')}`, s('jan05start', 'jan05end'));
  // A start later on the day of a date-only end is a valid half day.
  await expectIds('startDate=2026-01-05T12:00:00Z&endDate=2026-01-05', s('jan05end'));
  await expectIds('startDate=2027-01-01', []);
  // The last day there is: no bound past it reaches the database (it would refuse year 10000).
  await expectIds('endDate=9999-12-31&where[lastName]=Dated', s('jan01', 'jan05start', 'jan05end', 'jan06'));
  await expectIds('startDate=9999-12-31&endDate=9999-12-31', []);
  // Another tenant's record of that day never shows.
  const res = await get('startDate=2026-01-05&endDate=2026-01-05');
  assert.ok(res.body.items.every((item: any) => item.tenantId === acme.tenantId));
});

test('startDate after endDate is a 400', async () => {
  await expect400('startDate=2026-01-06&endDate=2026-01-05', ['startDate must not be after endDate']);
  await expect400('startDate=2026-01-05T00:00:00.001Z&endDate=2026-01-05T00:00:00Z', ['startDate must not be after endDate']);
  await expect400('startDate=2026-01-06T00:00:00Z&endDate=2026-01-05', ['startDate must not be after endDate']);
});

test('an invalid date is a 400 naming the parameter', async () => {
  await expect400('startDate=2026-02-31', ['startDate must be a valid ISO 8601 date string']);
  await expect400('endDate=yesterday', ['endDate must be a valid ISO 8601 date string']);
  await expect400('startDate=2026-13-01&endDate=2026-01-05T25:00:00Z', [
    'startDate must be a valid ISO 8601 date string',
    'endDate must be a valid ISO 8601 date string',
  ]);
  await expect400('startDate=', ['startDate must be a valid ISO 8601 date string']);
  await expect400(`endDate=${encodeURIComponent('9999-12-31T23:00:00-05:00')}`, ['endDate must be a valid ISO 8601 date string']);
  await expect400('endDate[]=2026-01-05', ['endDate must be a single value']);
});

test('startDate and endDate on a resource without a date range are a 400 naming them', async () => {
  await expect400('startDate=2026-01-01', [`startDate is not a supported list parameter of tag; supported: ${TAG_PARAMETERS}`], '/api/tags');
  await expect400('startDate=2026-01-01&endDate=2026-01-02', [
    `startDate is not a supported list parameter of tag; supported: ${TAG_PARAMETERS}`,
    `endDate is not a supported list parameter of tag; supported: ${TAG_PARAMETERS}`,
  ], '/api/tags');
});

test('tags[] finds records having any of the tags, each once', async () => {
  await expectIds(`tags[]=${red}`, [people.ann.id, started.jan05start.id]);
  await expectIds(`tags[]=${blue}`, p('ann', 'carl'));
  await expectIds(`tags[]=${red}&tags[]=${blue}`, [...p('ann', 'carl'), started.jan05start.id]);
  await expectIds(`tags=${red}`, [people.ann.id, started.jan05start.id]);
  await expectIds(`tags[0]=${blue.toUpperCase()}`, p('ann', 'carl'));
  await expectIds(`tags[]=${unused}`, []);
  // Combined with the other parameters.
  await expectIds(`tags[]=${red}&search=ann`, p('ann'));
  await expectIds(`tags[]=${red}&startDate=2026-01-01`, s('jan05start'));
  const page = await get(`tags[]=${red}&tags[]=${blue}&take=1`);
  assert.is(page.body.items.length, 1);
  assert.is(page.body.total, 3);
});

test('tags[] with an id that is not a UUID is a 400', async () => {
  await expect400('tags[]=red', ['tags.0 must be a UUID']);
  await expect400(`tags[]=${red}&tags[]=blue`, ['tags.1 must be a UUID']);
  await expect400('tags[]=', ['tags.0 must be a UUID']);
});

test('tags[] on a resource without a tag filter is a 400 naming it', async () => {
  await expect400(`tags[]=${red}`, [`tags is not a supported list parameter of skill; supported: ${TAG_PARAMETERS}`], '/api/skill');
  await expect400(`tags[]=${red}`, [`tags is not a supported list parameter of tag; supported: ${TAG_PARAMETERS}`], '/api/tags');
});

test('organization declares a tag filter too', async () => {
  const [orgTag] = await insertTags(t, acme, ['org tag']);
  await link(t, 'tag_organization', 'organizationId', 'tagId', [[acme.organizationId, orgTag]]);
  const res = await t.http.get(`/api/organization?tags[]=${orgTag}`).set(acme.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(ids(res.body), [acme.organizationId]);
  const none = await t.http.get(`/api/organization?tags[]=${red}`).set(acme.auth);
  assert.equal(none.body, { items: [], total: 0 });
});

test.run();
