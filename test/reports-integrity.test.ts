// Reports (resources/report/) at their edges: fractions of a second, projects whose logs carry
// another organization, and rows corrupted to point at another tenant. Figures are worked out by
// hand below; reports.test.ts has the main fixture.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from './helpers/accounts.js';
import { createTestApp, type TestApp } from './helpers/app.js';

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

test.run();
