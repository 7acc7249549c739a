// The owner rule in exports. The project's EMPLOYEE role has no EXPORT_ADD (export.test.ts checks
// its 403); this file's app reads a copy of roles.yaml that grants it (and ORG_EMPLOYEES_VIEW, to
// export the employee resource, whose owner field is its id), so that an EMPLOYEE's export can be
// checked to hold only its own records, as its lists do.
import AdmZip from 'adm-zip';
import { parse } from 'csv-parse/sync';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { rolesGranting, type RolesCopy } from '../helpers/roles.js';

let t: TestApp;
let roles: RolesCopy;
let admin: Session & { organizationId: string };
let alice: Session & { employeeId?: string };
let bob: Session & { employeeId?: string };
let noRecord: Session; // an EMPLOYEE without an employee record

test.before(async () => {
  roles = rolesGranting({ EMPLOYEE: ['EXPORT_ADD', 'ORG_EMPLOYEES_VIEW'] });
  t = await createTestApp({ appOptions: { rolesFile: roles.file } });
  admin = await newTenant(t);
  alice = await userWithRole(t, admin, 'EMPLOYEE', true);
  bob = await userWithRole(t, admin, 'EMPLOYEE', true);
  noRecord = await userWithRole(t, admin, 'EMPLOYEE');
  for (const [who, day] of [[alice, 5], [alice, 6], [bob, 7], [bob, 8], [bob, 9]] as const) {
    const res = await t.http.post('/api/time-log').set(admin.auth).send({ employeeId: who.employeeId, startedAt: `2026-01-0${day}T08:00:00Z`, stoppedAt: `2026-01-0${day}T10:00:00Z` });
    assert.is(res.status, 201, JSON.stringify(res.body));
  }
});
test.after(async () => {
  await t.close();
  roles.remove();
});

function binary(res: any, done: (err: Error | null, body: Buffer) => void) {
  const chunks: Buffer[] = [];
  res.on('data', (chunk: Buffer) => chunks.push(chunk));
  res.on('end', () => done(null, Buffer.concat(chunks)));
}

const idsInDb = (table: string, where: Record<string, unknown>) => t.db(table).where({ tenantId: admin.tenantId, ...where }).orderBy('id').pluck('id');

test('an EMPLOYEE exports only its own time logs and its own employee record, in CSV and JSON', async () => {
  for (const who of [alice, bob]) {
    const json = await t.http.get('/api/export/time-log?format=json').set(who.auth);
    assert.is(json.status, 200);
    const own = await idsInDb('time_log', { employeeId: who.employeeId });
    assert.ok(own.length >= 2);
    assert.equal(json.body.map((log: { id: string }) => log.id), own);
    for (const log of json.body) assert.is(log.employeeId, who.employeeId);
    const csv = await t.http.get('/api/export/time-log').set(who.auth).buffer(true).parse(binary);
    const [header, ...rows] = parse(csv.body.toString('utf8')) as string[][];
    assert.equal(rows.map((r) => r[header.indexOf('id')]), own);
    const employees = await t.http.get('/api/export/employee?format=json').set(who.auth);
    assert.equal(employees.body.map((e: { id: string }) => e.id), [who.employeeId]);
  }
  // The admin, with no owner rule, gets all five.
  const all = await t.http.get('/api/export/time-log?format=json').set(admin.auth);
  assert.is(all.body.length, 5);
});

test('an EMPLOYEE without an employee record exports none of the owned resources', async () => {
  for (const name of ['time-log', 'employee', 'timesheet']) {
    const res = await t.http.get(`/api/export/${name}?format=json`).set(noRecord.auth);
    assert.is(res.status, 200);
    assert.equal(res.body, []);
  }
});

test("an EMPLOYEE's zip: the resources its role may read, owned ones with its own rows only", async () => {
  const res = await t.http.get('/api/export').set(alice.auth).buffer(true).parse(binary);
  assert.is(res.status, 200);
  const zip = new AdmZip(res.body);
  const granted = t.engine.roles.grants.get('EMPLOYEE')!;
  const readable = [...t.engine.registry.values()].filter((r) => r.permissions.read === 'authenticated' || granted.has(r.permissions.read)).map((r) => `${r.name}.csv`);
  assert.equal(zip.getEntries().map((e) => e.entryName).sort(), readable.sort());
  assert.not.ok(readable.includes('user.csv'), 'EMPLOYEE cannot read users');
  const idsOf = (entry: string) => {
    const [header, ...rows] = parse(zip.getEntry(entry)!.getData().toString('utf8')) as string[][];
    return rows.map((r) => r[header.indexOf('id')]);
  };
  assert.equal(idsOf('time-log.csv'), await idsInDb('time_log', { employeeId: alice.employeeId }));
  assert.equal(idsOf('employee.csv'), [alice.employeeId]);
});

test.run();
