// select[] on lists, search bodies and GET by id: only the fields named and id are answered, a
// related record is narrowed (and loaded) by path.field, hidden or unknown fields are 400s, and
// the statement reads only the columns answered (plus the keys relations need).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';
import { badRequestBody, insertEmployees, type EmployeeRow } from '../helpers/list-data.js';

let t: TestApp;
type Tenant = Awaited<ReturnType<typeof newTenant>>;
let acme: Tenant;
let ann: EmployeeRow;
let email: string;
/** The SQL text of every statement the app ran while `during` ran. */
let statements: string[] = [];

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  [ann] = await insertEmployees(t, acme, [{ firstName: 'Ann', lastName: 'Lee', billRateValue: 10 }]);
  email = (await t.db('user').where({ id: ann.userId }).first()).email;
  t.db.on('query', (q: { sql: string }) => statements.push(q.sql));
});
test.after(async () => {
  await t.close();
});

const get = (path: string) => t.http.get(path).set(acme.auth);

test('a list answers only the fields named, and id', async () => {
  const res = await get(`/api/employee?select[]=firstName&select[]=lastName&where[id]=${ann.id}`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, { items: [{ id: ann.id, firstName: 'Ann', lastName: 'Lee' }], total: 1 });
  const comma = await get(`/api/employee?select=firstName,billRateValue&where[id]=${ann.id}`);
  assert.equal(comma.body.items, [{ id: ann.id, firstName: 'Ann', billRateValue: 10 }]);
});

test('path.field narrows a related record and loads it; its key column is read but not answered', async () => {
  const res = await get(`/api/employee?select[]=firstName&select[]=user.email&where[id]=${ann.id}`);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.items, [{ id: ann.id, firstName: 'Ann', user: { id: ann.userId, email } }]);
  // relations[] named beside select: the relation not narrowed is whole.
  const both = await get(`/api/employee?select[]=lastName&relations[]=user&where[id]=${ann.id}`);
  assert.equal(Object.keys(both.body.items[0]).sort(), ['id', 'lastName', 'user']);
  assert.is(both.body.items[0].user.email, email);
  assert.ok('firstName' in both.body.items[0].user && !('hash' in both.body.items[0].user));
});

test('a search body takes "select": [...]; GET by id takes select[] too', async () => {
  const searched = await t.http.post('/api/employee/search').set(acme.auth).send({ select: ['lastName', 'user.email'], where: { id: ann.id } });
  assert.is(searched.status, 200, JSON.stringify(searched.body));
  assert.equal(searched.body.items, [{ id: ann.id, lastName: 'Lee', user: { id: ann.userId, email } }]);
  const one = await get(`/api/employee/${ann.id}?select[]=billRateValue`);
  assert.is(one.status, 200, JSON.stringify(one.body));
  assert.equal(one.body, { id: ann.id, billRateValue: 10 });
});

test('the statement reads only the columns answered (and the key a relation needs)', async () => {
  statements = [];
  await get(`/api/employee?select[]=firstName&select[]=user.email&where[id]=${ann.id}`);
  // One statement: the page and, over it, the user's subquery (its JSON built by the database).
  const read = statements.filter((s) => s.includes('"employee"') || s.includes('"user"'));
  assert.is(read.length, 1, JSON.stringify(read));
  const [statement] = read;
  assert.ok(statement.startsWith('select "@page".*, (select to_json("@row") from (select "@r0"."id", "@r0"."email" from "user" as "@r0" where "@r0"."id" = "@page"."userId" and '), statement);
  const page = statement.slice(statement.indexOf(' from (select "employee".') + ' from ('.length);
  // Then the order's time value as text, for the next cursor, the table's change mark and the list's count (none answered).
  assert.is(page.slice(0, page.indexOf(', (select coalesce(sum("n")')), 'select "employee"."id", "employee"."firstName", "employee"."userId", "employee"."createdAt"::text as "@k0"');
  assert.ok(page.includes(') as "matches") end as "@total" from "employee" where '), page);
});

test('refused: an unknown field, a hidden one, a path that is not a relation, a field not of the related record', async () => {
  const res = await get('/api/employee?select[]=salary&select[]=user.hash&select[]=boss.name&select[]=user.nothing');
  assert.is(res.status, 400);
  const message: string[] = res.body.message;
  assert.is(message.length, 4, JSON.stringify(message));
  assert.match(message[0], /^select: 'salary' is not a field of employee; selectable: id, tenantId, /);
  assert.match(message[1], /^select: 'user.hash' is not a field of user; selectable: user.id, /);
  assert.ok(!message[1].includes('user.hash,'), 'a hidden field is never offered');
  assert.match(message[2], /^select: 'boss.name' names no relation of employee that relations\[\] takes \(user, /);
  assert.match(message[3], /^select: 'user.nothing' is not a field of user/);
  const body = await t.http.post('/api/employee/search').set(acme.auth).send({ select: [1] });
  assert.equal([body.status, body.body], [400, badRequestBody(['select must be an array of strings'])]);
  const one = await get(`/api/employee/${ann.id}?select[]=hash`);
  assert.is(one.status, 400);
  const other = await get(`/api/employee/${ann.id}?take=1`);
  assert.equal(other.body.message, ['take is not a supported parameter when reading one record; supported: relations, select']);
});

test.run();
