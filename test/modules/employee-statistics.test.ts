// GET /api/employee/{id}/statistics: every figure against hand-computed fixtures placed relative
// to the current UTC month (billable and not, running, crossing a month, crossing the window's
// start, older than the window, fractional seconds), tasks assigned within the tenant, who may
// read it, every refusal, and the OpenAPI description matching the answer. A second app with a
// fixed clock checks the month names themselves, across a year's turn.
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createEmployeeStatisticsModule } from '../../resources/employee-statistics/index.js';
import { modules as projectModules } from '../../resources/modules.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertNotFound, assertUnauthorized } from '../helpers/error-envelope.js';

type Tenant = Awaited<ReturnType<typeof newTenant>>;
type Member = Session & { employeeId?: string };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

let t: TestApp;
let acme: Tenant;
let other: Tenant;
/** EMPLOYEE with the fixtures below. */
let ann: Member;
/** EMPLOYEE without any time log or task. */
let bob: Member;
/** MANAGER with an employee record, a log and tasks of its own that must not count for Ann. */
let dan: Member;
/** The other tenant's employee. */
let cat: Member;
let viewer: Member;

/** Start of the UTC month `back` months before the one `now` falls in (0: the current month). */
const monthStart = (back: number, now = Date.now()) => {
  const d = new Date(now);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - back, 1);
};
const label = (ms: number) => new Date(ms).toISOString().slice(0, 7);
const iso = (ms: number) => new Date(ms).toISOString();

/** The 12 month labels at `now`, oldest first. */
const monthLabels = (now = Date.now()) => Array.from({ length: 12 }, (_, i) => label(monthStart(11 - i, now)));

/**
 * Ann's logs, by hand: [start, stop or null, billable]; seconds per month index back from the
 * current one (0 = current, 11 = oldest in the window).
 */
function annLogs(): Array<{ startedAt: string; stoppedAt?: string; isBillable: boolean; why: string }> {
  const m = (back: number) => monthStart(back);
  return [
    { why: 'billable, current month, 2 h', startedAt: iso(m(0) + HOUR), stoppedAt: iso(m(0) + 3 * HOUR), isBillable: true },
    { why: 'not billable, 3 months back, 1 h 30', startedAt: iso(m(3) + 5 * DAY + 9 * HOUR), stoppedAt: iso(m(3) + 5 * DAY + 10.5 * HOUR), isBillable: false },
    { why: 'billable, 23:00 on the last day of 2 back to 01:00 on the first of 1 back', startedAt: iso(m(1) - HOUR), stoppedAt: iso(m(1) + HOUR), isBillable: true },
    { why: 'billable, older than the window, 10 h', startedAt: iso(m(12) + 2 * DAY), stoppedAt: iso(m(12) + 2 * DAY + 10 * HOUR), isBillable: true },
    { why: 'not billable, 30 min each side of the window start', startedAt: iso(m(11) - HOUR / 2), stoppedAt: iso(m(11) + HOUR / 2), isBillable: false },
    { why: 'not billable, 1.3 s across the start of 5 back: its one whole second lands once', startedAt: iso(m(5) - 600), stoppedAt: iso(m(5) + 700), isBillable: false },
    { why: 'running since the current month began: counted, no seconds', startedAt: iso(m(0) + 3 * HOUR), isBillable: true },
  ];
}

const ANN_TOTAL = 7200 + 5400 + 7200 + 36000 + 3600 + 1;
const ANN_BILLABLE = 7200 + 7200 + 36000;
const ANN_LOGS = 7;
/** Seconds by months back: 0 → 7200, 1 → 3600, 2 → 3600, 3 → 5400, 5 → 1, 11 → 1800. */
const ANN_BY_MONTHS_BACK: Record<number, number> = { 0: 7200, 1: 3600, 2: 3600, 3: 5400, 5: 1, 11: 1800 };

function annMonths(now = Date.now()) {
  return monthLabels(now).map((month, i) => ({ month, seconds: ANN_BY_MONTHS_BACK[11 - i] ?? 0 }));
}

async function created(res: { status: number; body: any }) {
  assert.is(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

const statistics = (id: string, session?: { auth: Record<string, string> }, query = '') => {
  const req = t.http.get(`/api/employee/${id}/statistics${query}`);
  return session ? req.set(session.auth) : req;
};

/** A 200 whose months are those of the instant before or after the request (a month may turn meanwhile). */
async function expectStatistics(id: string, session: { auth: Record<string, string> }, expected: (now: number) => object) {
  const before = Date.now();
  const res = await statistics(id, session);
  const after = Date.now();
  assert.is(res.status, 200, JSON.stringify(res.body));
  const candidates = [expected(before), expected(after)];
  assert.ok(
    candidates.some((c) => JSON.stringify(c) === JSON.stringify(res.body)),
    `got ${JSON.stringify(res.body)}\nexpected ${JSON.stringify(candidates[0])}`,
  );
  return res.body;
}

const annExpected = (now: number) => ({
  employeeId: ann.employeeId,
  totalSeconds: ANN_TOTAL,
  billableSeconds: ANN_BILLABLE,
  timeLogCount: ANN_LOGS,
  tasksAssigned: 2,
  months: annMonths(now),
});

const zeros = (employeeId: string) => (now: number) => ({
  employeeId,
  totalSeconds: 0,
  billableSeconds: 0,
  timeLogCount: 0,
  tasksAssigned: 0,
  months: monthLabels(now).map((month) => ({ month, seconds: 0 })),
});

test.before(async () => {
  t = await createTestApp();
  acme = await newTenant(t, 'Acme');
  other = await newTenant(t, 'Other');
  ann = await userWithRole(t, acme, 'EMPLOYEE', true);
  bob = await userWithRole(t, acme, 'EMPLOYEE', true);
  dan = await userWithRole(t, acme, 'MANAGER', true);
  cat = await userWithRole(t, other, 'EMPLOYEE', true);
  viewer = await userWithRole(t, acme, 'VIEWER');

  for (const log of annLogs()) {
    const { why: _why, ...body } = log;
    await created(await t.http.post('/api/time-log').set(acme.auth).send({ ...body, employeeId: ann.employeeId }));
  }
  // Dan's and Cat's time, which must not reach Ann's figures.
  const now = monthStart(0);
  await created(await t.http.post('/api/time-log').set(acme.auth).send({ employeeId: dan.employeeId, startedAt: iso(now), stoppedAt: iso(now + HOUR), isBillable: true }));
  await created(await t.http.post('/api/time-log').set(other.auth).send({ employeeId: cat.employeeId, startedAt: iso(now), stoppedAt: iso(now + HOUR), isBillable: true }));

  const task = async (session: Tenant, title: string, members: Array<string | undefined>) =>
    created(await t.http.post('/api/task').set(session.auth).send({ title, members: members.map((id) => ({ id })) }));
  await task(acme, 'Ann alone', [ann.employeeId]);
  await task(acme, 'Ann and Dan', [ann.employeeId, dan.employeeId]);
  await task(acme, 'Dan alone', [dan.employeeId]);
  await task(acme, 'Nobody', []);
  const theirs = await task(other, 'Cat alone', [cat.employeeId]);

  // Rows no route could write (a link and a log across tenants): the tenant conditions must hold anyway.
  await t.db('task_employee').insert({ taskId: theirs.id, employeeId: ann.employeeId });
  await t.db('time_log').insert({
    tenantId: other.tenantId,
    organizationId: other.organizationId,
    employeeId: ann.employeeId,
    startedAt: iso(now),
    stoppedAt: iso(now + HOUR),
    isBillable: true,
  });
});
test.after(async () => {
  await t.close();
});

test('the figures: totals over all time, billable part, every log counted, tasks, 12 months split at month edges', async () => {
  const body = await expectStatistics(ann.employeeId!, acme, annExpected);
  assert.is(body.months.length, 12);
  // The database holds what the fixtures say: the same sum over the tenant's stopped logs of Ann, 7 logs, one running.
  const [row] = await t.db('time_log')
    .where({ employeeId: ann.employeeId, tenantId: acme.tenantId })
    .select(t.db.raw('count(*)::int as n'), t.db.raw('count("stoppedAt")::int as stopped'), t.db.raw('coalesce(sum(duration), 0)::int as total'));
  assert.equal(row, { n: ANN_LOGS, stopped: ANN_LOGS - 1, total: ANN_TOTAL });
  const windowed = body.months.reduce((sum: number, m: { seconds: number }) => sum + m.seconds, 0);
  assert.is(windowed, ANN_TOTAL - 36000 - 1800, 'the months leave out only what fell before the window');
});

test('one SQL statement answers, with every value bound', async () => {
  const seen: Array<{ sql: string; bindings: unknown[] }> = [];
  const record = (q: { sql: string; bindings?: unknown[] }) => seen.push({ sql: q.sql, bindings: q.bindings ?? [] });
  t.db.on('query', record);
  try {
    assert.is((await statistics(ann.employeeId!, acme)).status, 200);
    assert.is((await statistics(randomUUID(), acme)).status, 404, 'a missing employee takes the same one statement');
  } finally {
    t.db.removeListener('query', record);
  }
  const reading = seen.filter((q) => /time_log|task_employee|"employee"/.test(q.sql));
  assert.is(reading.length, 2, reading.map((q) => q.sql).join('\n'));
  for (const { sql, bindings } of reading) {
    for (const part of ['"employee"', 'time_log', 'task_employee', 'generate_series']) assert.ok(sql.includes(part), `${part} in ${sql}`);
    assert.not.ok(sql.includes(acme.tenantId) || sql.includes(ann.employeeId!), 'values are bound, not written into the SQL');
    assert.ok(bindings.includes(acme.tenantId));
  }
});

test('the owner, an EMPLOYEE: its own statistics; another employee of its tenant is a 404', async () => {
  await expectStatistics(ann.employeeId!, ann, annExpected);
  assertNotFound(await statistics(bob.employeeId!, ann));
  assertNotFound(await statistics(ann.employeeId!, bob));
});

test('an EMPLOYEE without an employee record sees no employee (404)', async () => {
  const loner = await userWithRole(t, acme, 'EMPLOYEE');
  assertNotFound(await statistics(ann.employeeId!, loner));
});

test('a role that may read employees and time logs (MANAGER) gets the same answer', async () => {
  await expectStatistics(ann.employeeId!, dan, annExpected);
});

test('roles without the time-log read permission are a 403, even when they may read employees (VIEWER, DATA_ENTRY)', async () => {
  assertForbidden(await statistics(ann.employeeId!, viewer));
  const entry = await userWithRole(t, acme, 'DATA_ENTRY');
  assertForbidden(await statistics(ann.employeeId!, entry));
  // The same roles are refused the time logs themselves: the statistics tell no more than those.
  assert.is((await t.http.get('/api/time-log').set(viewer.auth)).status, 403);
});

test('roles without the employee read permission are a 403', async () => {
  for (const role of ['INTERVIEWER', 'CANDIDATE']) {
    const session = await userWithRole(t, acme, role);
    assertForbidden(await statistics(ann.employeeId!, session));
  }
});

test('no token: 401', async () => {
  assertUnauthorized(await statistics(ann.employeeId!));
});

test("another tenant's employee is a 404 both ways, and an unknown id a 404", async () => {
  assertNotFound(await statistics(cat.employeeId!, acme));
  assertNotFound(await statistics(ann.employeeId!, other));
  assertNotFound(await statistics(ann.employeeId!, cat));
  assertNotFound(await statistics(randomUUID(), acme));
});

test('the other tenant sees its own employee with only its own log and task', async () => {
  const now = Date.now();
  const res = await statistics(cat.employeeId!, other);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.totalSeconds, 3600);
  assert.is(res.body.billableSeconds, 3600);
  assert.is(res.body.timeLogCount, 1);
  assert.is(res.body.tasksAssigned, 1);
  assert.is(res.body.months.length, 12);
  assert.is(res.body.months[11].seconds, 3600, `current month of ${label(monthStart(0, now))}`);
});

test('an employee without time logs or tasks: 200 with zeros in every month', async () => {
  await expectStatistics(bob.employeeId!, acme, zeros(bob.employeeId!));
  await expectStatistics(bob.employeeId!, bob, zeros(bob.employeeId!));
});

test('an id that is not a UUID is a 400', async () => {
  for (const id of ['nope', '123', `${randomUUID()}x`]) assertError(await statistics(id, acme), 400, 'id must be a UUID');
});

test('any query parameter is a 400 naming it (the route takes none)', async () => {
  const path = `/api/employee/${ann.employeeId}/statistics`;
  assertError(await statistics(ann.employeeId!, acme, '?from=2025-01'), 400, `from is not a supported parameter of ${path}; it takes none`);
  const res = await statistics(ann.employeeId!, acme, '?months=24&relations[]=user');
  assertError(res, 400, `months is not a supported parameter of ${path}; it takes none`, `relations is not a supported parameter of ${path}; it takes none`);
  assertError(await statistics(ann.employeeId!, acme, '?__proto__=1'), 400);
});

test('a deleted employee is a 404', async () => {
  const gone = await userWithRole(t, acme, 'VIEWER', true);
  assert.is((await statistics(gone.employeeId!, acme)).status, 200);
  assert.is((await t.http.delete(`/api/employee/${gone.employeeId}`).set(acme.auth)).status, 204);
  assert.is((await t.db('employee').where({ id: gone.employeeId })).length, 0);
  assertNotFound(await statistics(gone.employeeId!, acme));
});

test('the OpenAPI document describes the route, and the answer fits its schema', async () => {
  const doc = t.openapi as Record<string, any>;
  const op = doc.paths['/api/employee/{id}/statistics']?.get;
  assert.ok(op, 'GET /api/employee/{id}/statistics is documented');
  assert.is(op.operationId, 'getEmployeeStatistics');
  assert.equal(op.parameters.filter((p: any) => p.in === 'path').map((p: any) => p.name), ['id']);
  for (const status of ['200', '400', '401', '403', '404', '503']) assert.ok(op.responses[status], `documents ${status}`);
  assert.equal(op.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/EmployeeStatistics' });
  const schema = doc.components.schemas.EmployeeStatistics;
  assert.ok(schema, 'EmployeeStatistics is a named schema of the components');
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const fits = ajv.compile(schema);
  for (const id of [ann.employeeId!, bob.employeeId!]) {
    const res = await statistics(id, acme);
    assert.ok(fits(res.body), JSON.stringify(fits.errors));
  }
});

test('a fixed clock: month names across the turn of a year, a log split over 31 December, the window start, a log after "now"', async () => {
  const now = new Date('2026-01-15T12:00:00Z');
  const modules = projectModules.map((m) => (m.name === 'employee-statistics' ? createEmployeeStatisticsModule(() => now) : m));
  const fixed = await createTestApp({ modules });
  try {
    const admin = await newTenant(fixed, 'Fixed');
    const eve = await userWithRole(fixed, admin, 'EMPLOYEE', true);
    const logs = [
      ['2025-12-31T23:00:00Z', '2026-01-01T01:00:00Z', true], // 3600 to 2025-12, 3600 to 2026-01
      ['2025-01-31T23:30:00Z', '2025-02-01T00:30:00Z', false], // 1800 before the window, 1800 to 2025-02
      ['2025-06-10T08:00:00.250Z', '2025-06-10T08:00:59.900Z', true], // 59.65 s: 59
      ['2026-02-02T10:00:00Z', '2026-02-02T11:00:00Z', false], // after "now": totals only
    ] as const;
    for (const [startedAt, stoppedAt, isBillable] of logs) {
      const res = await fixed.http.post('/api/time-log').set(admin.auth).send({ employeeId: eve.employeeId, startedAt, stoppedAt, isBillable });
      assert.is(res.status, 201, JSON.stringify(res.body));
    }
    const res = await fixed.http.get(`/api/employee/${eve.employeeId}/statistics`).set(eve.auth);
    assert.is(res.status, 200, JSON.stringify(res.body));
    const seconds: Record<string, number> = { '2025-02': 1800, '2025-06': 59, '2025-12': 3600, '2026-01': 3600 };
    const months = ['2025-02', '2025-03', '2025-04', '2025-05', '2025-06', '2025-07', '2025-08', '2025-09', '2025-10', '2025-11', '2025-12', '2026-01'];
    assert.equal(res.body, {
      employeeId: eve.employeeId,
      totalSeconds: 7200 + 3600 + 59 + 3600,
      billableSeconds: 7200 + 59,
      timeLogCount: 4,
      tasksAssigned: 0,
      months: months.map((month) => ({ month, seconds: seconds[month] ?? 0 })),
    });
  } finally {
    await fixed.close();
  }
});

test.run();
