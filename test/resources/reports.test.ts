// Reports (resources/report/) through HTTP against a real database: every figure below is
// worked out by hand from the fixture's time logs (listed here), never by the report's formula.
//
//   Ann Archer  EMPLOYEE role, Acme, 60 USD/h      Bob Baker   DATA_ENTRY role, Acme, 45/h, no currency → EUR
//   Dee Dalton  Beta, 20/h, no currency → USD (Beta's currency)
//   Apollo (Acme, budget 10 hours)   Borealis (Acme, budget 500 cost)   Cosmos (Acme, no budget)
//   Delta (Beta, budget 2 hours)
//
//   L1  Ann  Apollo    billable  01-05 09:00 → 01-05 11:00      7200 s
//   L2  Ann  Apollo    —         01-05 23:00 → 01-06 01:30      9000 s (3600 on the 5th, 5400 on the 6th)
//   L3  Bob  Borealis  billable  01-04 22:00 → 01-05 02:00     14400 s (7200 on Sunday the 4th, 7200 on the 5th)
//   L4  Bob  Cosmos    —         01-07 22:30 → 01-08 01:00      9000 s (5400 on the 7th, 3600 on the 8th)
//   L5  Ann  —         billable  01-08 00:00 → 01-08 01:00      3600 s
//   L6  Bob  Borealis  billable  01-04 23:00 → 01-05 00:00      3600 s
//   L7  Ann  Borealis  billable  01-06 10:00 → (running)           0 s
//   L8  Bob  Apollo    billable  01-06 12:00 → 01-06 12:45      2700 s
//   L9  Dee  Delta     billable  01-06 08:00 → 01-06 09:00:50   3650 s (Beta)
//   L10 Ann  —         —         01-07 10:00 → 01-07 10:20      1200 s
//   L11 Ann  Cosmos    —         01-05 00:00 → 01-05 00:30      1800 s
//   L12 Bob  Cosmos    —         01-14 23:00 → 01-15 01:00      7200 s (3600 on the 14th)
//   Stranger tenant: Sam, 50 EUR/h, 01-06 09:00 → 17:00 (28800 s, billable) on its own project.
//
// The daily range most tests use is startDate=2026-01-05&endDate=2026-01-07: [01-05 00:00, 01-08 00:00).
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, PASSWORD, uniqueEmail, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Admin = Session & { organizationId: string };

interface ReportFixture {
  admin: Admin;
  ann: Session & { employeeId: string };
  bob: Session & { employeeId: string };
  viewer: Session;
  beta: string;
  employees: { ann: string; bob: string; dee: string };
  projects: { apollo: string; borealis: string; cosmos: string; delta: string };
  stranger: Admin;
  /** Ids of the tenant's time logs, in the order above. */
  logs: string[];
}

async function post(t: TestApp, session: Session, path: string, body: Record<string, unknown>) {
  const res = await t.http.post(path).set(session.auth).send(body);
  assert.is(res.status, 201, `${path}: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, any>;
}

async function user(t: TestApp, admin: Admin, role: string): Promise<{ email: string; id: string }> {
  const email = uniqueEmail(role.toLowerCase());
  const res = await t.http.post('/api/auth/register').set(admin.auth).send({ user: { firstName: 'X', lastName: role, email, role }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  return { email, id: res.body.id };
}

async function employee(t: TestApp, admin: Admin, userId: string, body: Record<string, unknown>): Promise<string> {
  return (await post(t, admin, '/api/employee', { userId, ...body })).id;
}

/** An employee of the admin's tenant with a user of the given role, signed in (its token carries the employee). */
async function employeeWithLogin(t: TestApp, admin: Admin, role: string, body: Record<string, unknown>) {
  const account = await user(t, admin, role);
  const employeeId = await employee(t, admin, account.id, body);
  return { ...(await login(t, account.email)), employeeId };
}

const at = (dayAndTime: string) => `2026-${dayAndTime.replace(' ', 'T')}Z`;

async function buildReportFixture(t: TestApp): Promise<ReportFixture> {
  const admin = await newTenant(t, 'Acme');
  const beta = (await post(t, admin, '/api/organization', { name: 'Beta', currency: 'USD' })).id;
  const acme = admin.organizationId;
  const ann = await employeeWithLogin(t, admin, 'EMPLOYEE', { firstName: 'Ann', lastName: 'Archer', organizationId: acme, billRateValue: 60, billRateCurrency: 'USD' });
  const bob = await employeeWithLogin(t, admin, 'DATA_ENTRY', { firstName: 'Bob', lastName: 'Baker', organizationId: acme, billRateValue: 45 });
  const dee = await employee(t, admin, (await user(t, admin, 'EMPLOYEE')).id, { firstName: 'Dee', lastName: 'Dalton', organizationId: beta, billRateValue: 20 });
  const viewerAccount = await user(t, admin, 'VIEWER');
  const viewer = await login(t, viewerAccount.email);
  const project = async (name: string, organizationId: string, budget?: number, budgetType?: string) =>
    (await post(t, admin, '/api/organization-project', { name, organizationId, ...(budget === undefined ? {} : { budget, budgetType }) })).id as string;
  const projects = {
    apollo: await project('Apollo', acme, 10, 'hours'),
    borealis: await project('Borealis', acme, 500, 'cost'),
    cosmos: await project('Cosmos', acme),
    delta: await project('Delta', beta, 2, 'hours'),
  };
  const log = async (employeeId: string, projectId: string | null, isBillable: boolean, from: string, to: string | null, organizationId = acme) =>
    (await post(t, admin, '/api/time-log', { employeeId, projectId, isBillable, organizationId, startedAt: at(from), stoppedAt: to && at(to) })).id as string;
  const { employeeId: annId } = ann;
  const { employeeId: bobId } = bob;
  const logs = [
    await log(annId, projects.apollo, true, '01-05 09:00:00', '01-05 11:00:00'),
    await log(annId, projects.apollo, false, '01-05 23:00:00', '01-06 01:30:00'),
    await log(bobId, projects.borealis, true, '01-04 22:00:00', '01-05 02:00:00'),
    await log(bobId, projects.cosmos, false, '01-07 22:30:00', '01-08 01:00:00'),
    await log(annId, null, true, '01-08 00:00:00', '01-08 01:00:00'),
    await log(bobId, projects.borealis, true, '01-04 23:00:00', '01-05 00:00:00'),
    await log(annId, projects.borealis, true, '01-06 10:00:00', null),
    await log(bobId, projects.apollo, true, '01-06 12:00:00', '01-06 12:45:00'),
    await log(dee, projects.delta, true, '01-06 08:00:00', '01-06 09:00:50', beta),
    await log(annId, null, false, '01-07 10:00:00', '01-07 10:20:00'),
    await log(annId, projects.cosmos, false, '01-05 00:00:00', '01-05 00:30:00'),
    await log(bobId, projects.cosmos, false, '01-14 23:00:00', '01-15 01:00:00'),
  ];
  const stranger = await newTenant(t, 'Stranger');
  const sam = await employee(t, stranger, stranger.userId, { firstName: 'Sam', lastName: 'Stranger', billRateValue: 50 });
  const samProject = (await post(t, stranger, '/api/organization-project', { name: 'Apollo', budget: 1, budgetType: 'hours' })).id;
  await post(t, stranger, '/api/time-log', { employeeId: sam, projectId: samProject, isBillable: true, startedAt: at('01-06 09:00:00'), stoppedAt: at('01-06 17:00:00') });
  return { admin, ann, bob, viewer, beta, employees: { ann: annId, bob: bobId, dee }, projects, stranger, logs };
}

let t: TestApp;
let f: ReportFixture;
test.before(async () => {
  t = await createTestApp();
  f = await buildReportFixture(t);
});
test.after(async () => {
  await t.close();
});

const RANGE = 'startDate=2026-01-05&endDate=2026-01-07';

async function report(session: Session, slug: string, query = RANGE) {
  const res = await t.http.get(`/api/report/${slug}?${query}`).set(session.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body as Record<string, any>;
}

test('fixture: the tenant has its twelve time logs, one of them running, and nothing was written by reading', async () => {
  const before = await t.db('time_log').where({ tenantId: f.admin.tenantId }).select('id', 'duration', 'updatedAt').orderBy('id');
  assert.is(before.length, 12);
  assert.is(before.filter((r) => r.duration === null).length, 1);
  await report(f.admin, 'time-log-daily');
  await report(f.admin, 'amounts-owed');
  await report(f.admin, 'project-budgets');
  const after = await t.db('time_log').where({ tenantId: f.admin.tenantId }).select('id', 'duration', 'updatedAt').orderBy('id');
  assert.equal(after, before);
});

test('time-log-daily grouped by date: midnight split, range edges clipped, running log and edge-touching logs count nothing', async () => {
  const { employees: e, projects: p } = f;
  const body = await report(f.admin, 'time-log-daily');
  assert.equal(body, {
    report: 'time-log-daily',
    groupBy: 'date',
    startDate: '2026-01-05T00:00:00.000Z',
    endDate: '2026-01-08T00:00:00.000Z',
    groups: [
      {
        date: '2026-01-05',
        seconds: 19800,
        billableSeconds: 14400,
        rows: [
          { date: '2026-01-05', employeeId: e.ann, employeeName: 'Ann Archer', projectId: p.apollo, projectName: 'Apollo', seconds: 10800, billableSeconds: 7200 },
          { date: '2026-01-05', employeeId: e.ann, employeeName: 'Ann Archer', projectId: p.cosmos, projectName: 'Cosmos', seconds: 1800, billableSeconds: 0 },
          { date: '2026-01-05', employeeId: e.bob, employeeName: 'Bob Baker', projectId: p.borealis, projectName: 'Borealis', seconds: 7200, billableSeconds: 7200 },
        ],
      },
      {
        date: '2026-01-06',
        seconds: 11750,
        billableSeconds: 6350,
        rows: [
          { date: '2026-01-06', employeeId: e.ann, employeeName: 'Ann Archer', projectId: p.apollo, projectName: 'Apollo', seconds: 5400, billableSeconds: 0 },
          { date: '2026-01-06', employeeId: e.bob, employeeName: 'Bob Baker', projectId: p.apollo, projectName: 'Apollo', seconds: 2700, billableSeconds: 2700 },
          { date: '2026-01-06', employeeId: e.dee, employeeName: 'Dee Dalton', projectId: p.delta, projectName: 'Delta', seconds: 3650, billableSeconds: 3650 },
        ],
      },
      {
        date: '2026-01-07',
        seconds: 6600,
        billableSeconds: 0,
        rows: [
          { date: '2026-01-07', employeeId: e.ann, employeeName: 'Ann Archer', projectId: null, projectName: null, seconds: 1200, billableSeconds: 0 },
          { date: '2026-01-07', employeeId: e.bob, employeeName: 'Bob Baker', projectId: p.cosmos, projectName: 'Cosmos', seconds: 5400, billableSeconds: 0 },
        ],
      },
    ],
    total: { seconds: 38150, billableSeconds: 20750 },
  });
});

test('time-log-daily grouped by employee: a group per employee with its subtotal, rows by date then project', async () => {
  const { employees: e, projects: p } = f;
  const body = await report(f.admin, 'time-log-daily', `${RANGE}&groupBy=employee`);
  assert.is(body.groupBy, 'employee');
  const row = (date: string, employee: string, name: string, projectId: string | null, projectName: string | null, seconds: number, billableSeconds: number) =>
    ({ date, employeeId: employee, employeeName: name, projectId, projectName, seconds, billableSeconds });
  assert.equal(body.groups, [
    {
      employeeId: e.ann,
      employeeName: 'Ann Archer',
      seconds: 19200,
      billableSeconds: 7200,
      rows: [
        row('2026-01-05', e.ann, 'Ann Archer', p.apollo, 'Apollo', 10800, 7200),
        row('2026-01-05', e.ann, 'Ann Archer', p.cosmos, 'Cosmos', 1800, 0),
        row('2026-01-06', e.ann, 'Ann Archer', p.apollo, 'Apollo', 5400, 0),
        row('2026-01-07', e.ann, 'Ann Archer', null, null, 1200, 0),
      ],
    },
    {
      employeeId: e.bob,
      employeeName: 'Bob Baker',
      seconds: 15300,
      billableSeconds: 9900,
      rows: [
        row('2026-01-05', e.bob, 'Bob Baker', p.borealis, 'Borealis', 7200, 7200),
        row('2026-01-06', e.bob, 'Bob Baker', p.apollo, 'Apollo', 2700, 2700),
        row('2026-01-07', e.bob, 'Bob Baker', p.cosmos, 'Cosmos', 5400, 0),
      ],
    },
    { employeeId: e.dee, employeeName: 'Dee Dalton', seconds: 3650, billableSeconds: 3650, rows: [row('2026-01-06', e.dee, 'Dee Dalton', p.delta, 'Delta', 3650, 3650)] },
  ]);
  assert.equal(body.total, { seconds: 38150, billableSeconds: 20750 });
});

test('time-log-daily grouped by project: projects by name, time without a project last', async () => {
  const { employees: e, projects: p } = f;
  const body = await report(f.admin, 'time-log-daily', `${RANGE}&groupBy=project`);
  const summary = body.groups.map((g: any) => [g.projectId, g.projectName, g.seconds, g.billableSeconds, g.rows.map((r: any) => [r.date, r.employeeId, r.seconds, r.billableSeconds])]);
  assert.equal(summary, [
    [p.apollo, 'Apollo', 18900, 9900, [['2026-01-05', e.ann, 10800, 7200], ['2026-01-06', e.ann, 5400, 0], ['2026-01-06', e.bob, 2700, 2700]]],
    [p.borealis, 'Borealis', 7200, 7200, [['2026-01-05', e.bob, 7200, 7200]]],
    [p.cosmos, 'Cosmos', 7200, 0, [['2026-01-05', e.ann, 1800, 0], ['2026-01-07', e.bob, 5400, 0]]],
    [p.delta, 'Delta', 3650, 3650, [['2026-01-06', e.dee, 3650, 3650]]],
    [null, null, 1200, 0, [['2026-01-07', e.ann, 1200, 0]]],
  ]);
  assert.equal(body.total, { seconds: 38150, billableSeconds: 20750 });
});

test('time-log-daily: a range starting or ending mid-day counts only the part inside it', async () => {
  // [01-05 10:00, 01-06 01:00): L1 10:00–11:00 (3600, billable), L2 23:00–01:00 (3600 + 3600).
  const body = await report(f.admin, 'time-log-daily', `startDate=2026-01-05T10:00:00Z&endDate=2026-01-06T01:00:00Z&employeeId=${f.employees.ann}`);
  assert.is(body.startDate, '2026-01-05T10:00:00.000Z');
  assert.is(body.endDate, '2026-01-06T01:00:00.000Z');
  assert.equal(body.groups.map((g: any) => [g.date, g.seconds, g.billableSeconds]), [['2026-01-05', 7200, 3600], ['2026-01-06', 3600, 0]]);
  assert.equal(body.total, { seconds: 10800, billableSeconds: 3600 });
});

test('time-log-weekly: ISO weeks shown as their Monday; a log crossing Sunday midnight or the range end is split', async () => {
  const { employees: e, projects: p } = f;
  // [01-01, 01-15): weeks of Monday 2025-12-29, 2026-01-05 and 2026-01-12.
  const body = await report(f.admin, 'time-log-weekly', 'startDate=2026-01-01&endDate=2026-01-14');
  assert.is(body.startDate, '2026-01-01T00:00:00.000Z');
  assert.is(body.endDate, '2026-01-15T00:00:00.000Z');
  const summary = body.groups.map((g: any) => [g.date, g.seconds, g.billableSeconds, g.rows.map((r: any) => [r.employeeName, r.projectName, r.seconds, r.billableSeconds])]);
  assert.equal(summary, [
    ['2025-12-29', 10800, 10800, [['Bob Baker', 'Borealis', 10800, 10800]]],
    ['2026-01-05', 45350, 24350, [
      ['Ann Archer', 'Apollo', 16200, 7200],
      ['Ann Archer', 'Cosmos', 1800, 0],
      ['Ann Archer', null, 4800, 3600],
      ['Bob Baker', 'Apollo', 2700, 2700],
      ['Bob Baker', 'Borealis', 7200, 7200],
      ['Bob Baker', 'Cosmos', 9000, 0],
      ['Dee Dalton', 'Delta', 3650, 3650],
    ]],
    ['2026-01-12', 3600, 0, [['Bob Baker', 'Cosmos', 3600, 0]]],
  ]);
  assert.equal(body.groups[0].rows[0], { date: '2025-12-29', employeeId: e.bob, employeeName: 'Bob Baker', projectId: p.borealis, projectName: 'Borealis', seconds: 10800, billableSeconds: 10800 });
  assert.equal(body.total, { seconds: 59750, billableSeconds: 35150 });
});

test('time-log-weekly: a range starting mid-week labels the week by its Monday and counts only from startDate', async () => {
  // [01-07 00:00, 01-08 00:00): L10 1200 s and L4's 5400 s before midnight.
  const body = await report(f.admin, 'time-log-weekly', 'startDate=2026-01-07&endDate=2026-01-07');
  assert.equal(body.groups.map((g: any) => [g.date, g.seconds, g.rows.map((r: any) => [r.date, r.employeeName, r.projectName, r.seconds])]), [
    ['2026-01-05', 6600, [['2026-01-05', 'Ann Archer', null, 1200], ['2026-01-05', 'Bob Baker', 'Cosmos', 5400]]],
  ]);
});

test('time-log-weekly grouped by employee and by project', async () => {
  const query = 'startDate=2026-01-01&endDate=2026-01-14';
  const byEmployee = await report(f.admin, 'time-log-weekly', `${query}&groupBy=employee`);
  assert.equal(byEmployee.groups.map((g: any) => [g.employeeName, g.seconds, g.billableSeconds, g.rows.map((r: any) => [r.date, r.projectName, r.seconds])]), [
    ['Ann Archer', 22800, 10800, [['2026-01-05', 'Apollo', 16200], ['2026-01-05', 'Cosmos', 1800], ['2026-01-05', null, 4800]]],
    ['Bob Baker', 33300, 20700, [['2025-12-29', 'Borealis', 10800], ['2026-01-05', 'Apollo', 2700], ['2026-01-05', 'Borealis', 7200], ['2026-01-05', 'Cosmos', 9000], ['2026-01-12', 'Cosmos', 3600]]],
    ['Dee Dalton', 3650, 3650, [['2026-01-05', 'Delta', 3650]]],
  ]);
  const byProject = await report(f.admin, 'time-log-weekly', `${query}&groupBy=project`);
  assert.equal(byProject.groups.map((g: any) => [g.projectName, g.seconds, g.billableSeconds]), [
    ['Apollo', 18900, 9900],
    ['Borealis', 18000, 18000],
    ['Cosmos', 14400, 0],
    ['Delta', 3650, 3650],
    [null, 4800, 3600],
  ]);
  assert.equal(byProject.total, { seconds: 59750, billableSeconds: 35150 });
});

test('filters: employeeId (every spelling), projectId[], organizationId', async () => {
  const { employees: e, projects: p } = f;
  const totals = async (query: string) => {
    const body = await report(f.admin, 'time-log-daily', `${RANGE}&${query}`);
    return [body.total.seconds, body.total.billableSeconds, body.groups.flatMap((g: any) => g.rows.map((r: any) => `${r.date} ${r.employeeName} ${r.projectName}`))];
  };
  const annOnly = [19200, 7200, ['2026-01-05 Ann Archer Apollo', '2026-01-05 Ann Archer Cosmos', '2026-01-06 Ann Archer Apollo', '2026-01-07 Ann Archer null']];
  assert.equal(await totals(`employeeId=${e.ann}`), annOnly);
  assert.equal(await totals(`employeeId[]=${e.ann}`), annOnly);
  assert.equal(await totals(`employeeId[0]=${e.ann.toUpperCase()}`), annOnly);
  assert.equal(await totals(`employeeId=${e.bob}&employeeId=${e.dee}`), [18950, 13550, ['2026-01-05 Bob Baker Borealis', '2026-01-06 Bob Baker Apollo', '2026-01-06 Dee Dalton Delta', '2026-01-07 Bob Baker Cosmos']]);
  assert.equal(await totals(`projectId[]=${p.apollo}&projectId[]=${p.cosmos}`), [26100, 9900, ['2026-01-05 Ann Archer Apollo', '2026-01-05 Ann Archer Cosmos', '2026-01-06 Ann Archer Apollo', '2026-01-06 Bob Baker Apollo', '2026-01-07 Bob Baker Cosmos']]);
  assert.equal(await totals(`organizationId=${f.beta}`), [3650, 3650, ['2026-01-06 Dee Dalton Delta']]);
  assert.equal(await totals(`organizationId=${f.admin.organizationId}&projectId=${p.apollo}&employeeId=${e.bob}`), [2700, 2700, ['2026-01-06 Bob Baker Apollo']]);
  // Ids of nothing (or of another tenant) are filters that match nothing, not errors.
  assert.equal(await totals(`organizationId=${f.stranger.organizationId}`), [0, 0, []]);
  assert.equal(await totals(`employeeId=00000000-0000-4000-8000-000000000000`), [0, 0, []]);
});

test("tenancy: another tenant's logs never count, and its admin sees only its own", async () => {
  const body = await report(f.stranger, 'time-log-daily');
  assert.is(body.groups.length, 1);
  assert.equal(body.groups[0].rows.map((r: any) => [r.date, r.employeeName, r.projectName, r.seconds, r.billableSeconds]), [['2026-01-06', 'Sam Stranger', 'Apollo', 28800, 28800]]);
  assert.equal(body.total, { seconds: 28800, billableSeconds: 28800 });
  const budgets = await report(f.stranger, 'project-budgets', '');
  assert.equal(budgets.groups.map((g: any) => [g.projectName, g.seconds, g.spent, g.remaining, g.percentUsed]), [['Apollo', 28800, 8, -7, 800]]);
});

test('an EMPLOYEE counts only its own time logs, whatever it filters on', async () => {
  const own = await report(f.ann, 'time-log-daily');
  assert.equal(own.groups.map((g: any) => [g.date, g.seconds, g.billableSeconds]), [['2026-01-05', 12600, 7200], ['2026-01-06', 5400, 0], ['2026-01-07', 1200, 0]]);
  assert.ok(own.groups.every((g: any) => g.rows.every((r: any) => r.employeeId === f.employees.ann)));
  assert.equal(own.total, { seconds: 19200, billableSeconds: 7200 });
  const others = await report(f.ann, 'time-log-daily', `${RANGE}&employeeId=${f.employees.bob}&groupBy=employee`);
  assert.equal(others.groups, []);
  assert.equal(others.total, { seconds: 0, billableSeconds: 0 });
  const weekly = await report(f.ann, 'time-log-weekly', 'startDate=2026-01-01&endDate=2026-01-14');
  assert.equal(weekly.total, { seconds: 22800, billableSeconds: 10800 });
});

const money = (currency: string, seconds: number, billableSeconds: number, hours: number, amount: number, billableAmount: number) =>
  ({ currency, seconds, billableSeconds, hours, amount, billableAmount });

test('amounts-owed grouped by employee (default): per currency, rows per project, amounts rounded to cents', async () => {
  const { employees: e, projects: p } = f;
  const body = await report(f.admin, 'amounts-owed');
  assert.is(body.report, 'amounts-owed');
  assert.is(body.groupBy, 'employee');
  const row = (projectId: string | null, projectName: string | null, employeeId: string, employeeName: string, rate: number, m: ReturnType<typeof money>) => ({
    employeeId, employeeName, projectId, projectName, currency: m.currency, billRateValue: rate, seconds: m.seconds, billableSeconds: m.billableSeconds, hours: m.hours, amount: m.amount, billableAmount: m.billableAmount,
  });
  assert.equal(body.groups, [
    {
      employeeId: e.ann,
      employeeName: 'Ann Archer',
      totals: [money('USD', 19200, 7200, 5.33, 320, 120)],
      rows: [
        row(p.apollo, 'Apollo', e.ann, 'Ann Archer', 60, money('USD', 16200, 7200, 4.5, 270, 120)),
        row(p.cosmos, 'Cosmos', e.ann, 'Ann Archer', 60, money('USD', 1800, 0, 0.5, 30, 0)),
        row(null, null, e.ann, 'Ann Archer', 60, money('USD', 1200, 0, 0.33, 20, 0)),
      ],
    },
    {
      employeeId: e.bob,
      employeeName: 'Bob Baker',
      totals: [money('EUR', 15300, 9900, 4.25, 191.25, 123.75)],
      rows: [
        row(p.apollo, 'Apollo', e.bob, 'Bob Baker', 45, money('EUR', 2700, 2700, 0.75, 33.75, 33.75)),
        row(p.borealis, 'Borealis', e.bob, 'Bob Baker', 45, money('EUR', 7200, 7200, 2, 90, 90)),
        row(p.cosmos, 'Cosmos', e.bob, 'Bob Baker', 45, money('EUR', 5400, 0, 1.5, 67.5, 0)),
      ],
    },
    {
      employeeId: e.dee,
      employeeName: 'Dee Dalton',
      // 3650 s × 20 / 3600 = 20.2777… → 20.28; 3650 / 3600 = 1.0138… → 1.01.
      totals: [money('USD', 3650, 3650, 1.01, 20.28, 20.28)],
      rows: [row(p.delta, 'Delta', e.dee, 'Dee Dalton', 20, money('USD', 3650, 3650, 1.01, 20.28, 20.28))],
    },
  ]);
  // USD: (19200 × 60 + 3650 × 20) / 3600 = 340.2777… → 340.28; 22850 s = 6.3472… h.
  assert.equal(body.totals, [money('EUR', 15300, 9900, 4.25, 191.25, 123.75), money('USD', 22850, 10850, 6.35, 340.28, 140.28)]);
});

test('amounts-owed grouped by project: subtotals per currency, rows per employee', async () => {
  const body = await report(f.admin, 'amounts-owed', `${RANGE}&groupBy=project`);
  const summary = body.groups.map((g: any) => [g.projectName, g.totals, g.rows.map((r: any) => [r.employeeName, r.currency, r.billRateValue, r.seconds, r.amount])]);
  assert.equal(summary, [
    ['Apollo', [money('EUR', 2700, 2700, 0.75, 33.75, 33.75), money('USD', 16200, 7200, 4.5, 270, 120)], [['Ann Archer', 'USD', 60, 16200, 270], ['Bob Baker', 'EUR', 45, 2700, 33.75]]],
    ['Borealis', [money('EUR', 7200, 7200, 2, 90, 90)], [['Bob Baker', 'EUR', 45, 7200, 90]]],
    ['Cosmos', [money('EUR', 5400, 0, 1.5, 67.5, 0), money('USD', 1800, 0, 0.5, 30, 0)], [['Ann Archer', 'USD', 60, 1800, 30], ['Bob Baker', 'EUR', 45, 5400, 67.5]]],
    ['Delta', [money('USD', 3650, 3650, 1.01, 20.28, 20.28)], [['Dee Dalton', 'USD', 20, 3650, 20.28]]],
    [null, [money('USD', 1200, 0, 0.33, 20, 0)], [['Ann Archer', 'USD', 60, 1200, 20]]],
  ]);
  assert.ok(body.groups.every((g: any) => g.rows.every((r: any) => !('date' in r))), 'no date outside a date grouping');
  assert.equal(body.totals, [money('EUR', 15300, 9900, 4.25, 191.25, 123.75), money('USD', 22850, 10850, 6.35, 340.28, 140.28)]);
});

test('amounts-owed grouped by date: each UTC day, midnight-crossing logs split between days', async () => {
  const body = await report(f.admin, 'amounts-owed', `${RANGE}&groupBy=date`);
  const summary = body.groups.map((g: any) => [g.date, g.totals, g.rows.map((r: any) => [r.date, r.employeeName, r.projectName, r.seconds, r.amount])]);
  assert.equal(summary, [
    ['2026-01-05', [money('EUR', 7200, 7200, 2, 90, 90), money('USD', 12600, 7200, 3.5, 210, 120)], [
      ['2026-01-05', 'Ann Archer', 'Apollo', 10800, 180],
      ['2026-01-05', 'Ann Archer', 'Cosmos', 1800, 30],
      ['2026-01-05', 'Bob Baker', 'Borealis', 7200, 90],
    ]],
    // USD: (5400 × 60 + 3650 × 20) / 3600 = 110.2777… → 110.28; 9050 s = 2.5138… h.
    ['2026-01-06', [money('EUR', 2700, 2700, 0.75, 33.75, 33.75), money('USD', 9050, 3650, 2.51, 110.28, 20.28)], [
      ['2026-01-06', 'Ann Archer', 'Apollo', 5400, 90],
      ['2026-01-06', 'Bob Baker', 'Apollo', 2700, 33.75],
      ['2026-01-06', 'Dee Dalton', 'Delta', 3650, 20.28],
    ]],
    ['2026-01-07', [money('EUR', 5400, 0, 1.5, 67.5, 0), money('USD', 1200, 0, 0.33, 20, 0)], [
      ['2026-01-07', 'Ann Archer', null, 1200, 20],
      ['2026-01-07', 'Bob Baker', 'Cosmos', 5400, 67.5],
    ]],
  ]);
  assert.equal(body.totals, [money('EUR', 15300, 9900, 4.25, 191.25, 123.75), money('USD', 22850, 10850, 6.35, 340.28, 140.28)]);
});

test('amounts-owed: filters narrow it, an empty result has no totals, a rate-less employee owes nothing', async () => {
  const bob = await report(f.admin, 'amounts-owed', `${RANGE}&employeeId=${f.employees.bob}&projectId=${f.projects.cosmos}`);
  assert.equal(bob.groups.map((g: any) => [g.employeeName, g.totals]), [['Bob Baker', [money('EUR', 5400, 0, 1.5, 67.5, 0)]]]);
  const none = await report(f.admin, 'amounts-owed', `${RANGE}&organizationId=${f.stranger.organizationId}`);
  assert.equal([none.groups, none.totals], [[], []]);
  // An employee without a rate: its time counts, at 0.
  const account = await t.http.post('/api/auth/register').set(f.stranger.auth).send({ user: { firstName: 'R', lastName: 'L', email: uniqueEmail('rateless') }, password: PASSWORD, confirmPassword: PASSWORD });
  const rateless = await t.http.post('/api/employee').set(f.stranger.auth).send({ firstName: 'Rae', lastName: 'Less', userId: account.body.id });
  const logged = await t.http.post('/api/time-log').set(f.stranger.auth).send({ employeeId: rateless.body.id, startedAt: '2026-02-02T08:00:00Z', stoppedAt: '2026-02-02T09:30:00Z' });
  assert.is(logged.status, 201, JSON.stringify(logged.body));
  const owed = await report(f.stranger, 'amounts-owed', 'startDate=2026-02-01&endDate=2026-02-28');
  assert.equal(owed.groups.map((g: any) => [g.employeeName, g.rows[0].billRateValue, g.totals]), [['Rae Less', null, [money('EUR', 5400, 0, 1.5, 0, 0)]]]);
});

const budget = (projectId: string, projectName: string, organizationId: string, budgetType: string | null, budgetValue: number | null, currency: string,
  seconds: number, billableSeconds: number, hours: number, cost: number, spent: number, remaining: number | null, percentUsed: number | null, rows: unknown[]) =>
  ({ projectId, projectName, organizationId, budgetType, budget: budgetValue, currency, seconds, billableSeconds, hours, cost, spent, remaining, percentUsed, rows });

const part = (employeeId: string, employeeName: string, seconds: number, billableSeconds: number, hours: number, cost: number) =>
  ({ employeeId, employeeName, seconds, billableSeconds, hours, cost });

test('project-budgets (all time): hours and cost budgets, a project without budget, spent across organizations', async () => {
  const { projects: p, employees: e } = f;
  const acme = f.admin.organizationId;
  const body = await report(f.admin, 'project-budgets', '');
  assert.equal(body, {
    report: 'project-budgets',
    groupBy: 'project',
    startDate: null,
    endDate: null,
    groups: [
      // 18900 s = 5.25 h of 10; cost (16200 × 60 + 2700 × 45) / 3600 = 303.75.
      budget(p.apollo, 'Apollo', acme, 'hours', 10, 'EUR', 18900, 9900, 5.25, 303.75, 5.25, 4.75, 52.5, [
        part(e.ann, 'Ann Archer', 16200, 7200, 4.5, 270),
        part(e.bob, 'Bob Baker', 2700, 2700, 0.75, 33.75),
      ]),
      // L3 + L6 = 18000 s at 45 = 225 of 500; the running L7 adds nothing.
      budget(p.borealis, 'Borealis', acme, 'cost', 500, 'EUR', 18000, 18000, 5, 225, 225, 275, 45, [part(e.bob, 'Bob Baker', 18000, 18000, 5, 225)]),
      // (1800 × 60 + 16200 × 45) / 3600 = 232.5; no budget: spent in hours, nothing remaining or used.
      budget(p.cosmos, 'Cosmos', acme, null, null, 'EUR', 18000, 0, 5, 232.5, 5, null, null, [
        part(e.ann, 'Ann Archer', 1800, 0, 0.5, 30),
        part(e.bob, 'Bob Baker', 16200, 0, 4.5, 202.5),
      ]),
      // 3650 s = 1.0138… h of 2: 0.9861… left, 50.694…%.
      budget(p.delta, 'Delta', f.beta, 'hours', 2, 'USD', 3650, 3650, 1.01, 20.28, 1.01, 0.99, 50.69, [part(e.dee, 'Dee Dalton', 3650, 3650, 1.01, 20.28)]),
    ],
    total: { seconds: 58550, billableSeconds: 31550, hours: 16.26 },
  });
});

test('project-budgets: the range and employeeId[] narrow what is spent; organizationId and projectId[] which projects', async () => {
  const { projects: p } = f;
  const acme = f.admin.organizationId;
  const bob = await report(f.admin, 'project-budgets', `${RANGE}&employeeId=${f.employees.bob}`);
  assert.is(bob.startDate, '2026-01-05T00:00:00.000Z');
  assert.equal(bob.groups, [
    budget(p.apollo, 'Apollo', acme, 'hours', 10, 'EUR', 2700, 2700, 0.75, 33.75, 0.75, 9.25, 7.5, [part(f.employees.bob, 'Bob Baker', 2700, 2700, 0.75, 33.75)]),
    budget(p.borealis, 'Borealis', acme, 'cost', 500, 'EUR', 7200, 7200, 2, 90, 90, 410, 18, [part(f.employees.bob, 'Bob Baker', 7200, 7200, 2, 90)]),
    budget(p.cosmos, 'Cosmos', acme, null, null, 'EUR', 5400, 0, 1.5, 67.5, 1.5, null, null, [part(f.employees.bob, 'Bob Baker', 5400, 0, 1.5, 67.5)]),
    budget(p.delta, 'Delta', f.beta, 'hours', 2, 'USD', 0, 0, 0, 0, 0, 2, 0, []),
  ]);
  assert.equal(bob.total, { seconds: 15300, billableSeconds: 9900, hours: 4.25 });
  const beta = await report(f.admin, 'project-budgets', `organizationId=${f.beta}`);
  assert.equal(beta.groups.map((g: any) => g.projectName), ['Delta']);
  const two = await report(f.admin, 'project-budgets', `projectId[]=${p.cosmos}&projectId[]=${p.apollo}&endDate=2026-01-05`);
  // Up to the end of 01-05: Apollo L1 7200 + L2 3600; Cosmos L11 1800.
  assert.equal(two.groups.map((g: any) => [g.projectName, g.seconds, g.spent, g.percentUsed]), [['Apollo', 10800, 3, 30], ['Cosmos', 1800, 0.5, null]]);
  assert.is(two.startDate, null);
  assert.is(two.endDate, '2026-01-06T00:00:00.000Z');
});

test('money reports need the time-log read permission too: VIEWER and DATA_ENTRY (INVOICES_VIEW, no TIME_TRACKER) are refused', async () => {
  // Both roles are refused GET /api/time-log: the sums of those logs are refused as well, and the database is not read.
  for (const session of [f.viewer, f.bob]) {
    assert.is((await t.http.get('/api/time-log').set(session.auth)).status, 403);
    for (const slug of ['amounts-owed', 'project-budgets', 'time-log-daily', 'time-log-weekly']) {
      const res = await t.http.get(`/api/report/${slug}?${slug === 'project-budgets' ? '' : RANGE}`).set(session.auth);
      assert.is(res.status, 403, `${slug}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body, { statusCode: 403, message: 'Forbidden resource', error: 'Forbidden' });
    }
  }
});

test('amounts-owed and project-budgets: a MANAGER (every permission they need) sees everyone, whatever its own employee', async () => {
  // The manager has an employee record of its own: the owner rule is the EMPLOYEE role's only.
  const manager = await employeeWithLogin(t, f.admin, 'MANAGER', { firstName: 'Max', lastName: 'Manager', organizationId: f.admin.organizationId });
  const body = await report(manager, 'amounts-owed');
  assert.equal(body.totals.map((m: any) => [m.currency, m.amount]), [['EUR', 191.25], ['USD', 340.28]]);
  const budgets = await report(manager, 'project-budgets', '');
  assert.equal(budgets.total, { seconds: 58550, billableSeconds: 31550, hours: 16.26 });
  assert.ok(!JSON.stringify(budgets).includes(manager.employeeId), 'an employee without time is in no row');
});

test('OpenAPI: the catalogue, a path per report with its own groupBy values, and every answer above fits its report\'s 200 schema', async () => {
  const doc = t.openapi as Record<string, any>;
  const list = doc.paths['/api/report'].get;
  // The 404 for any other name is no operation: the document leaves it out (its template would match every report's path).
  assert.ok(list);
  assert.is(doc.paths['/api/report/{slug}'], undefined);
  // The permission rule is stated where clients read it, with the registry's permission names.
  assert.match(doc.paths['/api/report/amounts-owed'].get.description, /time-log read permission \(TIME_TRACKER\)/);
  assert.match(doc.paths['/api/report/amounts-owed'].get.description, /Needs the permissions TIME_TRACKER and ORG_EMPLOYEES_VIEW and INVOICES_VIEW\./);
  assert.match(list.description, /project read permission \(ORG_PROJECT_VIEW: budgets\)/);
  for (const status of ['200', '400', '401', '503']) assert.ok(list.responses[status], `list ${status}`);
  const groupings: Record<string, string[]> = {
    'time-log-daily': ['date', 'employee', 'project'],
    'time-log-weekly': ['date', 'employee', 'project'],
    'amounts-owed': ['date', 'employee', 'project'],
    'project-budgets': ['project'],
  };
  const validators = new Map<string, (value: unknown) => boolean>();
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const [slug, groupBy] of Object.entries(groupings)) {
    const run = doc.paths[`/api/report/${slug}`].get;
    for (const status of ['200', '400', '401', '403', '500', '503']) assert.ok(run.responses[status], `${slug} ${status}`);
    const parameters = Object.fromEntries(run.parameters.filter((p: any) => p.name).map((p: any) => [p.name, p]));
    assert.equal(Object.keys(parameters).sort(), ['employeeId', 'endDate', 'groupBy', 'organizationId', 'projectId', 'startDate']);
    for (const name of ['employeeId', 'projectId']) {
      assert.equal([parameters[name].in, parameters[name].style, parameters[name].explode, parameters[name].schema.items.format], ['query', 'form', true, 'uuid']);
    }
    assert.equal([...parameters.groupBy.schema.enum].sort(), groupBy, slug);
    // The server takes exactly the documented values.
    for (const value of ['date', 'employee', 'project']) {
      const res = await t.http.get(`/api/report/${slug}?groupBy=${value}${slug === 'time-log-weekly' ? '&startDate=2026-01-01&endDate=2026-01-14' : ''}`).set(f.admin.auth);
      assert.is(res.status, groupBy.includes(value) ? 200 : 400, `${slug} groupBy=${value}: ${JSON.stringify(res.body).slice(0, 300)}`);
    }
    validators.set(slug, ajv.compile(run.responses['200'].content['application/json'].schema));
  }
  const validate = (slug: string, body: unknown) => validators.get(slug)!(body);
  const catalogue = ajv.compile(list.responses['200'].content['application/json'].schema);
  const listed = await t.http.get('/api/report').set(f.admin.auth);
  assert.ok(catalogue(listed.body), JSON.stringify(catalogue.errors));
  const runs: Array<[string, string]> = [
    ['time-log-daily', `${RANGE}&groupBy=date`], ['time-log-daily', `${RANGE}&groupBy=employee`], ['time-log-daily', `${RANGE}&groupBy=project`],
    ['time-log-weekly', 'startDate=2026-01-01&endDate=2026-01-14&groupBy=employee'],
    ['amounts-owed', `${RANGE}&groupBy=employee`], ['amounts-owed', `${RANGE}&groupBy=project`], ['amounts-owed', `${RANGE}&groupBy=date`],
    ['project-budgets', ''], ['project-budgets', RANGE],
  ];
  for (const [slug, query] of runs) {
    const body = await report(f.admin, slug, query);
    assert.ok(validate(slug, body), `${slug}?${query}`);
  }
  // The schema is not a formality: a row with a field too many, or a report with another's shape, fails it.
  const daily = await report(f.admin, 'time-log-daily');
  assert.not.ok(validate('time-log-daily', { ...daily, report: 'amounts-owed' }));
  daily.groups[0].rows[0].extra = 1;
  assert.not.ok(validate('time-log-daily', daily));
  const unknownReport = await t.http.get('/api/report/no-such-report').set(f.admin.auth);
  assert.is(unknownReport.status, 404);
});

test.run();
