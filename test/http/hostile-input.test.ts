// Inputs built to hurt or to slip past a check: many names, prototype keys, odd spellings of
// paths, dates and numbers at the edges. Each gets a precise 4xx (or the right value), never a
// 500, a hang, a huge answer or a filter silently dropped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_MESSAGES } from '../../engine/errors.js';
import { mapDatabaseError } from '../../engine/db/errors.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
let admin: Session & { organizationId: string };

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t);
});
test.after(async () => {
  await t?.close();
});

const names = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
const tagCount = async () => Number((await t.db('tag').where('tenantId', admin.tenantId).count({ n: '*' }))[0].n);

test('many relation names, order fields or where keys are refused before each is looked at', async () => {
  const relations = await t.http.post('/api/tags/search').set(admin.auth).send({ relations: names(20_000, 'r').join(',') });
  assertError(relations, 400, 'relations must not name more than 50 relations');
  assert.is(relations.body.message.length, 1);
  const order = Object.fromEntries(names(60, 'f').map((f) => [f, 'ASC']));
  assertError(await t.http.post('/api/tags/search').set(admin.auth).send({ order }), 400, 'order must not name more than 50 fields');
  const where = Object.fromEntries(names(60, 'f').map((f) => [f, 'x']));
  assertError(await t.http.post('/api/tags/search').set(admin.auth).send({ where }), 400, 'where must not name more than 50 fields');
  // Repeats of one name count once.
  const repeated = await t.http.post('/api/employee/search').set(admin.auth).send({ relations: Array(500).fill('user') });
  assert.is(repeated.status, 200, JSON.stringify(repeated.body));
});

test(`a 400 lists at most ${MAX_MESSAGES} problems and says how many more there were`, async () => {
  const body = Object.fromEntries(names(120, 'junk').map((f) => [f, 1]));
  const res = await t.http.post('/api/tags').set(admin.auth).send({ name: 'n', color: 'red', ...body });
  assertError(res, 400, 'property junk0 should not exist', '… and 70 more problems');
  assert.is(res.body.message.length, MAX_MESSAGES + 1);
  assert.is(await tagCount(), 0);
});

test('an empty nested where is a 400, not a filter that matches everything', async () => {
  assertError(await t.http.post('/api/employee/search').set(admin.auth).send({ where: { user: {} } }), 400, 'where.user should not be empty');
});

test('take: a huge number in a search body is clamped like a huge digit string in a query', async () => {
  for (const body of [{ take: 1e20 }, { findInput: { take: 1e20 } }]) {
    const res = await t.http.post('/api/tags/search').set(admin.auth).send(body);
    assert.is(res.status, 200, JSON.stringify(res.body));
  }
  assertError(await t.http.post('/api/tags/search').set(admin.auth).send({ take: 2.5 }), 400, 'take must be an integer number');
});

test('__proto__ in a query string or a body is refused, never dropped', async () => {
  assertError(await t.http.get('/api/tags?__proto__[x]=1').set(admin.auth), 400, 'query parameter names must not contain __proto__');
  assertError(await t.http.get('/api/tags?where[__proto__][isSystem]=false').set(admin.auth), 400, 'query parameter names must not contain __proto__');
  assertError(await t.http.get('/api/tags?where%5B__proto__%5D%5BisSystem%5D=false').set(admin.auth), 400, 'query parameter names must not contain __proto__');
  // Other names of Object.prototype are plain unknown names.
  assertError(await t.http.get('/api/tags?where[constructor]=x').set(admin.auth), 400, /^where: 'constructor' is not filterable/);
  assertError(await t.http.get('/api/tags?order[toString]=ASC').set(admin.auth), 400, /^order: 'toString' is not sortable/);
  // A value may say __proto__: only names are refused.
  assert.is((await t.http.get('/api/tags?where[name]=__proto__').set(admin.auth)).status, 200);
  const poisoned = await t.http.post('/api/tags').set(admin.auth).set('content-type', 'application/json')
    .send('{"name":"n","color":"red","__proto__":{"isSystem":true}}');
  assertError(poisoned, 400, 'body must not contain the key __proto__');
  assert.is(await tagCount(), 0);
});

test('paths are case-sensitive: /API/… is not the API and reaches no route, with a token or without', async () => {
  assertError(await t.http.get('/API/tags').set(admin.auth), 404, 'Cannot GET /API/tags');
  assertError(await t.http.get('/API/tags'), 404, 'Cannot GET /API/tags');
  assertError(await t.http.post('/API/auth/login').send({ email: admin.email, password: 'x' }), 404);
});

test('dates at the edges: years 1000 to 9999, ISO offsets of hours only', async () => {
  const user = (await t.http.post('/api/auth/login').send({ email: admin.email, password: 'Str0ng!Passw0rd' })).body.user;
  const make = (startedWorkOn: string) =>
    t.http.post('/api/employee').set(admin.auth).send({ firstName: 'E', lastName: startedWorkOn, userId: user.id, startedWorkOn });
  const early = await make('1000-01-01');
  assert.is(early.status, 201, JSON.stringify(early.body));
  assert.is(early.body.startedWorkOn, '1000-01-01T00:00:00.000Z');
  const stored = await t.db('employee').where('id', early.body.id).first();
  assert.is(new Date(stored.startedWorkOn).toISOString(), '1000-01-01T00:00:00.000Z');
  await t.http.delete(`/api/employee/${early.body.id}`).set(admin.auth);
  assertError(await make('0050-03-01'), 400, 'startedWorkOn must be a valid ISO 8601 date string');
  assertError(await make('0999-12-31T23:59:59Z'), 400, 'startedWorkOn must be a valid ISO 8601 date string');
  const offset = await make('2026-01-05T10:00:00+05');
  assert.is(offset.status, 201, JSON.stringify(offset.body));
  assert.is(offset.body.startedWorkOn, '2026-01-05T05:00:00.000Z');
  await t.http.delete(`/api/employee/${offset.body.id}`).set(admin.auth);
  assertError(await make('9999-12-31T23:00:00-05:00'), 400, 'startedWorkOn must be a valid ISO 8601 date string');
  const range = await t.http.get('/api/employee?startDate=1000-01-01&endDate=9999-12-31').set(admin.auth);
  assert.is(range.status, 200, JSON.stringify(range.body));
  assertError(await t.http.get('/api/employee?startDate=0099-12-31').set(admin.auth), 400, 'startDate must be a valid ISO 8601 date string');
});

test('integers outside PostgreSQL integer range are refused at validation, naming the field', async () => {
  const user = (await t.http.post('/api/auth/login').send({ email: admin.email, password: 'Str0ng!Passw0rd' })).body.user;
  const res = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'E', lastName: 'Rate', userId: user.id, billRateValue: 3_000_000_000 });
  assertError(res, 400, 'billRateValue must not be greater than 2147483647');
  assert.is(Number((await t.db('employee').where('tenantId', admin.tenantId).count({ n: '*' }))[0].n), 0);
});

test('a password longer than the rule allows gets one message', async () => {
  const long = `Aa1!${'x'.repeat(200)}`;
  const res = await t.http.post('/api/auth/register').send({ user: { email: 'long@example.com' }, password: long });
  assertError(res, 400, 'password must be shorter than or equal to 128 characters');
  assert.is(res.body.message.length, 1);
  assert.not.ok(await t.db('user').where('email', 'long@example.com').first());
});

test('a pool with no free connection in time is a 503, like a database that refuses connections', () => {
  const timeout = Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), { name: 'KnexTimeoutError' });
  const mapped = mapDatabaseError(timeout);
  assert.is(mapped?.status, 503);
  assert.is(mapped?.messages, 'The database is not available');
});

test.run();
