// relations[] on lists and single reads: the three spellings, dot notation, the whitelist and its
// depth, tenant isolation of loaded rows, hidden fields, and loading in batches with bound values.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { badRequestBody, ids, insertEmployees, insertSkills, insertTags, insertUsers, link, minutesFrom, sorted, type EmployeeRow, listAssertions } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let other: Tenant;
let ann: EmployeeRow, bob: EmployeeRow;
let red: string, blue: string, java: string;
let foreignTag: string, foreignSkill: string, foreignUser: string;
/** An employee of acme corrupted to point at the other tenant's user and organization. */
let corrupt: string;

const ALLOWED = 'user, organization, tags, skills';

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  const [older, newer] = minutesFrom('2026-02-01T00:00:00.000Z', 2);
  [ann, bob] = await insertEmployees(t, acme, [
    { firstName: 'Ann', createdAt: newer },
    { firstName: 'Bob', createdAt: older },
  ]);
  [red, blue] = await insertTags(t, acme, ['red', 'blue']);
  [java] = await insertSkills(t, acme, ['java']);
  [foreignTag] = await insertTags(t, other, ['foreign']);
  [foreignSkill] = await insertSkills(t, other, ['foreign skill']);
  [foreignUser] = (await insertEmployees(t, other, [{ firstName: 'Zed' }])).map((e) => e.userId);
  await link(t, 'tag_employee', 'employeeId', 'tagId', [[ann.id, red], [ann.id, blue], [bob.id, blue]]);
  await link(t, 'skill_employee', 'employeeId', 'skillId', [[ann.id, java]]);
  // Corruption no API allows: links and references across tenants, written straight to the tables.
  await link(t, 'tag_employee', 'employeeId', 'tagId', [[ann.id, foreignTag]]);
  await link(t, 'skill_employee', 'employeeId', 'skillId', [[ann.id, foreignSkill]]);
  const [strayUser] = await insertUsers(t, other, 1, 'stray');
  [{ id: corrupt }] = await insertEmployees(t, acme, [
    { firstName: 'Corrupt', createdAt: '2026-01-01T00:00:00.000Z', userId: strayUser, organizationId: other.organizationId },
  ]);
});
test.after(async () => {
  await t.close();
});

const list = (query: string, session: Tenant = acme) => t.http.get(`/api/employee?${query}`).set(session.auth);
const { expect400 } = listAssertions(list);
const byId = (body: { items: any[] }) => new Map(body.items.map((item) => [item.id, item]));
const names = (rows: Array<{ name: string }>) => rows.map((r) => r.name).sort();


test('relations[]=user loads each record\'s user, without its password hash', async () => {
  const res = await list('relations[]=user');
  assert.is(res.status, 200, JSON.stringify(res.body));
  const items = byId(res.body);
  const user = items.get(ann.id).user;
  const stored = await t.db('user').where({ id: ann.userId }).first();
  assert.is(user.id, ann.userId);
  assert.is(user.email, stored.email);
  assert.is(user.tenantId, acme.tenantId);
  assert.not.ok('hash' in user);
  assert.not.ok(JSON.stringify(res.body).includes(stored.hash), 'the hash value never leaves');
  assert.not.ok('tags' in items.get(ann.id), 'relations not asked for are not loaded');
});

test('relations[0]=user&relations[1]=tags, relations=user,tags and relations[]=…&relations[]=… are the same', async () => {
  const spellings = ['relations[0]=user&relations[1]=tags', 'relations=user,tags', 'relations[]=user&relations[]=tags', 'relations=user&relations=tags'];
  const bodies = [];
  for (const query of spellings) {
    const res = await list(query);
    assert.is(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    const items = byId(res.body);
    assert.is(items.get(ann.id).user.id, ann.userId, query);
    assert.equal(names(items.get(ann.id).tags), ['blue', 'red'], query);
    assert.equal(names(items.get(bob.id).tags), ['blue'], query);
    assert.not.ok('skills' in items.get(ann.id));
    bodies.push(res.body);
  }
  for (const body of bodies.slice(1)) assert.equal(body, bodies[0]);
});

test('dot notation loads nested relations up to three levels, every level without hidden fields', async () => {
  const res = await list('relations[]=user.role&relations[]=skills');
  assert.is(res.status, 200, JSON.stringify(res.body));
  const items = byId(res.body);
  const role = await t.db('role').where({ id: items.get(ann.id).user.roleId }).first();
  assert.is(items.get(ann.id).user.role.name, role.name);
  assert.is(items.get(ann.id).user.role.tenantId, acme.tenantId);
  assert.equal(names(items.get(ann.id).skills), ['java']);
  assert.equal(items.get(bob.id).skills, []);

  const deep = await t.http.get('/api/organization?relations[]=employees.user.role').set(acme.auth);
  assert.is(deep.status, 200, JSON.stringify(deep.body));
  const org = deep.body.items.find((o: any) => o.id === acme.organizationId);
  assert.equal(sorted(org.employees.map((e: any) => e.id)), sorted([ann.id, bob.id]), 'the corrupt employee belongs to no organization of this tenant');
  for (const employee of org.employees) {
    assert.is(employee.user.tenantId, acme.tenantId);
    assert.not.ok('hash' in employee.user);
    assert.is(employee.user.role.tenantId, acme.tenantId);
  }
});

test('a relation deeper than 3 levels is a 400', async () => {
  await expect400('relations[]=organization.employees.user.role', ["relations: 'organization.employees.user.role' is deeper than 3 levels"]);
  await expect400('relations[]=user.role.x.y', ["relations: 'user.role.x.y' is deeper than 3 levels"]);
});

test('a relation outside the whitelist is a 400 naming it and the allowed ones', async () => {
  await expect400('relations[]=salary', [`relations: 'salary' is not allowed; allowed: ${ALLOWED}`]);
  await expect400('relations[]=user.salary', ["relations: 'user.salary' is not allowed; allowed after 'user': role"]);
  await expect400('relations[]=user.role.tenant', ["relations: 'user.role.tenant' is not allowed; allowed after 'user.role': none"]);
  await expect400('relations=user,salary,hash', [`relations: 'salary' is not allowed; allowed: ${ALLOWED}`, `relations: 'hash' is not allowed; allowed: ${ALLOWED}`]);
  await expect400('relations[a][b]=user', ['relations must be an array of strings']);
  const tags = await t.http.get('/api/tags?relations[]=employees').set(acme.auth);
  assert.is(tags.status, 400);
  assert.equal(tags.body, badRequestBody(["relations: 'employees' is not allowed; allowed: none"]));
});

test('loaded relations never include another tenant\'s rows, even through corrupt links', async () => {
  const res = await list('relations[]=tags&relations[]=skills&relations[]=user&relations[]=organization');
  assert.is(res.status, 200, JSON.stringify(res.body));
  const items = byId(res.body);
  const annItem = items.get(ann.id);
  assert.equal(names(annItem.tags), ['blue', 'red']);
  assert.equal(names(annItem.skills), ['java']);
  assert.not.ok(JSON.stringify(res.body).includes(foreignTag));
  assert.not.ok(JSON.stringify(res.body).includes(foreignSkill));
  const broken = items.get(corrupt);
  assert.is(broken.user, null, 'a user of another tenant is not loaded');
  assert.is(broken.organization, null, 'an organization of another tenant is not loaded');
  // The corrupt links are really there: the filtering happened in the query.
  const links = await t.db('tag_employee').where({ employeeId: ann.id }).pluck('tagId');
  assert.ok(links.includes(foreignTag));
});

test('filters through a relation never match another tenant\'s rows either', async () => {
  for (const query of [`where[tags][id]=${foreignTag}`, `tags[]=${foreignTag}`, `where[user][id]=${foreignUser}`, `where[organization][id]=${other.organizationId}`]) {
    const res = await list(query);
    assert.is(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    assert.equal(res.body, { items: [], total: 0 }, query);
  }
  const own = await list(`tags[]=${blue}`);
  assert.equal(sorted(ids(own.body)), sorted([ann.id, bob.id]));
});

test('the other tenant sees only its own links', async () => {
  const res = await list('relations[]=tags&relations[]=user', other);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.total, 1);
  const [zed] = res.body.items;
  assert.equal(zed.tags, []);
  assert.is(zed.user.id, foreignUser);
});

// Queries that read rows of the relation graph (a rate-limit or session store would not count).
const LIST_TABLES = /from "(employee|user|role|tag|skill|organization|tag_employee|skill_employee)"/;

async function queriesOf(run: () => Promise<unknown>) {
  const seen: Array<{ sql: string; bindings: unknown[] }> = [];
  const listener = (q: { sql: string; bindings?: unknown[] }) => seen.push({ sql: q.sql, bindings: q.bindings ?? [] });
  t.db.on('query', listener);
  try {
    await run();
  } finally {
    t.db.removeListener('query', listener);
  }
  return seen.filter((q) => LIST_TABLES.test(q.sql));
}

test('relations are read in the page\'s own statement, whatever the rows, relations and levels', async () => {
  const ALL = 'relations[]=user.role&relations[]=organization&relations[]=tags&relations[]=skills&take=50';
  const counts: number[] = [];
  for (const size of [2, 12]) {
    const owner = await newTenant(t, `Batch ${size}`);
    const rows = await insertEmployees(t, owner, Array.from({ length: size }, () => ({})));
    const tagIds = await insertTags(t, owner, ['a', 'b']);
    const skillIds = await insertSkills(t, owner, ['s']);
    await link(t, 'tag_employee', 'employeeId', 'tagId', rows.flatMap((r) => tagIds.map((tag) => [r.id, tag] as [string, string])));
    await link(t, 'skill_employee', 'employeeId', 'skillId', rows.map((r) => [r.id, skillIds[0]]));
    let body: any;
    const queries = await queriesOf(async () => {
      const res = await list(ALL, owner);
      assert.is(res.status, 200, JSON.stringify(res.body));
      body = res.body;
    });
    assert.is(body.total, size);
    assert.ok(body.items.every((item: any) => item.tags.length === 2 && item.skills.length === 1 && item.user.role.name === 'EMPLOYEE'));
    // One statement: the page, its count and every relation (user.role nested in user) subqueries of it.
    assert.is(queries.length, 1, JSON.stringify(queries.map((q) => q.sql)));
    assert.match(queries[0].sql, ' as "role" from "user" as ');
    for (const relation of ['user', 'organization', 'tags', 'skills']) assert.match(queries[0].sql, `) as "@row") as "${relation}"`);
    counts.push(queries.length);
  }
  assert.is(counts[0], counts[1]);
});

test('a list costs its page and count in one statement (an empty page after a skip counts again), and no client value is written into the SQL', async () => {
  const marker = `Zq'x;--${Date.now()}`;
  const query = [
    `where[lastName]=${encodeURIComponent(marker)}`,
    `where[user][email]=${encodeURIComponent(`${marker}@example.com`)}`,
    `search=${encodeURIComponent(marker)}`,
    'startDate=2026-01-01&endDate=2026-12-31',
    `tags[]=${blue}`,
    'order[firstName]=ASC&take=7&skip=3',
    'relations[]=tags',
  ].join('&');
  const queries = await queriesOf(async () => {
    const res = await list(query);
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body, { items: [], total: 0 });
  });
  // Nothing matched, so no relation is loaded: the page and its count in one statement, and, the
  // page being empty after a skip (no row to carry the count), the count alone.
  assert.is(queries.length, 2, JSON.stringify(queries.map((q) => q.sql)));
  assert.match(queries[0].sql, ', (select count(*) from (select 1 from "employee" where ');
  assert.match(queries[1].sql, /^select count\(\*\) as "total" from \(select 1 from "employee" where /);
  for (const q of queries) {
    assert.not.ok(q.sql.includes('Zq'), q.sql);
    assert.not.ok(q.sql.includes(blue), q.sql);
    assert.not.ok(q.sql.includes('2026-'), q.sql);
    assert.ok(q.bindings.some((b) => typeof b === 'string' && b.includes(marker)), 'the value is bound');
    assert.ok(q.bindings.flat().includes(blue), 'the tag ids are bound (as one array)');
    assert.ok(q.bindings.includes(acme.tenantId), 'every query carries the tenant');
  }
  const [page] = queries;
  // take (not the default page size) and skip are bound.
  assert.ok(page.bindings.includes(7) && page.bindings.includes(3), 'take and skip are bound');
});

test('GET /api/employee/:id accepts relations in every spelling', async () => {
  for (const query of ['relations[]=user&relations[]=tags', 'relations=user,tags', 'relations[0]=user&relations[1]=tags']) {
    const res = await t.http.get(`/api/employee/${ann.id}?${query}`).set(acme.auth);
    assert.is(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    assert.is(res.body.id, ann.id);
    assert.is(res.body.user.id, ann.userId);
    assert.not.ok('hash' in res.body.user);
    assert.equal(names(res.body.tags), ['blue', 'red'], 'the foreign tag is filtered out');
  }
  const plain = await t.http.get(`/api/employee/${ann.id}`).set(acme.auth);
  assert.is(plain.status, 200);
  assert.not.ok('user' in plain.body);
});

test('a single read refuses other list parameters and bad relations', async () => {
  const take = await t.http.get(`/api/employee/${ann.id}?take=1`).set(acme.auth);
  assert.is(take.status, 400);
  assert.equal(take.body, badRequestBody(['take is not a supported parameter when reading one record; supported: relations, select']));
  const several = await t.http.get(`/api/employee/${ann.id}?where[isActive]=true&order[firstName]=ASC`).set(acme.auth);
  assert.equal(several.body, badRequestBody([
    'where is not a supported parameter when reading one record; supported: relations, select',
    'order is not a supported parameter when reading one record; supported: relations, select',
  ]));
  const salary = await t.http.get(`/api/employee/${ann.id}?relations[]=salary`).set(acme.auth);
  assert.is(salary.status, 400);
  assert.equal(salary.body, badRequestBody([`relations: 'salary' is not allowed; allowed: ${ALLOWED}`]));
  const deep = await t.http.get(`/api/employee/${ann.id}?relations[]=organization.employees.user.role`).set(acme.auth);
  assert.equal(deep.body, badRequestBody(["relations: 'organization.employees.user.role' is deeper than 3 levels"]));
  const foreign = await t.http.get(`/api/employee/${ann.id}?relations[]=user`).set(other.auth);
  assert.is(foreign.status, 404);
  assert.equal(foreign.body, { statusCode: 404, message: 'The requested record was not found', error: 'Not Found' });
});

test.run();
