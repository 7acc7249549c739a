// Every failure is {statusCode, message, error}; validation messages are NestJS-style
// sentences; bodies are JSON of at most 1 MiB; database errors become 4xx without leaking SQL.
import type { Knex } from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CONCURRENT_WRITE, mapDatabaseError } from '../../engine/db/errors.js';
import { onceMoreIfUndone, transactionOnceMoreIfUndone } from '../../engine/db/undone.js';
import { newTenant, uniqueEmail, PASSWORD, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertNoLeak, assertNotFound } from '../helpers/error-envelope.js';

let t: TestApp;
let admin: Session & { organizationId: string };
let employeeId: string;
let tagId: string;

const count = async (table: string) => Number((await t.db(table).count({ n: '*' }))[0].n);

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t);
  const employee = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Ann', lastName: 'Lee', userId: admin.userId });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  employeeId = employee.body.id;
  const tag = await t.http.post('/api/tags').set(admin.auth).send({ name: 'Urgent', color: 'red' });
  assert.is(tag.status, 201, JSON.stringify(tag.body));
  tagId = tag.body.id;
});
test.after(async () => {
  await t.close();
});

test('field rules give one NestJS-style sentence per broken rule, and nothing is written', async () => {
  const before = await count('employee');
  const res = await t.http.post('/api/employee').set(admin.auth).send({
    firstName: '',
    lastName: 42,
    userId: 'not-a-uuid',
    payPeriod: 'DAILY',
    billRateValue: 1.5,
    startedWorkOn: '2026-02-31',
    isActive: 'yes',
    foo: 1,
  });
  assertError(
    res,
    400,
    'firstName should not be empty',
    'lastName must be a string',
    'userId must be a UUID',
    'payPeriod must be one of the following values: NONE, BI_WEEKLY, WEEKLY, TWICE_PER_MONTH, MONTHLY',
    'billRateValue must be an integer number',
    'startedWorkOn must be a valid ISO 8601 date string',
    'isActive must be a boolean value',
    'property foo should not exist',
  );
  assert.is(res.body.message.length, 8, JSON.stringify(res.body.message));
  assert.is(await count('employee'), before);
});

test('a missing required field "should not be empty"; a number bound is named', async () => {
  const res = await t.http.post('/api/employee').set(admin.auth).send({ lastName: 'Lee', billRateValue: -1 });
  assertError(res, 400, 'firstName should not be empty', 'userId should not be empty', 'billRateValue must not be less than 0');
  const tag = await t.http.post('/api/tags').set(admin.auth).send({ name: 'x'.repeat(256), color: 'red' });
  assertError(tag, 400, 'name must be shorter than or equal to 255 characters');
});

test('nested body values are named by their path', async () => {
  const res = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'A', lastName: 'B', userId: admin.userId, tags: [{ id: 'nope' }, {}], tagIds: 'x' });
  assertError(res, 400, 'tags.0.id must be a UUID', 'tags.1.id should not be empty', 'tagIds must be an array');
});

test('an invalid UUID in a path is a 400 "id must be a UUID" for every method', async () => {
  for (const id of ['abc', '123', 'ec6a38d7-f12e-46ed-ac0d-7fc84aab587', "1' or '1'='1"]) {
    const path = `/api/employee/${encodeURIComponent(id)}`;
    assertError(await t.http.get(path).set(admin.auth), 400, 'id must be a UUID');
    assertError(await t.http.put(path).set(admin.auth).send({ firstName: 'A', lastName: 'B', userId: admin.userId }), 400, 'id must be a UUID');
    assertError(await t.http.patch(path).set(admin.auth).send({ firstName: 'A' }), 400, 'id must be a UUID');
    assertError(await t.http.delete(path).set(admin.auth), 400, 'id must be a UUID');
  }
  assertError(await t.http.get('/api/tags/not-a-uuid').set(admin.auth), 400, 'id must be a UUID');
  assert.is(await count('employee'), 1);
});

test('an id that does not exist is a 404 for every method', async () => {
  const missing = '0b7e6d3c-52f3-4c8e-9a51-7f1f2a3b4c5d';
  const path = `/api/employee/${missing}`;
  assertNotFound(await t.http.get(path).set(admin.auth));
  assertNotFound(await t.http.put(path).set(admin.auth).send({ firstName: 'A', lastName: 'B', userId: admin.userId }));
  assertNotFound(await t.http.patch(path).set(admin.auth).send({ firstName: 'A' }));
  assertNotFound(await t.http.delete(path).set(admin.auth));
});

test('malformed JSON is a 400 and nothing is written', async () => {
  const before = await count('tag');
  for (const raw of ['{"name":', '{name: "x"}', "{'name':'x'}", '{"name":"x",}']) {
    const res = await t.http.post('/api/tags').set(admin.auth).set('Content-Type', 'application/json').send(raw);
    assertError(res, 400, 'Request body is not valid JSON');
  }
  const poisoned = '{"__proto__":{"isSystem":true},"name":"p","color":"c"}';
  assertError(await t.http.post('/api/tags').set(admin.auth).set('Content-Type', 'application/json').send(poisoned), 400, 'body must not contain the key __proto__');
  assert.is(await count('tag'), before);
});

test('a JSON array or primitive body is a 400', async () => {
  for (const raw of ['[{"name":"x","color":"y"}]', '42', '"text"', 'true', 'null']) {
    const res = await t.http.post('/api/tags').set(admin.auth).set('Content-Type', 'application/json').send(raw);
    assertError(res, 400, 'body must be an object');
    const patch = await t.http.patch(`/api/tags/${tagId}`).set(admin.auth).set('Content-Type', 'application/json').send(raw);
    assertError(patch, 400, 'body must be an object');
  }
  assert.is((await t.db('tag').where({ id: tagId }).first()).name, 'Urgent');
});

test('a body over 1 MiB is a 413 and nothing is written', async () => {
  const before = await count('tag');
  const res = await t.http.post('/api/tags').set(admin.auth).send({ name: 'big', color: 'red', description: 'x'.repeat(1024 * 1024) });
  assertError(res, 413);
  assert.is(await count('tag'), before);
});

test('a body just under the limit is read (the limit is the body, not a smaller default)', async () => {
  // 900 KiB: over the 100 KiB default of the body parser, under our 1 MiB.
  const res = await t.http.post('/api/tags').set(admin.auth).send({ name: 'x'.repeat(256), color: 'red', description: 'y'.repeat(900 * 1024) });
  assertError(res, 400, 'name must be shorter than or equal to 255 characters', 'description must be shorter than or equal to 1000 characters');
});

test('a body that is not JSON is a 415 and nothing is written', async () => {
  const before = await count('tag');
  const plain = await t.http.post('/api/tags').set(admin.auth).set('Content-Type', 'text/plain').send('{"name":"x","color":"y"}');
  assertError(plain, 415);
  const form = await t.http.post('/api/tags').set(admin.auth).type('form').send({ name: 'x', color: 'y' });
  assertError(form, 415);
  const xml = await t.http.put(`/api/tags/${tagId}`).set(admin.auth).set('Content-Type', 'application/xml').send('<tag/>');
  assertError(xml, 415);
  const none = await t.http.patch(`/api/tags/${tagId}`).set(admin.auth).set('Content-Type', '').send(Buffer.from('{"name":"n"}'));
  assertError(none, 415);
  assert.is(await count('tag'), before);
  assert.is((await t.db('tag').where({ id: tagId }).first()).name, 'Urgent');
});

test('every JSON media type is parsed, not only application/json', async () => {
  const res = await t.http.patch(`/api/tags/${tagId}`).set(admin.auth).set('Content-Type', 'application/merge-patch+json').send('{"description":"from merge-patch"}');
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is((await t.db('tag').where({ id: tagId }).first()).description, 'from merge-patch');
  const charset = await t.http.patch(`/api/tags/${tagId}`).set(admin.auth).set('Content-Type', 'application/json; charset=utf-8').send('{"description":"é"}');
  assert.is(charset.status, 200, JSON.stringify(charset.body));
  assert.is((await t.db('tag').where({ id: tagId }).first()).description, 'é');
});

test('a unique violation is a 409 with one clear sentence', async () => {
  const tag = await t.http.post('/api/tags').set(admin.auth).send({ name: 'Urgent', color: 'blue' });
  assertError(tag, 409, 'A tag with this name already exists in this organization, or in the tenant for a tag of no organization');
  const employee = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'B', lastName: 'C', userId: admin.userId });
  assertError(employee, 409, 'This user already has an employee record in this organization');
  const email = await t.http.post('/api/auth/register').send({ user: { email: admin.email }, password: PASSWORD });
  assertError(email, 409);
  assert.is(await count('employee'), 1);
});

test('deleting a record that others still reference is a 400 naming them, and nothing is deleted', async () => {
  const res = await t.http.delete(`/api/organization/${admin.organizationId}`).set(admin.auth);
  assertError(res, 400, /employee/);
  assert.ok(await t.db('organization').where({ id: admin.organizationId }).first());
  assert.is(await count('employee'), 1);
});

test('a null for a field that must have a value is a 400 from validation, naming the field', async () => {
  const res = await t.http.patch(`/api/employee/${employeeId}`).set(admin.auth).send({ isActive: null });
  assertError(res, 400, 'isActive must be a boolean value');
  assert.is((await t.db('employee').where({ id: employeeId }).first()).isActive, true);
});

test('a number out of the column range is a 400, not a 500', async () => {
  const res = await t.http.patch(`/api/employee/${employeeId}`).set(admin.auth).send({ billRateValue: 99_999_999_999 });
  assertError(res, 400);
  assert.is((await t.db('employee').where({ id: employeeId }).first()).billRateValue, null);
});

test('a NUL character anywhere, or a date the database cannot hold, is a 400, not a 500', async () => {
  const before = await count('tag');
  assertError(await t.http.post('/api/tags').set(admin.auth).send({ name: 'a\u0000b', color: 'red' }), 400, /cannot be stored/);
  assertError(await t.http.get('/api/tags?where[name]=a%00b').set(admin.auth), 400, /cannot be stored/);
  assertError(await t.http.get('/api/tags?search=%00').set(admin.auth), 400, /cannot be stored/);
  assertError(await t.http.post('/api/auth/login').send({ email: 'a\u0000@example.com', password: PASSWORD }), 400);
  assertError(await t.http.post('/api/auth/register').send({ user: { email: uniqueEmail(), firstName: 'Nul\u0000' }, password: PASSWORD }), 400);
  assert.is(await count('tag'), before);
  const far = await t.http.patch(`/api/employee/${employeeId}`).set(admin.auth).send({ startedWorkOn: '9999-12-31T23:59:59-14:00' });
  assertError(far, 400);
  assert.is((await t.db('employee').where({ id: employeeId }).first()).startedWorkOn, null);
});

test('an unknown route is a 404 envelope; a known path with another method is a 405 envelope', async () => {
  assertError(await t.http.get('/api/no-such-resource').set(admin.auth), 404, 'Cannot GET /api/no-such-resource');
  assertError(await t.http.post('/api/employee/a/b/c').set(admin.auth).send({}), 404);
  assertError(await t.http.put('/api/employee').set(admin.auth).send({}), 405);
  assertError(await t.http.delete('/api/tags').set(admin.auth), 405);
  assertError(await t.http.patch('/api/organization').set(admin.auth).send({}), 405);
});

test('a 405 names the allowed methods in Allow', async () => {
  const res = await t.http.put('/api/employee').set(admin.auth).send({});
  assert.is(res.status, 405);
  assert.match(String(res.headers.allow), /GET/);
  assert.match(String(res.headers.allow), /POST/);
});

// The engine checks references before it writes, so some database errors cannot be reached
// through HTTP in a test. These are raised by the real database and mapped as a request would be.
test('real database errors map to 4xx answers that name fields, never SQL', async () => {
  const raised = async (work: () => PromiseLike<unknown>) => {
    try {
      await work();
    } catch (err) {
      return err;
    }
    throw new Error('the database accepted what it should refuse');
  };
  const answer = (err: unknown) => {
    const http = mapDatabaseError(err);
    assert.ok(http, `unmapped: ${String(err)}`);
    return { status: http.status, messages: ([] as string[]).concat(http.messages) };
  };
  const base = { tenantId: admin.tenantId, organizationId: admin.organizationId, firstName: 'X', lastName: 'Y' };

  const fk = answer(await raised(() => t.db('employee').insert({ ...base, userId: '0b7e6d3c-52f3-4c8e-9a51-7f1f2a3b4c5d' })));
  assert.equal(fk, { status: 400, messages: ['userId must reference an existing record'] });

  const notNull = answer(await raised(() => t.db('employee').insert({ ...base, userId: admin.userId, firstName: null })));
  assert.equal(notNull, { status: 400, messages: ['firstName should not be empty'] });

  const unique = answer(await raised(() => t.db('employee').insert({ ...base, userId: admin.userId })));
  assert.is(unique.status, 409);
  assert.match(unique.messages[0], /userId and organizationId already exists/);

  const text = answer(await raised(() => t.db('employee').where({ id: 'not-a-uuid' }).first()));
  assert.is(text.status, 400);

  const restrict = answer(await raised(() => t.db('user').where({ id: admin.userId }).delete()));
  assert.is(restrict.status, 400);
  assert.match(restrict.messages[0], /employee/);

  // Objection wraps the driver's error (DataError, UniqueViolationError…): mapped all the same.
  const model = t.engine.registry.get('employee')!.model;
  const wrapped = answer(await raised(() => model.query(t.db).where('id', 'not-a-uuid').first()));
  assert.equal(wrapped, text);
  const wrappedUnique = answer(await raised(() => model.query(t.db).insert({ ...base, userId: admin.userId })));
  assert.equal(wrappedUnique, unique);

  for (const http of [fk, notNull, unique, text, restrict, wrapped]) assertNoLeak({ status: http.status, body: http, headers: {} });
});

// A deadlock needs two PostgreSQL connections (conditional-requests.test.ts has the real ones);
// here the database itself raises the codes PostgreSQL gives a deadlock's victim and a
// serializable conflict, on either database, as the retry and the mapping meet them.
test('a write the database undid runs once more, then is the 503 to send again; other errors are not retried', async () => {
  const undone = (code: string, db = t.db) => db.raw(`do $$ begin raise exception 'undone' using errcode = '${code}'; end $$`);
  for (const code of ['40P01', '40001']) {
    let runs = 0;
    const name = `retried-${code}`;
    // Undone once, written the second time: one row.
    const written = await onceMoreIfUndone(async () => {
      runs += 1;
      return t.db.transaction(async (trx) => {
        await trx('tag').insert({ tenantId: admin.tenantId, organizationId: admin.organizationId, name, color: 'blue' });
        if (runs === 1) await undone(code, trx);
        return 'written';
      });
    });
    assert.is(written, 'written');
    assert.is(runs, 2);
    assert.is(Number((await t.db('tag').where({ name }).count({ n: '*' }))[0].n), 1, 'the undone attempt left nothing');

    // Undone every time: two runs, then the error, which is the 503.
    runs = 0;
    const twice = await onceMoreIfUndone(() => {
      runs += 1;
      return undone(code);
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    assert.is(runs, 2);
    const http = mapDatabaseError(twice);
    assert.equal([http?.status, http?.messages], [503, CONCURRENT_WRITE]);
  }
  // Any other failure is the caller's at once.
  let runs = 0;
  const other = await onceMoreIfUndone(() => {
    runs += 1;
    return t.db.raw(`do $$ begin raise exception 'taken' using errcode = '23505'; end $$`);
  }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.is(runs, 1);
  assert.is(mapDatabaseError(other)?.status, 409);
});

test('a transaction undone once runs again; inside another one it is a part, run once and left to the whole', async () => {
  const undone = (trx: Knex.Transaction) => trx.raw(`do $$ begin raise exception 'undone' using errcode = '40P01'; end $$`);
  let runs = 0;
  const name = 'retried-transaction';
  const written = await transactionOnceMoreIfUndone(t.db, async (trx) => {
    runs += 1;
    await trx('tag').insert({ tenantId: admin.tenantId, organizationId: admin.organizationId, name, color: 'blue' });
    if (runs === 1) await undone(trx);
    return 'written';
  });
  assert.equal([written, runs], ['written', 2]);
  assert.is(Number((await t.db('tag').where({ name }).count({ n: '*' }))[0].n), 1);

  runs = 0;
  const part = await t.db
    .transaction((outer) =>
      transactionOnceMoreIfUndone(outer, async (trx) => {
        runs += 1;
        await undone(trx);
      }),
    )
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  assert.is(runs, 1, 'a part of a transaction is not run again on its own');
  assert.is(mapDatabaseError(part)?.status, 503);
});

test('registration bodies follow the same envelope', async () => {
  const res = await t.http.post('/api/auth/register').send({ user: { email: uniqueEmail(), firstName: 7 }, password: PASSWORD, extra: true });
  assertError(res, 400, 'user.firstName must be a string', 'property extra should not exist');
});

test.run();
