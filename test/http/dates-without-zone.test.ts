// ISO 8601 date-times without a zone: in a body's date and timestamp fields and
// in startDate/endDate they are read as UTC, as a date-only value is midnight UTC; what cannot be
// a date is a 400 naming the field. The document says so, with a pattern that every accepted
// value matches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
let admin: Session & { organizationId: string };
let employeeId: string;

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t, 'Dates');
  const employee = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Dee', lastName: 'Ate', userId: admin.userId });
  assert.is(employee.status, 201, JSON.stringify(employee.body));
  employeeId = employee.body.id;
});
test.after(async () => {
  await t?.close();
});

const storedAt = async (table: string, id: string, column: string) => new Date((await t.db(table).where({ id }).first())[column]).toISOString();

test('body fields: a date-time without a zone is UTC, with or without seconds and fractions, T or a space', async () => {
  const res = await t.http.post('/api/time-log').set(admin.auth).send({ employeeId, startedAt: '2026-01-05T10:00:00', stoppedAt: '2026-01-05 11:30' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.startedAt, '2026-01-05T10:00:00.000Z');
  assert.is(res.body.stoppedAt, '2026-01-05T11:30:00.000Z');
  assert.is(res.body.duration, 5400);
  assert.is(await storedAt('time_log', res.body.id, 'startedAt'), '2026-01-05T10:00:00.000Z');

  const patched = await t.http.patch(`/api/time-log/${res.body.id}`).set(admin.auth).send({ stoppedAt: '2026-01-05T12:00:00.250' });
  assert.is(patched.status, 200, JSON.stringify(patched.body));
  assert.is(patched.body.stoppedAt, '2026-01-05T12:00:00.250Z');
  // A date field takes a time too; a date alone keeps its meaning (midnight UTC).
  const employee = await t.http.patch(`/api/employee/${employeeId}`).set(admin.auth).send({ startedWorkOn: '2026-02-01T09:15:00', endWork: '2026-03-01' });
  assert.is(employee.status, 200, JSON.stringify(employee.body));
  assert.equal([employee.body.startedWorkOn, employee.body.endWork], ['2026-02-01T09:15:00.000Z', '2026-03-01T00:00:00.000Z']);
  // With a zone, the instant the zone says, as before.
  const zoned = await t.http.patch(`/api/employee/${employeeId}`).set(admin.auth).send({ endWork: '2026-03-01T10:30:00+02:00' });
  assert.is(zoned.body.endWork, '2026-03-01T08:30:00.000Z');
});

test('body fields: what is no date-time is a 400 naming the field, and nothing changes', async () => {
  const before = await storedAt('employee', employeeId, 'startedWorkOn');
  const overlong = `2026-01-05T10:00:00.${'1'.repeat(10_000)}Z`;
  for (const bad of ['2026-01-05T10', '2026-01-05T24:00:00', '2026-01-05T10:60', '2026-02-30T10:00:00', '2026-01-05T10:00:00+25', '0999-12-31T23:00:00', '2026-01-05T10:00:00ZZ', overlong]) {
    assertError(await t.http.patch(`/api/employee/${employeeId}`).set(admin.auth).send({ startedWorkOn: bad }), 400, 'startedWorkOn must be a valid ISO 8601 date string');
  }
  assert.is(await storedAt('employee', employeeId, 'startedWorkOn'), before);
});

test('body fields: the longest form (nanoseconds and a ±hh:mm offset, 35 characters) is a date', async () => {
  const longest = '2026-01-05T09:00:00.123456789+02:00';
  assert.is(longest.length, 35);
  const res = await t.http.patch(`/api/employee/${employeeId}`).set(admin.auth).send({ startedWorkOn: longest });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(await storedAt('employee', employeeId, 'startedWorkOn'), '2026-01-05T07:00:00.123Z');
});

test('startDate and endDate: without a zone, UTC; a date-only endDate still includes its whole day', async () => {
  const log = async (startedAt: string) => {
    const res = await t.http.post('/api/time-log').set(admin.auth).send({ employeeId, startedAt, stoppedAt: startedAt });
    assert.is(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const early = await log('2030-06-01T08:00:00Z');
  const late = await log('2030-06-01T18:00:00Z');
  const ids = async (query: string) => {
    const res = await t.http.get(`/api/time-log?${query}&order[startedAt]=ASC`).set(admin.auth);
    assert.is(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    return res.body.items.map((item: { id: string }) => item.id);
  };
  assert.equal(await ids('startDate=2030-06-01T12:00:00&endDate=2030-06-02'), [late]);
  assert.equal(await ids('startDate=2030-06-01T08:00&endDate=2030-06-01T08:00:00'), [early]);
  assert.equal(await ids('startDate=2030-06-01&endDate=2030-06-01'), [early, late]);
  // The same bounds written with a zone select the same records.
  assert.equal(await ids('startDate=2030-06-01T12:00:00Z&endDate=2030-06-02'), [late]);
  const count = await t.http.get('/api/time-log/count?startDate=2030-06-01T07:59:59&endDate=2030-06-01T18:00').set(admin.auth);
  assert.equal(count.body, { total: 2 });
  assertError(await t.http.get('/api/time-log?startDate=2030-06-01T12').set(admin.auth), 400, 'startDate must be a valid ISO 8601 date string');
  assertError(await t.http.get('/api/time-log?endDate=2030-06-01T25:00:00').set(admin.auth), 400, 'endDate must be a valid ISO 8601 date string');
  assertError(await t.http.get('/api/time-log?startDate=2030-06-01T12:00:00&endDate=2030-06-01T11:00').set(admin.auth), 400, 'startDate must not be after endDate');
});

test('the document describes what is accepted: a pattern every accepted value matches, and the UTC reading in words', async () => {
  const doc = t.openapi as Record<string, any>;
  const startDate = doc.paths['/api/time-log'].get.parameters.find((p: any) => p.name === 'startDate');
  const startedAt = doc.components.schemas.TimeLogCreate.properties.startedAt;
  for (const schema of [startDate.schema, startedAt]) {
    assert.match(schema.description, /without a zone.*UTC/);
    assert.type(schema.pattern, 'string');
  }
  const pattern = new RegExp(startedAt.pattern);
  const samples = ['2026-01-05', '2026-01-05T10:00', '2026-01-05T10:00:00', '2026-01-05 10:00:00.123', '2026-01-05T10:00:00Z', '2026-01-05t10:00z', '2026-01-05T10:00:00+02', '2026-01-05T10:00:00-0530', '2026-01-05T10:00:00+02:00',
    '2026-01-05T10', '05/01/2026', '2026-1-5', 'yesterday', '2026-01-05T10:00:00 Z', '2026-01-05T10:00:00.1234567890'];
  for (const value of samples) {
    const res = await t.http.get(`/api/time-log/count?startDate=${encodeURIComponent(value)}`).set(admin.auth);
    if (res.status === 200) assert.ok(pattern.test(value), `${value} is accepted: the pattern must match it`);
    if (!pattern.test(value)) assert.is(res.status, 400, `${value} does not match the pattern: it must be refused`);
  }
});

test.run();
