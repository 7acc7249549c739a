// The list's Ever Gauzy spellings: GET /api/{r}/pagination is the list (same
// parameters, same answer) and GET /api/{r}/count answers {total} under the same filters,
// permissions, tenant and owner rule, on every path and alias.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden } from '../helpers/error-envelope.js';
import { insertEmployees, insertTags, minutesFrom } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Session & { organizationId: string };
let acme: Tenant;
let other: Tenant;
let worker: Session & { employeeId?: string };
let urgent: string;

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const created = minutesFrom('2026-03-01T08:00:00.000Z', 9);
  const rows = await insertEmployees(
    t,
    acme,
    created.map((createdAt, i) => ({ createdAt, isActive: i % 3 !== 0, firstName: i < 4 ? `Ann${i}` : `Bob${i}`, startedWorkOn: `2026-0${1 + (i % 3)}-10T00:00:00.000Z` })),
  );
  [urgent] = await insertTags(t, acme, ['Urgent']);
  await t.db('tag_employee').insert(rows.slice(0, 3).map((r) => ({ employeeId: r.id, tagId: urgent })));
  // The other tenant's employees and tag must count nowhere in Acme's answers.
  await insertEmployees(t, other, [{ firstName: 'Ann-other' }, { firstName: 'Bob-other' }]);
  worker = await userWithRole(t, acme, 'EMPLOYEE', true);
  // Time logs: two of the worker's, three of another employee's.
  for (const [employeeId, n] of [[worker.employeeId!, 2], [rows[0].id, 3]] as const) {
    for (let i = 0; i < n; i++) {
      const res = await t.http.post('/api/time-log').set(acme.auth).send({ employeeId, startedAt: `2026-04-0${i + 1}T08:00:00Z`, stoppedAt: `2026-04-0${i + 1}T09:00:00Z` });
      assert.is(res.status, 201, JSON.stringify(res.body));
    }
  }
});
test.after(async () => {
  await t?.close();
});

const queries = () => [
  '',
  'take=3&skip=2',
  'where[isActive]=true',
  'search=ann',
  'startDate=2026-02-01&endDate=2026-02-28',
  `tags[]=${urgent}`,
  'order[firstName]=ASC&take=4&relations[]=user',
  `where[tags][id]=${urgent}&where[isActive]=false`,
];

test('/pagination answers exactly what the list answers, for every parameter', async () => {
  for (const query of queries()) {
    const list = await t.http.get(`/api/employee?${query}`).set(acme.auth);
    const page = await t.http.get(`/api/employee/pagination?${query}`).set(acme.auth);
    assert.is(list.status, 200, `${query}: ${JSON.stringify(list.body)}`);
    assert.is(page.status, 200, `${query}: ${JSON.stringify(page.body)}`);
    assert.equal(page.body, list.body, query);
    assert.is(page.headers['x-total-exact'], list.headers['x-total-exact']);
  }
});

test("/count answers {total}: the list's total under the same filters, the page parameters changing nothing", async () => {
  const expected: Record<string, number> = { '': 10, 'where[isActive]=true': 7, 'search=ann': 4, [`tags[]=${urgent}`]: 3 };
  for (const query of queries()) {
    const list = await t.http.get(`/api/employee?${query}`).set(acme.auth);
    const count = await t.http.get(`/api/employee/count?${query}`).set(acme.auth);
    assert.is(count.status, 200, `${query}: ${JSON.stringify(count.body)}`);
    assert.equal(count.body, { total: list.body.total }, query);
    assert.is(count.headers['x-total-exact'], 'true');
    if (query in expected) assert.is(count.body.total, expected[query], query);
  }
  // The database agrees (the worker's own employee record is the tenth).
  const [{ n }] = await t.db('employee').where({ tenantId: acme.tenantId }).count({ n: '*' });
  assert.is((await t.http.get('/api/employee/count').set(acme.auth)).body.total, Number(n));
});

/** The statements on the employee table that one request ran. */
async function employeeStatements(request: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const listen = (q: { sql: string }) => seen.push(q.sql);
  t.db.on('query', listen);
  try {
    await request();
  } finally {
    t.db.off('query', listen);
  }
  return seen.filter((sql) => sql.includes('from "employee"'));
}

test('a page and its total are one statement; an empty page after a skip or a cursor counts alone', async () => {
  const [{ n }] = await t.db('employee').where({ tenantId: acme.tenantId }).count({ n: '*' });
  const [{ n: active }] = await t.db('employee').where({ tenantId: acme.tenantId, isActive: true }).count({ n: '*' });
  let res: any;
  // A page: its count is a subquery of the page's statement, and never part of the answer.
  let statements = await employeeStatements(async () => (res = await t.http.get('/api/employee?where[isActive]=true&take=2').set(acme.auth)));
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.items.length, 2);
  assert.is(res.body.total, Number(active));
  assert.is(res.headers['x-total-exact'], 'true');
  assert.not.ok(res.text.includes('@total'), res.text);
  assert.is(statements.length, 1, JSON.stringify(statements));
  // Beside the table's change mark, in the branch taken when no kept total stands (total-cache.ts).
  assert.match(statements[0], ' as "@mark", case when (select ');
  assert.match(statements[0], ' then null else (select count(*) from (select 1 from "employee" where ');
  assert.not.ok(res.text.includes('@mark'), res.text);
  // Nothing matches: the first page is empty and its total 0, in the same one statement.
  statements = await employeeStatements(async () => (res = await t.http.get('/api/employee?where[firstName]=Nobody').set(acme.auth)));
  assert.equal([res.status, res.body], [200, { items: [], total: 0 }]);
  assert.is(statements.length, 1, JSON.stringify(statements));
  // Past the last page: no row carries the count, so it is counted alone, beside the mark as a
  // page counts (its first time: no kept total of these filters stands yet).
  statements = await employeeStatements(async () => (res = await t.http.get('/api/employee?skip=50').set(acme.auth)));
  assert.equal([res.status, res.body], [200, { items: [], total: Number(n) }]);
  assert.is(statements.length, 2, JSON.stringify(statements));
  assert.match(statements[1], /^select \(select .*\) as "@mark", case when .* then null else \(select count\(\*\) from \(select 1 from "employee" where /);
  // A cursor page counts every match of the list, not those after the cursor.
  const first = await t.http.get('/api/employee?take=6').set(acme.auth);
  res = await t.http.get(`/api/employee?take=6&cursor=${first.body.nextCursor}`).set(acme.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.items.length, Number(n) - 6);
  assert.is(res.body.total, Number(n));
  assert.is(res.body.nextCursor, undefined);
});

test('/count and /pagination check the parameters as the list does', async () => {
  for (const sub of ['count', 'pagination']) {
    const path = `/api/employee/${sub}`;
    assertError(await t.http.get(`${path}?take=-1`).set(acme.auth), 400, 'take must not be less than 1');
    assertError(await t.http.get(`${path}?order[salary]=ASC`).set(acme.auth), 400, /^order: 'salary' is not sortable/);
    assertError(await t.http.get(`${path}?relations[]=salary`).set(acme.auth), 400, /^relations: 'salary' is not allowed/);
    assertError(await t.http.get(`${path}?where[salary]=1`).set(acme.auth), 400, /^where: 'salary' is not filterable/);
    assertError(await t.http.get(`${path}?colour=red`).set(acme.auth), 400, /^colour is not a supported list parameter of employee/);
    assertError(await t.http.get(`${path}?startDate=yesterday`).set(acme.auth), 400, 'startDate must be a valid ISO 8601 date string');
    assertError(await t.http.get(path), 401, 'Unauthorized');
  }
});

test('permissions, tenant and owner rule: as the list', async () => {
  // The EMPLOYEE role may not read employees: 403 on every spelling.
  for (const path of ['/api/employee', '/api/employee/pagination', '/api/employee/count']) assertForbidden(await t.http.get(path).set(worker.auth));
  // The other tenant counts only its own.
  assert.equal((await t.http.get('/api/employee/count').set(other.auth)).body, { total: 2 });
  assert.equal((await t.http.get('/api/employee/count?search=ann').set(other.auth)).body, { total: 1 });
  // Time logs: the admin counts all five, the worker only its own two, on the path and the alias.
  for (const path of ['/api/time-log', '/api/timesheet/time-log']) {
    assert.equal((await t.http.get(`${path}/count`).set(acme.auth)).body, { total: 5 }, path);
    assert.equal((await t.http.get(`${path}/count`).set(worker.auth)).body, { total: 2 }, path);
    const page = await t.http.get(`${path}/pagination`).set(worker.auth);
    assert.is(page.body.total, 2);
    assert.ok(page.body.items.every((log: { employeeId: string }) => log.employeeId === worker.employeeId));
    assert.equal((await t.http.get(`${path}/count?startDate=2026-04-02&endDate=2026-04-02`).set(acme.auth)).body, { total: 2 }, path);
  }
});

test('every alias and the hand-written event types have both spellings', async () => {
  for (const path of ['/api/tags', '/api/tag']) {
    assert.equal((await t.http.get(`${path}/count`).set(acme.auth)).body, { total: 1 }, path);
    assert.is((await t.http.get(`${path}/pagination`).set(acme.auth)).body.items[0].id, urgent, path);
  }
  const created = await t.http.post('/api/event-type').set(acme.auth).send({ title: 'Intro', durationUnit: 'Minute(s)', duration: 30 });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.equal((await t.http.get('/api/event-type/count').set(acme.auth)).body, { total: 1 });
  assert.equal((await t.http.get('/api/event-type/count?where[title]=Other').set(acme.auth)).body, { total: 0 });
  assert.is((await t.http.get('/api/event-type/pagination').set(acme.auth)).body.items[0].id, created.body.id);
});

test('the document declares both spellings on every resource path, and lists the aliases of each', () => {
  const doc = t.openapi as Record<string, any>;
  for (const r of t.engine.registry.values()) {
    if (!r.routes && r.name !== 'event-type') continue;
    const [path, ...aliases] = r.paths;
    const list = doc.paths[`/api/${path}`].get;
    const pagination = doc.paths[`/api/${path}/pagination`]?.get;
    const count = doc.paths[`/api/${path}/count`]?.get;
    assert.ok(pagination && count, path);
    assert.equal(pagination.parameters, list.parameters, path);
    assert.equal(pagination.responses['200'], list.responses['200'], path);
    // The count answers no tag: it takes the list's parameters but If-None-Match.
    assert.equal(count.parameters, list.parameters.filter((p: any) => p.name !== 'If-None-Match'), path);
    const schema = count.responses['200'].content['application/json'].schema;
    assert.equal(schema.required, ['total']);
    assert.is(schema.properties.total.type, 'integer');
    // Each alias answers both as these path items do.
    for (const sub of ['pagination', 'count']) {
      assert.equal(doc.paths[`/api/${path}/${sub}`]['x-aliases'] ?? [], aliases.map((alias) => `/api/${alias}/${sub}`), `${path}/${sub}`);
    }
  }
});

test.run();
