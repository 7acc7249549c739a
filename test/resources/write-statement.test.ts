// A create or a change of one record is one statement (engine/resource/sql/write.ts:
// insertStatement, updateStatement): the ids it refers to are checked in it, and the row is
// written only when they all exist in the caller's scope; only a write that wrote nothing asks a
// second statement which are missing. What that must keep: a 400 naming every
// missing reference, with nothing written (and no idempotency key kept), references out of the
// tenant refused alike, a change's 404 and 412 after the references' 400, and a keyed retry of a
// success answered its kept answer even when the same request would fail today.
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { IDEMPOTENCY_TABLE } from '../../engine/idempotency/table.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { insertEmployees } from '../helpers/list-data.js';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let acme: Tenant;
let other: Tenant;
let employeeId: string;
let foreignEmployee: string;
const statements: string[] = [];
const listen = (q: { sql: string }) => statements.push(q.sql);

const MISSING_ID = '00000000-0000-4000-8000-000000000000';

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  [employeeId] = (await insertEmployees(t, acme, [{ firstName: 'Ann' }])).map((e) => e.id);
  [foreignEmployee] = (await insertEmployees(t, other, [{ firstName: 'Zed' }])).map((e) => e.id);
  t.db.on('query', listen);
});
test.after(async () => {
  t.db.off('query', listen);
  await t.close();
});

const timeLog = (description: string, changes: Record<string, unknown> = {}) => ({
  organizationId: acme.organizationId,
  employeeId,
  startedAt: '2026-01-05T09:00:00.000Z',
  stoppedAt: '2026-01-05T10:30:00.000Z',
  description,
  ...changes,
});

const logsDescribed = async (description: string) => Number((await t.db('time_log').where({ description }).count({ n: '*' }))[0].n);

async function patch(id: string, body: Record<string, unknown>, ifMatch?: string) {
  statements.length = 0;
  const req = t.http.patch(`/api/time-log/${id}`).set(acme.auth);
  if (ifMatch) req.set('If-Match', ifMatch);
  const res = await req.send(body);
  return { res, statements: [...statements] };
}

async function post(body: Record<string, unknown>, key?: string) {
  statements.length = 0;
  const req = t.http.post('/api/time-log').set(acme.auth);
  if (key) req.set('Idempotency-Key', key);
  const res = await req.send(body);
  return { res, statements: [...statements] };
}

test('a create of one record with references is one statement: the references, the row', async () => {
  const { res, statements: sent } = await post(timeLog('one statement'));
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(sent.length, 1, sent.join('\n'));
  assert.match(sent[0], /insert into "time_log"/);
  assert.match(sent[0], /exists \(select 1 from "employee"/, 'the employee it refers to is checked in the same statement');
  assert.not.ok(Object.keys(res.body).some((k) => k.startsWith('@')), 'the counts stay out of the answer');
  assert.is(res.body.employeeId, employeeId);
  assert.is(await logsDescribed('one statement'), 1);
});

test('every missing reference is named in one 400, and nothing is written', async () => {
  const { res, statements: sent } = await post(timeLog('missing both', { employeeId: MISSING_ID, organizationId: other.organizationId }));
  assertError(res, 400);
  const messages = [res.body.message].flat().join('\n');
  assert.match(messages, /employeeId must reference an existing employee/);
  assert.match(messages, /organizationId must reference an existing organization/);
  assert.is(sent.length, 2, sent.join('\n'));
  assert.match(sent[0], /^insert into "time_log"/, 'the create wrote nothing');
  assert.match(sent[1], /^select \(select count\(\*\) from "organization"/, 'then one statement counted both');
  assert.is(await logsDescribed('missing both'), 0);
});

test("another tenant's record is no reference: 400, nothing written", async () => {
  const { res } = await post(timeLog('foreign', { employeeId: foreignEmployee }));
  assertError(res, 400, /employeeId must reference an existing employee/);
  assert.is(await logsDescribed('foreign'), 0);
});

test('with an Idempotency-Key: a missing reference keeps no key, and the corrected request runs with it', async () => {
  const key = `key-${randomBytes(6).toString('hex')}`;
  const { res } = await post(timeLog('keyed', { employeeId: MISSING_ID }), key);
  assertError(res, 400, /employeeId/);
  assert.is(Number((await t.db(IDEMPOTENCY_TABLE).where({ key }).count({ n: '*' }))[0].n), 0);
  const { res: fixed, statements: sent } = await post(timeLog('keyed'), key);
  assert.is(fixed.status, 201, JSON.stringify(fixed.body));
  assert.is(sent.length, 1, 'references, row and key: one statement');
  const { res: again } = await post(timeLog('keyed'), key);
  assert.is(again.headers['idempotent-replayed'], 'true');
  assert.is(again.text, fixed.text);
  assert.is(await logsDescribed('keyed'), 1);
});

test('with an Idempotency-Key: the retry of a success that fails today (its task deleted since) still replays the success', async () => {
  const task = await t.http.post('/api/task').set(acme.auth).send({ title: 'Soon deleted', organizationId: acme.organizationId });
  assert.is(task.status, 201, JSON.stringify(task.body));
  const key = `key-${randomBytes(6).toString('hex')}`;
  const body = timeLog('on a task', { taskId: task.body.id });
  const { res: first } = await post(body, key);
  assert.is(first.status, 201, JSON.stringify(first.body));
  assert.is((await t.http.delete(`/api/task/${task.body.id}`).set(acme.auth)).status, 204);
  assertError((await post(body)).res, 400, /taskId must reference an existing task/);
  const { res: retry } = await post(body, key);
  assert.is(retry.status, 201, JSON.stringify(retry.body));
  assert.is(retry.headers['idempotent-replayed'], 'true');
  assert.is(retry.text, first.text);
  assert.is(await logsDescribed('on a task'), 1);
});

test('a change with references is one statement too; a missing one is a 400 before any 404 or 412', async () => {
  const { res: created } = await post(timeLog('to change'));
  assert.is(created.status, 201);
  const [secondEmployee] = (await insertEmployees(t, acme, [{ firstName: 'Bea' }])).map((e) => e.id);
  const moved = await patch(created.body.id, { employeeId: secondEmployee });
  assert.is(moved.res.status, 200, JSON.stringify(moved.res.body));
  assert.is(moved.statements.length, 1, moved.statements.join('\n'));
  assert.match(moved.statements[0], /from "employee"/);
  assert.is(moved.res.body.employeeId, secondEmployee);
  assert.not.ok(Object.keys(moved.res.body).some((k) => k.startsWith('@')));
  assert.is(moved.res.headers.etag, (await t.http.get(`/api/time-log/${created.body.id}`).set(acme.auth)).headers.etag);

  const refused = await patch(created.body.id, { employeeId: foreignEmployee, description: 'changed?' });
  assertError(refused.res, 400, /employeeId must reference an existing employee/);
  assert.equal(refused.statements.map((q) => q.split(' ')[0]), ['update', 'select'], 'the change, then what it missed');
  const [stored] = await t.db('time_log').where({ id: created.body.id });
  assert.equal([stored.employeeId, stored.description], [secondEmployee, 'to change'], 'nothing changed');

  assertError((await patch(MISSING_ID, { employeeId: MISSING_ID })).res, 400, /employeeId/);
  assertError((await patch(MISSING_ID, { employeeId })).res, 404);
  assertError((await patch(created.body.id, { employeeId: MISSING_ID }, '"0"')).res, 400, /employeeId/);
  assertError((await patch(created.body.id, { employeeId }, '"0"')).res, 412);
  assert.is((await t.db('time_log').where({ id: created.body.id }).first()).employeeId, secondEmployee);
});

test("a reference to the written resource's own table is checked apart from the row being written", async () => {
  const createTask = async (title: string, changes: Record<string, unknown> = {}) => {
    const res = await t.http.post('/api/task').set(acme.auth).send({ title, organizationId: acme.organizationId, ...changes });
    assert.is(res.status, 201, JSON.stringify(res.body));
    return res.body.id as string;
  };
  const parent = await createTask('Parent');
  const child = await createTask('Child', { parentId: parent });
  assert.is((await t.db('task').where({ id: child }).first()).parentId, parent);
  assertError(await t.http.post('/api/task').set(acme.auth).send({ title: 'Orphan', organizationId: acme.organizationId, parentId: MISSING_ID }), 400, /parentId must reference an existing task/);
  assert.is(Number((await t.db('task').where({ title: 'Orphan' }).count({ n: '*' }))[0].n), 0);

  const other = await createTask('Other parent');
  const moved = await t.http.patch(`/api/task/${child}`).set(acme.auth).send({ parentId: other });
  assert.is(moved.status, 200, JSON.stringify(moved.body));
  assert.is(moved.body.parentId, other);
  assertError(await t.http.patch(`/api/task/${child}`).set(acme.auth).send({ parentId: MISSING_ID, title: 'Renamed?' }), 400, /parentId must reference an existing task/);
  const stored = await t.db('task').where({ id: child }).first();
  assert.equal([stored.parentId, stored.title], [other, 'Child'], 'nothing changed');
});

test('a write that wrote nothing while its references are all there runs once more (one appeared in between)', async () => {
  // A trigger skips the first write of a listed description once: what a write sees when a
  // reference is committed between its statement and the count that follows it.
  await t.db.raw('create table skip_once (description text primary key)');
  await t.db.raw(`create function skip_once() returns trigger language plpgsql as $$
    begin
      delete from skip_once where description = new.description;
      if found then return null; end if;
      return new;
    end $$`);
  await t.db.raw('create trigger skip_once before insert or update on time_log for each row execute function skip_once()');
  const verbs = (sent: string[]) => sent.map((q) => q.split(' ')[0]);
  try {
    await t.db('skip_once').insert({ description: 'skipped once' });
    const { res, statements: sent } = await post(timeLog('skipped once'));
    assert.is(res.status, 201, JSON.stringify(res.body));
    assert.equal(verbs(sent), ['insert', 'select', 'insert'], sent.join('\n'));
    assert.is(await logsDescribed('skipped once'), 1, 'written once');

    await t.db('skip_once').insert({ description: 'changed once' });
    const moved = await patch(res.body.id, { employeeId, description: 'changed once' }, res.headers.etag);
    assert.is(moved.res.status, 200, JSON.stringify(moved.res.body));
    assert.equal(verbs(moved.statements), ['update', 'select', 'update'], moved.statements.join('\n'));
    assert.is((await t.db('time_log').where({ id: res.body.id }).first()).description, 'changed once');
  } finally {
    await t.db.raw('drop trigger skip_once on time_log');
    await t.db.raw('drop function skip_once()');
    await t.db.raw('drop table skip_once');
  }
});

test('an insert that writes nothing twice with every reference there: a 500 without detail after two attempts', async () => {
  // A trigger that skips every insert of one description: not a missing reference, not a key,
  // so nothing the client could mend; the service answers the bare 500 after two attempts, each
  // followed by the count that would have named a reference missing (one deleted in between).
  await t.db.raw(`create or replace function skip_always() returns trigger language plpgsql as $$
    begin
      if new.description = 'never written' then return null; end if;
      return new;
    end $$`);
  await t.db.raw('drop trigger if exists skip_always on time_log');
  await t.db.raw('create trigger skip_always before insert on time_log for each row execute function skip_always()');
  try {
    const { res, statements: sent } = await post(timeLog('never written'));
    assertError(res, 500, 'Internal server error');
    assert.not.match(JSON.stringify(res.body), /insert|trigger|time_log/);
    assert.equal(sent.map((q) => q.split(' ')[0]), ['insert', 'select', 'insert', 'select'], sent.join('\n'));
  } finally {
    await t.db.raw('drop trigger skip_always on time_log');
    await t.db.raw('drop function skip_always()');
  }
});

test.run();
