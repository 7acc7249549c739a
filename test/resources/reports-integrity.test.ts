// Reports (resources/report/) at their edges: fractions of a second, projects whose logs carry
// another organization, and rows corrupted to point at another tenant. Figures are worked out by
// hand below; reports.test.ts has the main fixture.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

type Admin = Session & { organizationId: string; userId: string };

let t: TestApp;
test.before(async () => {
  t = await createTestApp();
});
test.after(async () => {
  await t.close();
});

async function post(session: Session, path: string, body: Record<string, unknown>) {
  const res = await t.http.post(path).set(session.auth).send(body);
  assert.is(res.status, 201, `${path}: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, any>;
}

async function report(session: Session, slug: string, query: string) {
  const res = await t.http.get(`/api/report/${slug}?${query}`).set(session.auth);
  assert.is(res.status, 200, `${slug}?${query}: ${JSON.stringify(res.body)}`);
  return res.body as Record<string, any>;
}

const tenant = async (name: string) => (await newTenant(t, name)) as Admin;

// ---------------------------------------------------------------------------------------------
// Fractions of a second

//   A  10:00:00.600 → 10:00:01.400 (03-02)        0.8 s: duration 0 → 0 s
//   B  11:00:00.900 → 11:00:02.100 (03-02)        1.2 s: duration 1 → 1 s (billable)
//   C  23:59:59.999 (03-02) → 00:00:00.001 (03-03) 0.002 s: duration 0 → 0 s on each day
//   D  23:59:59.500 (03-03) → 00:00:01.200 (03-04) 1.7 s: duration 1 → 03-03: ⌊0.5⌋ − 0 = 0; 03-04: ⌊1.7⌋ − ⌊0.5⌋ = 1
//   E  23:59:58.700 (03-05) → 00:00:03.300 (03-06) 4.6 s: duration 4 → 03-05: ⌊1.3⌋ − 0 = 1; 03-06: ⌊4.6⌋ − ⌊1.3⌋ = 3 (billable)
// Seconds counted from each log's start, as the duration column floors the whole span. Counting
// each bound floored to the second on its own gave A 1, B 2, C 1, D 1 + 1 and E 2 + 3.
test('fractions of a second: the pieces of each log add up to its duration, per day, per week and whole', async () => {
  const admin = await tenant('Fractions');
  const employeeId = (await post(admin, '/api/employee', { userId: admin.userId, firstName: 'Fay', lastName: 'Fraction', billRateValue: 36, billRateCurrency: 'USD' })).id;
  const projectId = (await post(admin, '/api/organization-project', { name: 'Tiny', budget: 1, budgetType: 'hours' })).id;
  const log = async (from: string, to: string, isBillable = false) =>
    (await post(admin, '/api/time-log', { employeeId, projectId, isBillable, startedAt: `2026-03-${from}Z`, stoppedAt: `2026-03-${to}Z` })).id as string;
  const ids = [
    await log('02T10:00:00.600', '02T10:00:01.400'),
    await log('02T11:00:00.900', '02T11:00:02.100', true),
    await log('02T23:59:59.999', '03T00:00:00.001'),
    await log('03T23:59:59.500', '04T00:00:01.200'),
    await log('05T23:59:58.700', '06T00:00:03.300', true),
  ];
  // The stored instants keep their milliseconds, and the generated column floors each span.
  const stored = await t.db('time_log').whereIn('id', ids).select('id', 'duration', 'startedAt');
  const byId = new Map(stored.map((r) => [r.id, r]));
  assert.equal(ids.map((id) => byId.get(id)!.duration), [0, 1, 0, 1, 4]);
  assert.is(new Date(byId.get(ids[0])!.startedAt).getUTCMilliseconds(), 600);

  const range = 'startDate=2026-03-02&endDate=2026-03-06';
  const daily = await report(admin, 'time-log-daily', range);
  assert.equal(daily.groups.map((g: any) => [g.date, g.seconds, g.billableSeconds]), [['2026-03-02', 1, 1], ['2026-03-04', 1, 0], ['2026-03-05', 1, 1], ['2026-03-06', 3, 3]]);
  assert.equal(daily.total, { seconds: 6, billableSeconds: 5 });
  const weekly = await report(admin, 'time-log-weekly', range);
  assert.equal(weekly.groups.map((g: any) => [g.date, g.seconds, g.billableSeconds]), [['2026-03-02', 6, 5]]);
  // Whole logs (no day split): 0 + 1 + 0 + 1 + 4 = 6 s at 36/h = 0.06; billable 1 + 4 = 5 s = 0.05.
  const owed = await report(admin, 'amounts-owed', range);
  assert.equal(owed.totals, [{ currency: 'USD', seconds: 6, billableSeconds: 5, hours: 0, amount: 0.06, billableAmount: 0.05 }]);
  const budgets = await report(admin, 'project-budgets', range);
  assert.equal(budgets.groups.map((g: any) => [g.projectName, g.seconds, g.billableSeconds, g.cost]), [['Tiny', 6, 5, 0.06]]);
  // A range edge inside a log counts from the log's start too: [03-06 00:00, …) takes ⌊4.6⌋ − ⌊1.3⌋ = 3 of E.
  const edge = await report(admin, 'time-log-daily', 'startDate=2026-03-06&endDate=2026-03-06');
  assert.equal(edge.total, { seconds: 3, billableSeconds: 3 });
  // A log of less than a second is no row at all, not a row of 0.
  const tiny = await report(admin, 'time-log-daily', 'startDate=2026-03-03&endDate=2026-03-03');
  assert.equal([tiny.groups, tiny.total], [[], { seconds: 0, billableSeconds: 0 }]);
});

// ---------------------------------------------------------------------------------------------
// Rows corrupted to point at another tenant

//   Tenant A: Ann (36 USD/h), project Pa. Tenant B: Bea, project Pb, organization Ob.
//   L1  Ann  Pa              04-06 09:00 → 10:00   3600 s
//   L2  Bea (B's employee)   04-06 10:00 → 10:30   1800 s: counts nowhere (A has no such employee)
//   L3  Ann  Pb (B's)        04-06 11:00 → 11:15    900 s: time without a project
//   L4  Ann  Pa, org Ob      04-06 12:00 → 12:10    600 s: counts, but organizationId=Ob matches nothing
// Every log is created valid through the API, then corrupted in the database.
test("corrupted rows naming another tenant's employee, project or organization: never its ids, and every report agrees", async () => {
  const a = await tenant('Alpha');
  const b = await tenant('Bravo');
  const ann = (await post(a, '/api/employee', { userId: a.userId, firstName: 'Ann', lastName: 'Alpha', billRateValue: 36, billRateCurrency: 'USD' })).id as string;
  const bea = (await post(b, '/api/employee', { userId: b.userId, firstName: 'Bea', lastName: 'Bravo', billRateValue: 99 })).id as string;
  const pa = (await post(a, '/api/organization-project', { name: 'Pa', budget: 10, budgetType: 'hours' })).id as string;
  const pb = (await post(b, '/api/organization-project', { name: 'Pb', budget: 10, budgetType: 'hours' })).id as string;
  const log = async (from: string, to: string) =>
    (await post(a, '/api/time-log', { employeeId: ann, projectId: pa, startedAt: `2026-04-06T${from}Z`, stoppedAt: `2026-04-06T${to}Z` })).id as string;
  await log('09:00:00', '10:00:00');
  const l2 = await log('10:00:00', '10:30:00');
  const l3 = await log('11:00:00', '11:15:00');
  const l4 = await log('12:00:00', '12:10:00');
  await t.db('time_log').where({ id: l2 }).update({ employeeId: bea });
  await t.db('time_log').where({ id: l3 }).update({ projectId: pb });
  await t.db('time_log').where({ id: l4 }).update({ organizationId: b.organizationId });
  const corrupted = await t.db('time_log').whereIn('id', [l2, l3, l4]).select('id', 'tenantId', 'employeeId', 'projectId', 'organizationId');
  assert.equal(new Set(corrupted.map((r) => r.tenantId)), new Set([a.tenantId]));

  const foreign = [bea, pb, b.organizationId, b.tenantId];
  const clean = (body: unknown, what: string) => {
    const text = JSON.stringify(body);
    for (const id of foreign) assert.not.ok(text.includes(id), `${what} shows another tenant's id ${id}`);
  };
  const range = 'startDate=2026-04-06&endDate=2026-04-06';
  const daily = await report(a, 'time-log-daily', `${range}&groupBy=project`);
  clean(daily, 'time-log-daily');
  assert.equal(daily.groups.map((g: any) => [g.projectId, g.projectName, g.seconds, g.rows.map((r: any) => [r.employeeId, r.employeeName, r.seconds])]), [
    [pa, 'Pa', 4200, [[ann, 'Ann Alpha', 4200]]],
    [null, null, 900, [[ann, 'Ann Alpha', 900]]],
  ]);
  assert.equal(daily.total, { seconds: 5100, billableSeconds: 0 });
  const weekly = await report(a, 'time-log-weekly', range);
  clean(weekly, 'time-log-weekly');
  assert.equal(weekly.total, { seconds: 5100, billableSeconds: 0 });
  // The same logs, priced: 5100 s × 36 / 3600 = 51; Pa 4200 s = 42, no project 900 s = 9.
  const owed = await report(a, 'amounts-owed', `${range}&groupBy=project`);
  clean(owed, 'amounts-owed');
  assert.equal(owed.groups.map((g: any) => [g.projectId, g.totals.map((m: any) => [m.currency, m.seconds, m.amount])]), [[pa, [['USD', 4200, 42]]], [null, [['USD', 900, 9]]]]);
  assert.equal(owed.totals.map((m: any) => [m.currency, m.seconds, m.hours, m.amount]), [['USD', 5100, 1.42, 51]]);
  const budgets = await report(a, 'project-budgets', '');
  clean(budgets, 'project-budgets');
  assert.equal(budgets.groups.map((g: any) => [g.projectId, g.seconds, g.cost, g.rows.map((r: any) => [r.employeeId, r.seconds])]), [[pa, 4200, 42, [[ann, 4200]]]]);

  // Filters go through the tenant's own rows: another tenant's ids match nothing.
  for (const slug of ['time-log-daily', 'amounts-owed']) {
    for (const filter of [`employeeId=${bea}`, `projectId=${pb}`, `organizationId=${b.organizationId}`]) {
      const body = await report(a, slug, `${range}&${filter}`);
      assert.equal(body.groups, [], `${slug}?${filter}`);
    }
  }
  const own = await report(a, 'time-log-daily', `${range}&organizationId=${a.organizationId}`);
  assert.equal(own.total, { seconds: 4500, billableSeconds: 0 });
  // Tenant B sees none of A's logs, though two of them name its rows.
  const theirs = await report(b, 'time-log-daily', range);
  assert.equal([theirs.groups, theirs.total], [[], { seconds: 0, billableSeconds: 0 }]);
});

// ---------------------------------------------------------------------------------------------
// project-budgets: organizationId chooses projects, not logs

//   Organization X (the default) holds project P (budget 2 hours) and employee Eve (10 EUR/h);
//   organization Y holds nothing. Two logs on P:
//   K1  organizationId X  05-04 09:00 → 10:00  3600 s
//   K2  organizationId Y  05-04 11:00 → 11:30  1800 s (a log may name another organization than its project's)
test('project-budgets: organizationId and projectId choose the projects; their spent is every log on them, whatever organization it names', async () => {
  const admin = await tenant('Xylo');
  const x = admin.organizationId;
  const y = (await post(admin, '/api/organization', { name: 'Yonder', currency: 'USD' })).id as string;
  const eve = (await post(admin, '/api/employee', { userId: admin.userId, organizationId: x, firstName: 'Eve', lastName: 'Even', billRateValue: 10 })).id as string;
  const p = (await post(admin, '/api/organization-project', { name: 'P', organizationId: x, budget: 2, budgetType: 'hours' })).id as string;
  const log = async (organizationId: string, from: string, to: string) =>
    (await post(admin, '/api/time-log', { organizationId, employeeId: eve, projectId: p, startedAt: `2026-05-04T${from}Z`, stoppedAt: `2026-05-04T${to}Z` })).id as string;
  await log(x, '09:00:00', '10:00:00');
  const k2 = await log(y, '11:00:00', '11:30:00');
  assert.equal((await t.db('time_log').where({ id: k2 }).first()).organizationId, y);

  // 5400 s = 1.5 h of 2: 0.5 left, 75 %; cost 5400 × 10 / 3600 = 15.
  const expected = [{
    projectId: p, projectName: 'P', organizationId: x, budgetType: 'hours', budget: 2, currency: 'EUR',
    seconds: 5400, billableSeconds: 0, hours: 1.5, cost: 15, spent: 1.5, remaining: 0.5, percentUsed: 75,
    rows: [{ employeeId: eve, employeeName: 'Eve Even', seconds: 5400, billableSeconds: 0, hours: 1.5, cost: 15 }],
  }];
  for (const query of ['', `organizationId=${x}`, `organizationId=${x}&projectId=${p}`, `organizationId=${x}&employeeId=${eve}&startDate=2026-05-04&endDate=2026-05-04`]) {
    const body = await report(admin, 'project-budgets', query);
    assert.equal(body.groups, expected, `?${query}`);
    assert.equal(body.total, { seconds: 5400, billableSeconds: 0, hours: 1.5 }, `?${query}`);
  }
  // Y has no project: nothing is listed, though K2 names Y.
  const yonder = await report(admin, 'project-budgets', `organizationId=${y}`);
  assert.equal([yonder.groups, yonder.total], [[], { seconds: 0, billableSeconds: 0, hours: 0 }]);
  // The range still narrows the spent: from 10:30 on, only K2.
  const late = await report(admin, 'project-budgets', `organizationId=${x}&startDate=2026-05-04T10:30:00Z`);
  assert.equal(late.groups.map((g: any) => [g.seconds, g.spent, g.percentUsed]), [[1800, 0.5, 25]]);
  // The time reports, by contrast, filter the logs by the organization they name.
  const daily = await report(admin, 'time-log-daily', `startDate=2026-05-04&endDate=2026-05-04&organizationId=${y}`);
  assert.equal(daily.total, { seconds: 1800, billableSeconds: 0 });
});

test.run();
