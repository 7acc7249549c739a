// Reports (resources/report/): the catalogue, who may run what (401, 403, 404), every parameter
// problem as a 400, and the documented default ranges. The figures are in reports.test.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Admin = Session & { organizationId: string };

let t: TestApp;
let admin: Admin;
let employee: Session & { employeeId?: string };
let viewer: Session;
let dataEntry: Session;
test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t);
  employee = await userWithRole(t, admin, 'EMPLOYEE', true);
  viewer = await userWithRole(t, admin, 'VIEWER');
  dataEntry = await userWithRole(t, admin, 'DATA_ENTRY');
});
test.after(async () => {
  await t.close();
});

const SLUGS = ['time-log-daily', 'time-log-weekly', 'amounts-owed', 'project-budgets'];
const SUPPORTED = 'startDate, endDate, organizationId, employeeId, projectId, groupBy';
const UUID = '00000000-0000-4000-8000-000000000000';
const DAY_MS = 86_400_000;

function assertError(res: { status: number; body: any }, status: number, message?: string | string[]) {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.is(res.body.statusCode, status);
  assert.type(res.body.error, 'string');
  if (status === 400) assert.ok(Array.isArray(res.body.message), 'a 400 lists its problems');
  if (Array.isArray(message)) assert.equal(res.body.message, message);
  else if (message !== undefined) assert.is(res.body.message, message);
}

const get = (path: string, session?: Session) => (session ? t.http.get(path).set(session.auth) : t.http.get(path));

// ---------------------------------------------------------------------------------------------
// Catalogue

test('catalogue: every report with its slug, words, permission, groupings and parameters', async () => {
  const res = await get('/api/report', admin);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.total, 4);
  assert.equal(res.body.items.map((r: any) => r.slug), SLUGS);
  const bySlug = Object.fromEntries(res.body.items.map((r: any) => [r.slug, r]));
  const parameters = ['startDate', 'endDate', 'organizationId', 'employeeId', 'projectId', 'groupBy'];
  for (const slug of SLUGS) {
    assert.equal(Object.keys(bySlug[slug]).sort(), ['defaultGroupBy', 'description', 'groupBy', 'name', 'parameters', 'period', 'permissions', 'slug']);
    assert.equal(bySlug[slug].parameters, parameters);
    assert.ok(bySlug[slug].name.length && bySlug[slug].description.length && bySlug[slug].period.length);
  }
  // Every report needs the time-log read permission (TIME_TRACKER); the money reports the employee
  // read permission (bill rates) and INVOICES_VIEW; project-budgets the project read permission (budgets).
  assert.equal([bySlug['time-log-daily'].permissions, bySlug['time-log-daily'].groupBy, bySlug['time-log-daily'].defaultGroupBy], [['TIME_TRACKER'], ['date', 'employee', 'project'], 'date']);
  assert.equal([bySlug['time-log-weekly'].permissions, bySlug['time-log-weekly'].defaultGroupBy], [['TIME_TRACKER'], 'date']);
  assert.equal([bySlug['amounts-owed'].permissions, bySlug['amounts-owed'].groupBy, bySlug['amounts-owed'].defaultGroupBy], [['TIME_TRACKER', 'ORG_EMPLOYEES_VIEW', 'INVOICES_VIEW'], ['employee', 'project', 'date'], 'employee']);
  assert.equal([bySlug['project-budgets'].permissions, bySlug['project-budgets'].groupBy, bySlug['project-budgets'].defaultGroupBy], [['TIME_TRACKER', 'ORG_EMPLOYEES_VIEW', 'ORG_PROJECT_VIEW', 'INVOICES_VIEW'], ['project'], 'project']);
  // The permissions listed are the registry's: the time-log resource's read permission comes first.
  const timeLogRead = t.engine.registry.get('time-log')!.permissions.read;
  for (const slug of SLUGS) assert.is(bySlug[slug].permissions[0], timeLogRead);
  assert.match(bySlug['time-log-daily'].period, /last 7 UTC days/);
});

test("catalogue: only the reports the caller's role may run", async () => {
  const slugsFor = async (session: Session) => {
    const res = await get('/api/report', session);
    assert.is(res.status, 200);
    assert.is(res.body.total, res.body.items.length);
    return res.body.items.map((r: any) => r.slug);
  };
  assert.equal(await slugsFor(employee), ['time-log-daily', 'time-log-weekly']);
  // VIEWER and DATA_ENTRY hold INVOICES_VIEW but not TIME_TRACKER: no report sums logs they may not read.
  assert.equal(await slugsFor(viewer), []);
  assert.equal(await slugsFor(dataEntry), []);
  const manager = await userWithRole(t, admin, 'MANAGER');
  assert.equal(await slugsFor(manager), SLUGS);
  const candidate = await userWithRole(t, admin, 'CANDIDATE');
  const none = await get('/api/report', candidate);
  assert.equal(none.body, { items: [], total: 0 });
});

test('catalogue: takes no parameters (400 naming them)', async () => {
  assertError(await get('/api/report?take=5&groupBy=date', admin), 400, [
    'take is not a supported parameter of /api/report; it takes none',
    'groupBy is not a supported parameter of /api/report; it takes none',
  ]);
});

// ---------------------------------------------------------------------------------------------
// 401, 403, 404

test('401 without a token or with a bad one, before anything else (an unknown report too)', async () => {
  for (const path of ['/api/report', '/api/report/time-log-daily', '/api/report/no-such-report', '/api/report/amounts-owed?bad=1']) {
    const res = await get(path);
    assertError(res, 401, 'Unauthorized');
    assert.is(res.headers['www-authenticate'], 'Bearer');
    assertError(await t.http.get(path).set({ Authorization: 'Bearer not.a.token' }), 401, 'Unauthorized');
  }
});

test('404 for an unknown report, whatever the role and parameters', async () => {
  for (const session of [admin, employee, viewer]) {
    const res = await get('/api/report/no-such-report?foo=bar', session);
    assertError(res, 404, 'No such report; reports: time-log-daily, time-log-weekly, amounts-owed, project-budgets');
  }
  assertError(await get('/api/report/TIME-LOG-DAILY', admin), 404);
});

test("403 when the role lacks the report's permission, before parameters are looked at", async () => {
  for (const slug of ['time-log-daily', 'time-log-weekly']) {
    assertError(await get(`/api/report/${slug}`, viewer), 403, 'Forbidden resource');
    assertError(await get(`/api/report/${slug}?groupBy=nope`, dataEntry), 403, 'Forbidden resource');
  }
  for (const slug of ['amounts-owed', 'project-budgets']) {
    // EMPLOYEE: TIME_TRACKER but neither INVOICES_VIEW nor ORG_EMPLOYEES_VIEW; VIEWER and DATA_ENTRY: INVOICES_VIEW but not TIME_TRACKER.
    for (const session of [employee, viewer, dataEntry]) {
      assertError(await get(`/api/report/${slug}`, session), 403, 'Forbidden resource');
      assertError(await get(`/api/report/${slug}?startDate=bad`, session), 403, 'Forbidden resource');
    }
  }
  const candidate = await userWithRole(t, admin, 'CANDIDATE');
  for (const slug of SLUGS) assertError(await get(`/api/report/${slug}`, candidate), 403);
});

test('a Tenant-Id header naming another tenant is a 403', async () => {
  const res = await t.http.get('/api/report/time-log-daily').set(admin.auth).set('Tenant-Id', UUID);
  assertError(res, 403);
});

// ---------------------------------------------------------------------------------------------
// 400

test('unknown parameters: a 400 naming each and the supported ones', async () => {
  const res = await get('/api/report/time-log-daily?take=10&where[employeeId]=x', admin);
  assertError(res, 400, [
    `take is not a supported parameter of report time-log-daily; supported: ${SUPPORTED}`,
    `where is not a supported parameter of report time-log-daily; supported: ${SUPPORTED}`,
  ]);
});

test('dates: the list parameters\' rules and messages', async () => {
  const path = '/api/report/time-log-daily';
  assertError(await get(`${path}?startDate=yesterday`, admin), 400, ['startDate must be a valid ISO 8601 date string']);
  assertError(await get(`${path}?startDate=2026-02-31`, admin), 400, ['startDate must be a valid ISO 8601 date string']);
  assertError(await get(`${path}?endDate=2026-01-05T10:00:00+25`, admin), 400, ['endDate must be a valid ISO 8601 date string']);
  // A date-time without a zone is UTC.
  const utc = await get(`${path}?startDate=2026-01-05T08:00:00&endDate=2026-01-05T10:00`, admin);
  assert.equal([utc.body.startDate, utc.body.endDate], ['2026-01-05T08:00:00.000Z', '2026-01-05T10:00:00.000Z']);
  assertError(await get(`${path}?startDate=2026-01-05&startDate=2026-01-06`, admin), 400, ['startDate must be a single value']);
  assertError(await get(`${path}?startDate=2026-01-10&endDate=2026-01-09`, admin), 400, ['startDate must not be after endDate']);
  assertError(await get(`${path}?startDate=2026-01-10T00:00:01Z&endDate=2026-01-10T00:00:00Z`, admin), 400, ['startDate must not be after endDate']);
  // A date-only endDate is its whole day: the same day on both sides is one day; with a zone, an offset counts.
  const day = await get(`${path}?startDate=2026-01-10&endDate=2026-01-10`, admin);
  assert.is(day.status, 200);
  assert.equal([day.body.startDate, day.body.endDate], ['2026-01-10T00:00:00.000Z', '2026-01-11T00:00:00.000Z']);
  const offset = await get(`${path}?startDate=${encodeURIComponent('2026-01-10T08:00:00+02:00')}&endDate=2026-01-10T12:00:00Z`, admin);
  assert.equal([offset.body.startDate, offset.body.endDate], ['2026-01-10T06:00:00.000Z', '2026-01-10T12:00:00.000Z']);
});

test('ranges longer than a report allows are a 400; project-budgets has no limit', async () => {
  const message = (days: number) => [`the range from startDate to endDate must not be longer than ${days} days`];
  assertError(await get('/api/report/time-log-daily?startDate=2026-01-01&endDate=2027-01-02', admin), 400, message(366));
  assert.is((await get('/api/report/time-log-daily?startDate=2026-01-01&endDate=2027-01-01', admin)).status, 200);
  assertError(await get('/api/report/time-log-daily?startDate=2026-01-01&endDate=9999-12-31', admin), 400, message(366));
  assertError(await get('/api/report/time-log-weekly?startDate=2026-01-01&endDate=2027-01-07', admin), 400, message(371));
  assert.is((await get('/api/report/time-log-weekly?startDate=2026-01-01&endDate=2027-01-06', admin)).status, 200);
  assertError(await get('/api/report/amounts-owed?startDate=2020-01-01&endDate=2026-01-01', admin), 400, message(366));
  const budgets = await get('/api/report/project-budgets?startDate=1990-01-01&endDate=9999-12-31', admin);
  assert.is(budgets.status, 200, JSON.stringify(budgets.body));
  assert.equal([budgets.body.startDate, budgets.body.endDate], ['1990-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z']);
});

test('a date-only endDate of 9999-12-31 is that whole day, stopped at the last storable instant (not "no end")', async () => {
  const owner = employee as Session & { employeeId: string };
  const logged = await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: owner.employeeId, startedAt: '9999-12-31T23:00:00Z', stoppedAt: '9999-12-31T23:30:00Z' });
  assert.is(logged.status, 201, JSON.stringify(logged.body));
  const run = async (path: string) => {
    const res = await get(path, admin);
    assert.is(res.status, 200, JSON.stringify(res.body));
    return [res.body.startDate, res.body.endDate, res.body.total?.seconds ?? res.body.totals?.[0]?.seconds];
  };
  const LAST = '9999-12-31T23:59:59.999Z';
  assert.equal(await run('/api/report/time-log-daily?startDate=9999-12-25&endDate=9999-12-31'), ['9999-12-25T00:00:00.000Z', LAST, 1800]);
  // Alone, the start is counted back from the day's end: the 7 whole days 12-25 … 12-31.
  assert.equal(await run('/api/report/time-log-daily?endDate=9999-12-31'), ['9999-12-25T00:00:00.000Z', LAST, 1800]);
  assert.equal(await run('/api/report/time-log-weekly?endDate=9999-12-31'), ['9999-12-04T00:00:00.000Z', LAST, 1800]);
  assert.equal(await run('/api/report/amounts-owed?endDate=9999-12-31'), ['9999-12-01T00:00:00.000Z', LAST, 1800]);
  assert.equal(await run('/api/report/time-log-daily?startDate=9999-12-31&endDate=9999-12-31'), ['9999-12-31T00:00:00.000Z', LAST, 1800]);
  assert.equal(await run('/api/report/project-budgets?endDate=9999-12-31'), [null, LAST, 0]);
  // The log is removed so that the other tests' tenant is as it was.
  await t.db('time_log').where({ id: logged.body.id }).delete();
  assert.is((await t.db('time_log').where({ id: logged.body.id })).length, 0);
});

test('ids: every id a UUID, organizationId a single one, at most 100 per list', async () => {
  const path = '/api/report/time-log-daily';
  assertError(await get(`${path}?employeeId=abc`, admin), 400, ['each value in employeeId must be a UUID']);
  assertError(await get(`${path}?employeeId[]=${UUID}&employeeId[]=42`, admin), 400, ['each value in employeeId must be a UUID']);
  assertError(await get(`${path}?projectId[0]=x`, admin), 400, ['each value in projectId must be a UUID']);
  assertError(await get(`${path}?employeeId[a]=${UUID}`, admin), 400, ['employeeId must be a list: employeeId=…&employeeId=…, employeeId[]=… or employeeId[0]=…']);
  assertError(await get(`${path}?employeeId=`, admin), 400, ['each value in employeeId must be a UUID']);
  assertError(await get(`${path}?organizationId=acme`, admin), 400, ['organizationId must be a UUID']);
  assertError(await get(`${path}?organizationId=${UUID}&organizationId=${UUID}`, admin), 400, ['organizationId must be a single value']);
  const hundred = Array.from({ length: 100 }, (_, i) => `employeeId=00000000-0000-4000-8000-${String(i).padStart(12, '0')}`).join('&');
  const ok = await get(`${path}?${hundred}`, admin);
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assertError(await get(`${path}?${hundred}&employeeId=${UUID.replace(/0$/, 'f')}`, admin), 400, ['a query parameter must not have more than 100 values']);
  const upper = await get(`${path}?projectId=${UUID.toUpperCase().replace('-4', '-4')}`, admin);
  assert.is(upper.status, 200, 'ids are case-insensitive');
});

test('groupBy: one of the values the report takes', async () => {
  assertError(await get('/api/report/time-log-daily?groupBy=week', admin), 400, ['groupBy must be one of the following values: date, employee, project']);
  assertError(await get('/api/report/time-log-weekly?groupBy=date&groupBy=project', admin), 400, ['groupBy must be a single value']);
  assertError(await get('/api/report/amounts-owed?groupBy=Employee', admin), 400, ['groupBy must be one of the following values: employee, project, date']);
  assertError(await get('/api/report/project-budgets?groupBy=date', admin), 400, ['groupBy must be one of the following values: project']);
  for (const [slug, groupBy] of [['time-log-daily', 'project'], ['amounts-owed', 'date'], ['project-budgets', 'project']]) {
    const res = await get(`/api/report/${slug}?groupBy=${groupBy}`, admin);
    assert.is(res.status, 200);
    assert.is(res.body.groupBy, groupBy);
  }
});

test('every problem of a request at once', async () => {
  const res = await get(`/api/report/amounts-owed?startDate=nope&employeeId=1&projectId=${UUID}&organizationId=2&groupBy=week&page=2`, admin);
  assertError(res, 400, [
    `page is not a supported parameter of report amounts-owed; supported: ${SUPPORTED}`,
    'startDate must be a valid ISO 8601 date string',
    'organizationId must be a UUID',
    'each value in employeeId must be a UUID',
    'groupBy must be one of the following values: employee, project, date',
  ]);
});

test('hostile query strings are 400s, never 500s', async () => {
  for (const query of ['startDate[__proto__]=1', 'employeeId[a][b][c][d]=1', 'startDate[]=2026-01-01', `groupBy[x]=date`, 'endDate=%00']) {
    const res = await get(`/api/report/time-log-daily?${query}`, admin);
    assertError(res, 400);
  }
});

// ---------------------------------------------------------------------------------------------
// Default ranges

const iso = (ms: number) => new Date(ms).toISOString();
const midnight = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/** The answer's range against what the rule gives for the time before and after the request (a run across midnight passes). */
async function assertRange(path: string, expected: (now: number) => [string | null, string | null]) {
  const before = expected(Date.now());
  const res = await get(path, admin);
  const after = expected(Date.now());
  assert.is(res.status, 200, JSON.stringify(res.body));
  const got = [res.body.startDate, res.body.endDate];
  assert.ok(JSON.stringify(got) === JSON.stringify(before) || JSON.stringify(got) === JSON.stringify(after), `${path}: ${JSON.stringify(got)} is not ${JSON.stringify(before)}`);
}

test('default ranges: last 7 days, last 4 ISO weeks, the current month, all time', async () => {
  await assertRange('/api/report/time-log-daily', (now) => [iso(midnight(now) - 6 * DAY_MS), iso(midnight(now) + DAY_MS)]);
  await assertRange('/api/report/time-log-weekly', (now) => {
    const nextMonday = midnight(now) + (7 - ((new Date(now).getUTCDay() + 6) % 7)) * DAY_MS;
    return [iso(nextMonday - 28 * DAY_MS), iso(nextMonday)];
  });
  await assertRange('/api/report/amounts-owed', (now) => {
    const d = new Date(now);
    return [iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1)), iso(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1))];
  });
  await assertRange('/api/report/project-budgets', () => [null, null]);
});

test('one bound given: the other follows from the report\'s period', async () => {
  const range = async (path: string) => {
    const res = await get(path, admin);
    assert.is(res.status, 200, JSON.stringify(res.body));
    return [res.body.startDate, res.body.endDate];
  };
  assert.equal(await range('/api/report/time-log-daily?startDate=2026-01-05'), ['2026-01-05T00:00:00.000Z', '2026-01-12T00:00:00.000Z']);
  assert.equal(await range('/api/report/time-log-daily?endDate=2026-01-11'), ['2026-01-05T00:00:00.000Z', '2026-01-12T00:00:00.000Z']);
  assert.equal(await range('/api/report/time-log-weekly?startDate=2026-01-05'), ['2026-01-05T00:00:00.000Z', '2026-02-02T00:00:00.000Z']);
  assert.equal(await range('/api/report/time-log-weekly?endDate=2026-02-01'), ['2026-01-05T00:00:00.000Z', '2026-02-02T00:00:00.000Z']);
  assert.equal(await range('/api/report/amounts-owed?startDate=2026-01-31'), ['2026-01-31T00:00:00.000Z', '2026-02-28T00:00:00.000Z']);
  assert.equal(await range('/api/report/amounts-owed?startDate=2026-01-15T12:00:00Z'), ['2026-01-15T12:00:00.000Z', '2026-02-15T12:00:00.000Z']);
  assert.equal(await range('/api/report/amounts-owed?endDate=2026-03-31'), ['2026-03-01T00:00:00.000Z', '2026-04-01T00:00:00.000Z']);
  assert.equal(await range('/api/report/project-budgets?startDate=2026-01-05'), ['2026-01-05T00:00:00.000Z', null]);
  // Near the ends of the calendar: never past what the database stores.
  assert.equal(await range('/api/report/time-log-daily?startDate=9999-12-30'), ['9999-12-30T00:00:00.000Z', '9999-12-31T23:59:59.999Z']);
  assert.equal(await range('/api/report/amounts-owed?startDate=9999-12-15'), ['9999-12-15T00:00:00.000Z', '9999-12-31T23:59:59.999Z']);
  assert.equal(await range('/api/report/time-log-weekly?endDate=1000-01-02'), ['0999-12-06T00:00:00.000Z', '1000-01-03T00:00:00.000Z']);
  assert.equal(await range('/api/report/project-budgets?endDate=2026-01-05'), [null, '2026-01-06T00:00:00.000Z']);
});

// ---------------------------------------------------------------------------------------------
// Empty reports

test('a tenant without time logs gets empty groups and zero totals, in every shape', async () => {
  const fresh = await newTenant(t, 'Empty');
  const daily = await get('/api/report/time-log-daily?startDate=2026-01-05&endDate=2026-01-07', fresh);
  assert.equal(daily.body, { report: 'time-log-daily', groupBy: 'date', startDate: '2026-01-05T00:00:00.000Z', endDate: '2026-01-08T00:00:00.000Z', groups: [], total: { seconds: 0, billableSeconds: 0 } });
  const weekly = await get('/api/report/time-log-weekly?groupBy=employee', fresh);
  assert.equal([weekly.body.groups, weekly.body.total], [[], { seconds: 0, billableSeconds: 0 }]);
  const owed = await get('/api/report/amounts-owed?groupBy=project', fresh);
  assert.equal([owed.body.groups, owed.body.totals], [[], []]);
  const budgets = await get('/api/report/project-budgets', fresh);
  assert.equal([budgets.body.groups, budgets.body.total], [[], { seconds: 0, billableSeconds: 0, hours: 0 }]);
  // A project without logs is still listed, with nothing spent.
  const project = await t.http.post('/api/organization-project').set(fresh.auth).send({ name: 'Idle', budget: 0, budgetType: 'cost' });
  assert.is(project.status, 201);
  const idle = await get('/api/report/project-budgets', fresh);
  assert.equal(idle.body.groups.map((g: any) => [g.projectName, g.seconds, g.cost, g.spent, g.remaining, g.percentUsed, g.rows]), [['Idle', 0, 0, 0, 0, null, []]]);
});

test('an EMPLOYEE without an employee record counts nothing', async () => {
  const email = uniqueEmail('loner');
  const reg = await t.http.post('/api/auth/register').set(admin.auth).send({ user: { firstName: 'Lo', lastName: 'Ner', email, role: 'EMPLOYEE' }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(reg.status, 201);
  const loner = await login(t, email);
  const owner = employee as Session & { employeeId: string };
  const logged = await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: owner.employeeId, startedAt: '2026-01-05T08:00:00Z', stoppedAt: '2026-01-05T09:00:00Z' });
  assert.is(logged.status, 201, JSON.stringify(logged.body));
  const res = await get('/api/report/time-log-daily?startDate=2026-01-05&endDate=2026-01-05', loner);
  assert.is(res.status, 200);
  assert.equal([res.body.groups, res.body.total], [[], { seconds: 0, billableSeconds: 0 }]);
  const own = await get('/api/report/time-log-daily?startDate=2026-01-05&endDate=2026-01-05', employee);
  assert.equal(own.body.total, { seconds: 3600, billableSeconds: 0 });
});

test.run();
