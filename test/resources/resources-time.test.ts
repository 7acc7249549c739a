// The time-tracking resources through HTTP: time logs (and their alias under
// timesheet/), time slots, timesheets, daily plans, time-off requests, entity subscriptions and
// image assets. Their rules, the computed duration, date ranges on lists, the writable
// many-to-many relations (ids of the caller's tenant only), and the owner rule: an EMPLOYEE sees
// and writes only its own records, another employee's is a 404.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertNotFound } from '../helpers/error-envelope.js';

type Admin = Session & { organizationId: string };
type Worker = Session & { employeeId: string };

let t: TestApp;
let admin: Admin;
let ann: Worker;
let bob: Worker;
let foreign: Admin;
let stranger: Worker;
let project: string;
let task: string;
let secondTask: string;
let team: string;
let foreignTask: string;
let foreignLog: string;

const ok = (res: { status: number; body: any }, status = 201) => {
  assert.is(res.status, status, JSON.stringify(res.body));
  return res.body;
};
const rowOf = (table: string, id: string) => t.db(table).where({ id }).first();
const countOf = async (table: string) => Number((await t.db(table).count({ n: '*' }))[0].n);
const linked = async (table: string, from: string, id: string, to: string) =>
  (await t.db(table).where({ [from]: id }).select(to)).map((r: Record<string, string>) => r[to]).sort();
const idsOf = (body: { items: Array<{ id: string }> }) => body.items.map((i) => i.id).sort();

async function worker(tenant: Admin): Promise<Worker> {
  const session = await userWithRole(t, tenant, 'EMPLOYEE', true);
  return session as Worker;
}

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t);
  ann = await worker(admin);
  bob = await worker(admin);
  foreign = await newTenant(t, 'Elsewhere');
  stranger = await worker(foreign);
  project = ok(await t.http.post('/api/organization-project').set(admin.auth).send({ name: 'Apollo' })).id;
  task = ok(await t.http.post('/api/task').set(admin.auth).send({ title: 'Write the report', projectId: project })).id;
  secondTask = ok(await t.http.post('/api/task').set(admin.auth).send({ title: 'Review the report' })).id;
  team = ok(await t.http.post('/api/organization-team').set(admin.auth).send({ name: 'Blue' })).id;
  foreignTask = ok(await t.http.post('/api/task').set(foreign.auth).send({ title: 'Not yours' })).id;
  foreignLog = ok(await t.http.post('/api/time-log').set(stranger.auth).send({ startedAt: '2026-04-01T09:00:00Z' })).id;
});
test.after(async () => {
  await t?.close();
});

// ---------------------------------------------------------------------------------------------
// time-log

test('time-log: create answers the record with defaults and the computed duration', async () => {
  const body = ok(
    await t.http.post('/api/time-log').set(admin.auth).send({
      employeeId: ann.employeeId,
      startedAt: '2026-04-01T09:00:00Z',
      stoppedAt: '2026-04-01T10:30:00Z',
      projectId: project,
      taskId: task,
      organizationTeamId: team,
      description: 'Drafting',
    }),
  );
  assert.equal(
    Object.keys(body).sort(),
    [
      'id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt', 'employeeId', 'startedAt', 'stoppedAt', 'duration', 'logType', 'source',
      'description', 'reason', 'isBillable', 'projectId', 'taskId', 'timesheetId', 'organizationTeamId', 'createdById', 'updatedById',
    ].sort(),
  );
  // changedBy: the caller created it, and changed it last.
  assert.is(body.createdById, admin.userId);
  assert.is(body.updatedById, admin.userId);
  assert.is(body.duration, 5400);
  assert.is(body.logType, 'TRACKED');
  assert.is(body.source, 'WEB_TIMER');
  assert.is(body.isBillable, false);
  assert.is(body.organizationId, admin.organizationId);
  assert.is(body.startedAt, '2026-04-01T09:00:00.000Z');
  const row = await rowOf('time_log', body.id);
  assert.is(row.duration, 5400);
  assert.is(row.employeeId, ann.employeeId);
  assert.is(row.taskId, task);
});

test('time-log: required fields, enums and references are checked, and nothing is written', async () => {
  const before = await countOf('time_log');
  assertError(await t.http.post('/api/time-log').set(admin.auth).send({ startedAt: '2026-04-01T09:00:00Z' }), 400, 'employeeId should not be empty');
  assertError(await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: ann.employeeId }), 400, 'startedAt should not be empty');
  assertError(await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: ann.employeeId, startedAt: '2026-04-01T09:00:00Z', logType: 'GUESSED' }), 400, /^logType must be one of the following values: TRACKED, MANUAL, IDLE, RESUMED$/);
  assertError(await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: ann.employeeId, startedAt: '2026-04-01T09:00:00Z', source: 'FAX' }), 400, /^source must be one of/);
  assertError(await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: ann.employeeId, startedAt: '2026-04-01T09:00:00Z', taskId: foreignTask }), 400, 'taskId must reference an existing task');
  assertError(await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: stranger.employeeId, startedAt: '2026-04-01T09:00:00Z' }), 400, 'employeeId must reference an existing employee');
  assert.is(await countOf('time_log'), before);
});

test('time-log: stoppedAt before startedAt is a 400, on create and on a PATCH of one side, and the record stays as it was', async () => {
  const before = await countOf('time_log');
  assertError(
    await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-04-02T09:00:00Z', stoppedAt: '2026-04-02T08:59:00Z' }),
    400,
    'stoppedAt must not be earlier than startedAt',
  );
  assert.is(await countOf('time_log'), before);
  const log = ok(await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-04-02T09:00:00Z', stoppedAt: '2026-04-02T09:10:00Z' }));
  const stored = await rowOf('time_log', log.id);
  assertError(await t.http.patch(`/api/time-log/${log.id}`).set(ann.auth).send({ stoppedAt: '2026-04-02T08:00:00Z' }), 400, 'stoppedAt must not be earlier than startedAt');
  assertError(await t.http.patch(`/api/time-log/${log.id}`).set(ann.auth).send({ startedAt: '2026-04-02T09:10:01Z', description: 'moved' }), 400, 'stoppedAt must not be earlier than startedAt');
  assert.equal(await rowOf('time_log', log.id), stored);
});

test('time-log: duration is null while running, recomputed on every write, and never taken from the client', async () => {
  const running = ok(await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-04-03T09:00:00Z', duration: 99 }));
  assert.is(running.duration, null);
  assert.is(running.stoppedAt, null);
  const stopped = ok(await t.http.patch(`/api/time-log/${running.id}`).set(ann.auth).send({ stoppedAt: '2026-04-03T09:45:30Z', duration: 1 }), 200);
  assert.is(stopped.duration, 2730);
  const earlier = ok(await t.http.patch(`/api/time-log/${running.id}`).set(ann.auth).send({ startedAt: '2026-04-03T09:45:00Z' }), 200);
  assert.is(earlier.duration, 30);
  const replaced = ok(await t.http.put(`/api/time-log/${running.id}`).set(ann.auth).send({ startedAt: '2026-04-03T08:00:00Z', stoppedAt: '2026-04-03T09:00:00Z', duration: 5 }), 200);
  assert.is(replaced.duration, 3600);
  assert.is((await rowOf('time_log', running.id)).duration, 3600);
  const read = ok(await t.http.get(`/api/time-log/${running.id}`).set(ann.auth), 200);
  assert.is(read.duration, 3600);
});

test('time-log: the list takes startDate/endDate on startedAt, under both paths', async () => {
  const made: Record<string, string> = {};
  for (const d of ['2026-05-01', '2026-05-02', '2026-05-03', '2026-05-04']) {
    made[d] = ok(await t.http.post('/api/time-log').set(bob.auth).send({ startedAt: `${d}T12:00:00Z`, stoppedAt: `${d}T13:00:00Z` })).id;
  }
  for (const path of ['/api/time-log', '/api/timesheet/time-log']) {
    const inRange = ok(await t.http.get(`${path}?startDate=2026-05-02&endDate=2026-05-03`).set(bob.auth), 200);
    assert.equal(idsOf(inRange), [made['2026-05-02'], made['2026-05-03']].sort(), path);
    assert.is(inRange.total, 2);
    const from = ok(await t.http.get(`${path}?startDate=2026-05-03T12:00:00Z`).set(bob.auth), 200);
    assert.equal(idsOf(from), [made['2026-05-03'], made['2026-05-04']].sort(), path);
    const until = ok(await t.http.get(`${path}?endDate=2026-05-01T12:00:00Z&order[startedAt]=ASC`).set(bob.auth), 200);
    assert.equal(idsOf(until), [made['2026-05-01']], path);
    const searched = ok(await t.http.post(`${path}/search`).set(bob.auth).send({ startDate: '2026-05-04', endDate: '2026-05-04' }), 200);
    assert.equal(idsOf(searched), [made['2026-05-04']], path);
    assertError(await t.http.get(`${path}?startDate=2026-05-04&endDate=2026-05-01`).set(bob.auth), 400, 'startDate must not be after endDate');
    assertError(await t.http.get(`${path}?startDate=yesterday`).set(bob.auth), 400);
  }
});

test('time-log: the alias reads, writes and deletes the same records', async () => {
  const made = ok(await t.http.post('/api/timesheet/time-log').set(ann.auth).send({ startedAt: '2026-04-04T09:00:00Z', stoppedAt: '2026-04-04T09:01:00Z', logType: 'MANUAL', reason: 'Forgot the timer' }));
  assert.is(made.employeeId, ann.employeeId);
  assert.is(made.logType, 'MANUAL');
  const read = ok(await t.http.get(`/api/time-log/${made.id}`).set(ann.auth), 200);
  assert.is(read.reason, 'Forgot the timer');
  const patched = ok(await t.http.patch(`/api/timesheet/time-log/${made.id}`).set(ann.auth).send({ isBillable: true }), 200);
  assert.is(patched.isBillable, true);
  assert.is((await t.http.delete(`/api/timesheet/time-log/${made.id}`).set(ann.auth)).status, 204);
  assert.not.ok(await rowOf('time_log', made.id));
});

test("time-log: relations are its whitelist: employee, project, task, timeSlots", async () => {
  const log = ok(await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: ann.employeeId, startedAt: '2026-04-05T09:00:00Z', projectId: project, taskId: task }));
  const slot = ok(await t.http.post('/api/time-slot').set(admin.auth).send({ employeeId: ann.employeeId, startedAt: '2026-04-05T09:00:00Z', duration: 600, timeLogIds: [log.id] }));
  const read = ok(await t.http.get(`/api/time-log/${log.id}?relations[]=employee&relations[]=project&relations[]=task.project&relations[]=timeSlots`).set(admin.auth), 200);
  assert.is(read.employee.id, ann.employeeId);
  assert.is(read.project.name, 'Apollo');
  assert.is(read.task.id, task);
  assert.is(read.task.project.id, project);
  assert.equal(read.timeSlots.map((s: { id: string }) => s.id), [slot.id]);
  assertError(await t.http.get(`/api/time-log/${log.id}?relations[]=tags`).set(admin.auth), 400, "relations: 'tags' is not allowed; allowed: employee, project, task, timeSlots");
});

test("time-log: an EMPLOYEE sees and writes only its own; another employee's is a 404 and stays unchanged", async () => {
  const own = ok(await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-04-06T09:00:00Z' }));
  assert.is(own.employeeId, ann.employeeId, "the caller's employee by default");
  const bobs = ok(await t.http.post('/api/time-log').set(bob.auth).send({ startedAt: '2026-04-06T09:00:00Z' }));
  const before = await rowOf('time_log', bobs.id);
  for (const path of [`/api/time-log/${bobs.id}`, `/api/timesheet/time-log/${bobs.id}`]) {
    assertNotFound(await t.http.get(path).set(ann.auth));
    assertNotFound(await t.http.patch(path).set(ann.auth).send({ description: 'mine now' }));
    assertNotFound(await t.http.put(path).set(ann.auth).send({ startedAt: '2026-04-06T09:00:00Z' }));
    assertNotFound(await t.http.delete(path).set(ann.auth));
  }
  assert.equal(await rowOf('time_log', bobs.id), before);
  const list = ok(await t.http.get('/api/time-log?take=100').set(ann.auth), 200);
  assert.ok(list.items.every((l: { employeeId: string }) => l.employeeId === ann.employeeId));
  assert.ok(list.items.some((l: { id: string }) => l.id === own.id));
  assert.is(list.total, Number((await t.db('time_log').where({ employeeId: ann.employeeId }).count({ n: '*' }))[0].n));
  assertForbidden(await t.http.post('/api/time-log').set(ann.auth).send({ employeeId: bob.employeeId, startedAt: '2026-04-06T09:00:00Z' }));
});

// ---------------------------------------------------------------------------------------------
// time-slot

test("an EMPLOYEE cannot point its records at another employee's: a timesheet or time log of someone else is a 400, its own is fine", async () => {
  const bobs = ok(await t.http.post('/api/timesheet').set(bob.auth).send({ startedAt: '2026-06-01T00:00:00Z', stoppedAt: '2026-06-07T00:00:00Z' })).id;
  const anns = ok(await t.http.post('/api/timesheet').set(ann.auth).send({ startedAt: '2026-06-01T00:00:00Z', stoppedAt: '2026-06-07T00:00:00Z' })).id;
  const before = await countOf('time_log');
  // Linked, Bob's timesheet would load through relations[]=timesheet for Ann: refused like an unknown id.
  assertError(await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-06-02T09:00:00Z', timesheetId: bobs }), 400, 'timesheetId must reference an existing timesheet');
  assert.is(await countOf('time_log'), before);
  const own = ok(await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-06-02T09:00:00Z', timesheetId: anns }));
  assertError(await t.http.patch(`/api/time-log/${own.id}`).set(ann.auth).send({ timesheetId: bobs }), 400, 'timesheetId must reference an existing timesheet');
  assert.is((await rowOf('time_log', own.id)).timesheetId, anns);
  // Many-to-many ids too: a time slot of Ann's cannot take Bob's time log.
  const bobsLog = ok(await t.http.post('/api/time-log').set(bob.auth).send({ startedAt: '2026-06-03T09:00:00Z' })).id;
  assertError(await t.http.post('/api/time-slot').set(ann.auth).send({ startedAt: '2026-06-03T09:00:00Z', timeLogIds: [bobsLog] }), 400, /must reference an existing time-log/);
  // An admin is not owner-scoped and links any employee's records of its tenant.
  ok(await t.http.patch(`/api/time-log/${own.id}`).set(admin.auth).send({ timesheetId: bobs }), 200);
});

test("a PUT that leaves out the owner field keeps it: an admin's replace does not take a time-off request from its employee", async () => {
  const mine = ok(await t.http.post('/api/time-off-request').set(ann.auth).send({ start: '2026-08-03', end: '2026-08-04', requestDate: '2026-07-01' }));
  assert.is(mine.employeeId, ann.employeeId);
  const replaced = ok(await t.http.put(`/api/time-off-request/${mine.id}`).set(admin.auth).send({ start: '2026-08-03', end: '2026-08-05', requestDate: '2026-07-01' }), 200);
  assert.is(replaced.employeeId, ann.employeeId);
  assert.is((await rowOf('time_off_request', mine.id)).employeeId, ann.employeeId);
  ok(await t.http.get(`/api/time-off-request/${mine.id}`).set(ann.auth), 200);
});

test('time-slot: created with its time logs; another tenant\'s log is a 400 and nothing is written', async () => {
  const log = ok(await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-04-07T09:00:00Z' }));
  const slot = ok(await t.http.post('/api/time-slot').set(ann.auth).send({ startedAt: '2026-04-07T09:00:00Z', duration: 600, keyboard: 120, mouse: 300, overall: 55, timeLogs: [{ id: log.id }] }));
  assert.is(slot.employeeId, ann.employeeId);
  assert.is(slot.overall, 55);
  assert.equal(await linked('time_slot_time_log', 'timeSlotId', slot.id, 'timeLogId'), [log.id]);
  const read = ok(await t.http.get(`/api/time-slot/${slot.id}?relations[]=timeLogs&relations[]=employee`).set(ann.auth), 200);
  assert.equal(read.timeLogs.map((l: { id: string }) => l.id), [log.id]);
  assert.is(read.employee.id, ann.employeeId);
  const before = await countOf('time_slot');
  assertError(await t.http.post('/api/time-slot').set(ann.auth).send({ startedAt: '2026-04-07T09:10:00Z', timeLogIds: [foreignLog] }), 400, 'timeLogs must reference an existing time-log');
  assert.is(await countOf('time_slot'), before);
  assertError(await t.http.patch(`/api/time-slot/${slot.id}`).set(ann.auth).send({ timeLogIds: [log.id, foreignLog] }), 400, 'timeLogs must reference an existing time-log');
  assert.equal(await linked('time_slot_time_log', 'timeSlotId', slot.id, 'timeLogId'), [log.id]);
  assertError(await t.http.post('/api/time-slot').set(ann.auth).send({ startedAt: '2026-04-07T09:10:00Z', duration: 601 }), 400, 'duration must not be greater than 600');
  assertError(await t.http.post('/api/time-slot').set(ann.auth).send({ startedAt: '2026-04-07T09:10:00Z', overall: 101 }), 400, 'overall must not be greater than 100');
  assertError(await t.http.post('/api/time-slot').set(ann.auth).send({ duration: 10 }), 400, 'startedAt should not be empty');
});

test("time-slot: another employee's is a 404 and stays unchanged", async () => {
  const bobs = ok(await t.http.post('/api/time-slot').set(bob.auth).send({ startedAt: '2026-04-08T09:00:00Z', duration: 300 }));
  const before = await rowOf('time_slot', bobs.id);
  assertNotFound(await t.http.get(`/api/time-slot/${bobs.id}`).set(ann.auth));
  assertNotFound(await t.http.patch(`/api/time-slot/${bobs.id}`).set(ann.auth).send({ duration: 1 }));
  assertNotFound(await t.http.put(`/api/time-slot/${bobs.id}`).set(ann.auth).send({ startedAt: '2026-04-08T09:00:00Z' }));
  assertNotFound(await t.http.delete(`/api/time-slot/${bobs.id}`).set(ann.auth));
  assert.equal(await rowOf('time_slot', bobs.id), before);
  const list = ok(await t.http.get('/api/time-slot?take=100').set(ann.auth), 200);
  assert.not.ok(list.items.some((s: { id: string }) => s.id === bobs.id));
});

// ---------------------------------------------------------------------------------------------
// timesheet

test("timesheet: status defaults to PENDING and takes 'IN REVIEW' as written, also as a filter", async () => {
  const pending = ok(await t.http.post('/api/timesheet').set(ann.auth).send({ startedAt: '2026-04-06T00:00:00Z', stoppedAt: '2026-04-12T23:59:59Z' }));
  assert.is(pending.status, 'PENDING');
  assert.is(pending.isBilled, false);
  const review = ok(await t.http.post('/api/timesheet').set(ann.auth).send({ startedAt: '2026-04-13T00:00:00Z', stoppedAt: '2026-04-19T23:59:59Z', status: 'IN REVIEW' }));
  assert.is(review.status, 'IN REVIEW');
  assert.is((await rowOf('timesheet', review.id)).status, 'IN REVIEW');
  const filtered = ok(await t.http.get('/api/timesheet?where[status]=IN%20REVIEW').set(ann.auth), 200);
  assert.equal(idsOf(filtered), [review.id]);
  assertError(await t.http.post('/api/timesheet').set(ann.auth).send({ startedAt: '2026-04-13T00:00:00Z', stoppedAt: '2026-04-19T00:00:00Z', status: 'IN_REVIEW' }), 400, /^status must be one of the following values: DRAFT, PENDING, IN REVIEW, DENIED, APPROVED$/);
  assertError(await t.http.post('/api/timesheet').set(ann.auth).send({ startedAt: '2026-04-13T00:00:00Z' }), 400, 'stoppedAt should not be empty');
});

test('timesheet: stoppedAt before startedAt is a 400; its time logs and approver load as relations', async () => {
  const before = await countOf('timesheet');
  assertError(await t.http.post('/api/timesheet').set(ann.auth).send({ startedAt: '2026-04-13T00:00:00Z', stoppedAt: '2026-04-12T00:00:00Z' }), 400, 'stoppedAt must not be earlier than startedAt');
  assert.is(await countOf('timesheet'), before);
  const sheet = ok(await t.http.post('/api/timesheet').set(admin.auth).send({ employeeId: ann.employeeId, startedAt: '2026-04-20T00:00:00Z', stoppedAt: '2026-04-26T00:00:00Z', approvedById: admin.userId, approvedAt: '2026-04-27T10:00:00Z', status: 'APPROVED' }));
  const stored = await rowOf('timesheet', sheet.id);
  assertError(await t.http.patch(`/api/timesheet/${sheet.id}`).set(admin.auth).send({ startedAt: '2026-04-27T00:00:00Z' }), 400, 'stoppedAt must not be earlier than startedAt');
  assert.equal(await rowOf('timesheet', sheet.id), stored);
  const log = ok(await t.http.post('/api/time-log').set(ann.auth).send({ startedAt: '2026-04-21T09:00:00Z', timesheetId: sheet.id }));
  const read = ok(await t.http.get(`/api/timesheet/${sheet.id}?relations[]=timeLogs&relations[]=approvedBy&relations[]=employee`).set(admin.auth), 200);
  assert.equal(read.timeLogs.map((l: { id: string }) => l.id), [log.id]);
  assert.is(read.approvedBy.id, admin.userId);
  assert.is(read.approvedBy.hash, undefined);
  assert.is(read.employee.id, ann.employeeId);
  const inRange = ok(await t.http.get('/api/timesheet?startDate=2026-04-20&endDate=2026-04-20').set(admin.auth), 200);
  assert.equal(idsOf(inRange), [sheet.id]);
});

test("timesheet: another employee's is a 404 and stays unchanged", async () => {
  const bobs = ok(await t.http.post('/api/timesheet').set(bob.auth).send({ startedAt: '2026-04-06T00:00:00Z', stoppedAt: '2026-04-12T00:00:00Z' }));
  const before = await rowOf('timesheet', bobs.id);
  assertNotFound(await t.http.get(`/api/timesheet/${bobs.id}`).set(ann.auth));
  assertNotFound(await t.http.patch(`/api/timesheet/${bobs.id}`).set(ann.auth).send({ status: 'APPROVED' }));
  assertNotFound(await t.http.delete(`/api/timesheet/${bobs.id}`).set(ann.auth));
  assert.equal(await rowOf('timesheet', bobs.id), before);
});

// ---------------------------------------------------------------------------------------------
// daily-plan

test('daily-plan: tasks are set by ids on create and replaced on update; another tenant\'s task is a 400', async () => {
  const plan = ok(await t.http.post('/api/daily-plan').set(ann.auth).send({ date: '2026-04-09', workTimePlanned: 6.5, status: 'open', taskIds: [task] }));
  assert.is(plan.employeeId, ann.employeeId);
  assert.is(plan.date, '2026-04-09T00:00:00.000Z');
  assert.is(plan.workTimePlanned, 6.5);
  assert.equal(await linked('daily_plan_task', 'dailyPlanId', plan.id, 'taskId'), [task]);
  ok(await t.http.patch(`/api/daily-plan/${plan.id}`).set(ann.auth).send({ tasks: [{ id: secondTask }, { id: task }] }), 200);
  assert.equal(await linked('daily_plan_task', 'dailyPlanId', plan.id, 'taskId'), [task, secondTask].sort());
  const read = ok(await t.http.get(`/api/daily-plan/${plan.id}?relations[]=tasks&relations[]=employee`).set(ann.auth), 200);
  assert.equal(read.tasks.map((x: { id: string }) => x.id).sort(), [task, secondTask].sort());
  assert.is(read.employee.id, ann.employeeId);
  assertError(await t.http.patch(`/api/daily-plan/${plan.id}`).set(ann.auth).send({ taskIds: [secondTask, foreignTask] }), 400, 'tasks must reference an existing task');
  assert.equal(await linked('daily_plan_task', 'dailyPlanId', plan.id, 'taskId'), [task, secondTask].sort());
  const before = await countOf('daily_plan');
  assertError(await t.http.post('/api/daily-plan').set(ann.auth).send({ date: '2026-04-10', workTimePlanned: 4, status: 'open', taskIds: [foreignTask] }), 400, 'tasks must reference an existing task');
  assert.is(await countOf('daily_plan'), before);
  // A PUT without tasks unlinks them all.
  ok(await t.http.put(`/api/daily-plan/${plan.id}`).set(ann.auth).send({ date: '2026-04-09', workTimePlanned: 2, status: 'completed' }), 200);
  assert.equal(await linked('daily_plan_task', 'dailyPlanId', plan.id, 'taskId'), []);
});

test('daily-plan: required fields and enums, and the list by date', async () => {
  assertError(await t.http.post('/api/daily-plan').set(ann.auth).send({ workTimePlanned: 4, status: 'open' }), 400, 'date should not be empty');
  assertError(await t.http.post('/api/daily-plan').set(ann.auth).send({ date: '2026-04-11', status: 'open' }), 400, 'workTimePlanned should not be empty');
  assertError(await t.http.post('/api/daily-plan').set(ann.auth).send({ date: '2026-04-11', workTimePlanned: 4 }), 400, 'status should not be empty');
  assertError(await t.http.post('/api/daily-plan').set(ann.auth).send({ date: '2026-04-11', workTimePlanned: -1, status: 'open' }), 400, 'workTimePlanned must not be less than 0');
  assertError(await t.http.post('/api/daily-plan').set(ann.auth).send({ date: '2026-04-11', workTimePlanned: 1, status: 'done' }), 400, /^status must be one of the following values: open, in-progress, completed$/);
  const plan = ok(await t.http.post('/api/daily-plan').set(ann.auth).send({ date: '2026-06-15', workTimePlanned: 8, status: 'in-progress' }));
  const day = ok(await t.http.get('/api/daily-plan?startDate=2026-06-15&endDate=2026-06-15').set(ann.auth), 200);
  assert.equal(idsOf(day), [plan.id]);
});

test("daily-plan: another employee's is a 404 and stays unchanged", async () => {
  const bobs = ok(await t.http.post('/api/daily-plan').set(bob.auth).send({ date: '2026-04-09', workTimePlanned: 3, status: 'open', taskIds: [task] }));
  const before = await rowOf('daily_plan', bobs.id);
  assertNotFound(await t.http.get(`/api/daily-plan/${bobs.id}`).set(ann.auth));
  assertNotFound(await t.http.patch(`/api/daily-plan/${bobs.id}`).set(ann.auth).send({ taskIds: [] }));
  assertNotFound(await t.http.put(`/api/daily-plan/${bobs.id}`).set(ann.auth).send({ date: '2026-04-09', workTimePlanned: 3, status: 'open' }));
  assertNotFound(await t.http.delete(`/api/daily-plan/${bobs.id}`).set(ann.auth));
  assert.equal(await rowOf('daily_plan', bobs.id), before);
  assert.equal(await linked('daily_plan_task', 'dailyPlanId', bobs.id, 'taskId'), [task]);
});

// ---------------------------------------------------------------------------------------------
// time-off-request and image-asset

test('time-off-request: end before start is a 400; employees are set by ids; the document is an image asset', async () => {
  const before = await countOf('time_off_request');
  assertError(
    await t.http.post('/api/time-off-request').set(ann.auth).send({ start: '2026-07-10', end: '2026-07-09', requestDate: '2026-06-01' }),
    400,
    'end must not be earlier than start',
  );
  assert.is(await countOf('time_off_request'), before);
  const doc = ok(await t.http.post('/api/image-asset').set(admin.auth).send({ name: 'certificate.png', mimeType: 'image/png', size: 2048 }));
  // An EMPLOYEE names only employees it can see (itself); an admin adds the others.
  assertError(
    await t.http.post('/api/time-off-request').set(ann.auth).send({ start: '2026-07-10', end: '2026-07-10', requestDate: '2026-06-01', employeeIds: [ann.employeeId, bob.employeeId] }),
    400,
    'employees must reference an existing employee',
  );
  const request = ok(
    await t.http.post('/api/time-off-request').set(ann.auth).send({ start: '2026-07-10', end: '2026-07-10', requestDate: '2026-06-01', employeeIds: [ann.employeeId], documentId: doc.id }),
  );
  ok(await t.http.patch(`/api/time-off-request/${request.id}`).set(admin.auth).send({ employeeIds: [ann.employeeId, bob.employeeId] }), 200);
  assert.is(request.employeeId, ann.employeeId, "the caller's employee by default");
  assert.is(request.status, 'REQUESTED');
  assert.is(request.isHoliday, false);
  assert.equal(await linked('time_off_request_employee', 'timeOffRequestId', request.id, 'employeeId'), [ann.employeeId, bob.employeeId].sort());
  const read = ok(await t.http.get(`/api/time-off-request/${request.id}?relations[]=employees&relations[]=document`).set(admin.auth), 200);
  assert.equal(read.employees.map((e: { id: string }) => e.id).sort(), [ann.employeeId, bob.employeeId].sort());
  assert.is(read.document.name, 'certificate.png');
  const stored = await rowOf('time_off_request', request.id);
  assertError(await t.http.patch(`/api/time-off-request/${request.id}`).set(ann.auth).send({ end: '2026-07-01' }), 400, 'end must not be earlier than start');
  assertError(await t.http.patch(`/api/time-off-request/${request.id}`).set(ann.auth).send({ employees: [{ id: stranger.employeeId }] }), 400, 'employees must reference an existing employee');
  assert.equal(await rowOf('time_off_request', request.id), stored);
  assert.equal(await linked('time_off_request_employee', 'timeOffRequestId', request.id, 'employeeId'), [ann.employeeId, bob.employeeId].sort());
  const counted = await countOf('time_off_request');
  assertError(await t.http.post('/api/time-off-request').set(ann.auth).send({ start: '2026-07-10', end: '2026-07-11', requestDate: '2026-06-01', employeeIds: [stranger.employeeId] }), 400, 'employees must reference an existing employee');
  assertError(await t.http.post('/api/time-off-request').set(ann.auth).send({ start: '2026-07-10', end: '2026-07-11' }), 400, 'requestDate should not be empty');
  assert.is(await countOf('time_off_request'), counted);
  const listed = ok(await t.http.get('/api/time-off-request?startDate=2026-07-10&endDate=2026-07-10').set(ann.auth), 200);
  assert.equal(idsOf(listed), [request.id]);
});

test("time-off-request: another employee's is a 404 and stays unchanged", async () => {
  const bobs = ok(await t.http.post('/api/time-off-request').set(bob.auth).send({ start: '2026-08-01', end: '2026-08-02', requestDate: '2026-07-01' }));
  assert.is(bobs.employeeId, bob.employeeId);
  const before = await rowOf('time_off_request', bobs.id);
  assertNotFound(await t.http.get(`/api/time-off-request/${bobs.id}`).set(ann.auth));
  assertNotFound(await t.http.patch(`/api/time-off-request/${bobs.id}`).set(ann.auth).send({ status: 'APPROVED' }));
  assertNotFound(await t.http.delete(`/api/time-off-request/${bobs.id}`).set(ann.auth));
  assert.equal(await rowOf('time_off_request', bobs.id), before);
  assertForbidden(await t.http.post('/api/time-off-request').set(ann.auth).send({ start: '2026-08-01', end: '2026-08-02', requestDate: '2026-07-01', employeeId: bob.employeeId }));
});

test('image-asset: url is read-only, storageProvider defaults to LOCAL, the alias works, an EMPLOYEE has no access', async () => {
  const asset = ok(await t.http.post('/api/image-assets').set(admin.auth).send({ name: 'logo.png', url: 'https://evil.example/x.png', width: 10, height: 20 }));
  assert.is(asset.url, null);
  assert.is(asset.storageProvider, 'LOCAL');
  assert.is(asset.isFeatured, false);
  assert.is((await rowOf('image_asset', asset.id)).url, null);
  const patched = ok(await t.http.patch(`/api/image-asset/${asset.id}`).set(admin.auth).send({ url: 'https://evil.example/y.png', isFeatured: true }), 200);
  assert.is(patched.url, null);
  assert.is(patched.isFeatured, true);
  assertError(await t.http.post('/api/image-asset').set(admin.auth).send({ storageProvider: 'S3' }), 400, /^storageProvider must be one of the following values: LOCAL$/);
  assertError(await t.http.post('/api/image-asset').set(admin.auth).send({ width: -1 }), 400, 'width must not be less than 0');
  assertForbidden(await t.http.get('/api/image-asset').set(ann.auth));
  assertNotFound(await t.http.get(`/api/image-asset/${asset.id}`).set(foreign.auth));
});

// ---------------------------------------------------------------------------------------------
// entity-subscription

test('entity-subscription: created for the caller by default; enums and required fields checked', async () => {
  const sub = ok(await t.http.post('/api/entity-subscription').set(ann.auth).send({ entity: 'Task', entityId: task, type: 'manual' }));
  assert.is(sub.employeeId, ann.employeeId);
  const read = ok(await t.http.get(`/api/entity-subscription/${sub.id}?relations[]=employee`).set(ann.auth), 200);
  assert.is(read.employee.id, ann.employeeId);
  const filtered = ok(await t.http.get(`/api/entity-subscription?where[entityId]=${task}&where[type]=manual`).set(ann.auth), 200);
  assert.equal(idsOf(filtered), [sub.id]);
  assertError(await t.http.post('/api/entity-subscription').set(ann.auth).send({ entity: 'Spaceship', entityId: task, type: 'manual' }), 400, /^entity must be one of the following values/);
  assertError(await t.http.post('/api/entity-subscription').set(ann.auth).send({ entity: 'Task', entityId: task, type: 'forced' }), 400, /^type must be one of the following values/);
  assertError(await t.http.post('/api/entity-subscription').set(ann.auth).send({ entity: 'Task', type: 'manual' }), 400, 'entityId should not be empty');
  assertError(await t.http.post('/api/entity-subscription').set(admin.auth).send({ entity: 'Task', entityId: task, type: 'manual' }), 400, 'employeeId should not be empty');
});

test("entity-subscription: another employee's is a 404 and stays unchanged", async () => {
  const bobs = ok(await t.http.post('/api/entity-subscription').set(bob.auth).send({ entity: 'Task', entityId: task, type: 'assignment' }));
  const before = await rowOf('entity_subscription', bobs.id);
  assertNotFound(await t.http.get(`/api/entity-subscription/${bobs.id}`).set(ann.auth));
  assertNotFound(await t.http.patch(`/api/entity-subscription/${bobs.id}`).set(ann.auth).send({ type: 'mention' }));
  assertNotFound(await t.http.delete(`/api/entity-subscription/${bobs.id}`).set(ann.auth));
  assert.equal(await rowOf('entity_subscription', bobs.id), before);
  const list = ok(await t.http.get('/api/entity-subscription').set(ann.auth), 200);
  assert.not.ok(list.items.some((s: { id: string }) => s.id === bobs.id));
});

// ---------------------------------------------------------------------------------------------
// Tenancy across the group: another tenant's records are 404 and unchanged.

test("another tenant's records of the group are 404 and unchanged", async () => {
  const before = await rowOf('time_log', foreignLog);
  assertNotFound(await t.http.get(`/api/time-log/${foreignLog}`).set(admin.auth));
  assertNotFound(await t.http.patch(`/api/timesheet/time-log/${foreignLog}`).set(admin.auth).send({ description: 'x' }));
  assertNotFound(await t.http.delete(`/api/time-log/${foreignLog}`).set(admin.auth));
  assert.equal(await rowOf('time_log', foreignLog), before);
  const list = ok(await t.http.get('/api/time-log?take=100').set(foreign.auth), 200);
  assert.equal(idsOf(list), [foreignLog]);
});

test.run();
