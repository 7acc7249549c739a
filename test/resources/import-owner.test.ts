// The owner rule and the resource's own create permission in imports. The project's EMPLOYEE
// role has no IMPORT_ADD (import.test.ts checks its 403); this file's app reads a copy of
// roles.yaml that grants it, so that an EMPLOYEE's import can be checked to write only its own
// records, and to need the resource's create permission beside IMPORT_ADD.
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

test.before(async () => {
  roles = rolesGranting({ EMPLOYEE: ['IMPORT_ADD'] });
  t = await createTestApp({ appOptions: { rolesFile: roles.file } });
  admin = await newTenant(t);
  alice = await userWithRole(t, admin, 'EMPLOYEE', true);
  bob = await userWithRole(t, admin, 'EMPLOYEE', true);
});
test.after(async () => {
  await t.close();
  roles.remove();
});

const csv = (who: Session, resource: string, body: string) =>
  t.http.post(`/api/import/${resource}`).set(who.auth).set('Content-Type', 'text/csv').send(body);

const logsOf = (employeeId: string) => t.db('time_log').where({ tenantId: admin.tenantId, employeeId }).orderBy('startedAt').select('startedAt', 'stoppedAt');

test('an EMPLOYEE imports its own time logs', async () => {
  const file = ['employeeId,startedAt,stoppedAt', `${alice.employeeId},2026-02-02T08:00:00Z,2026-02-02T09:00:00Z`, `${alice.employeeId},2026-02-03T08:00:00Z,2026-02-03T10:00:00Z`].join('\n');
  const res = await csv(alice, 'time-log', file);
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body, { imported: 2, errors: [] });
  const rows = await logsOf(alice.employeeId!);
  assert.equal(rows.map((r: any) => new Date(r.startedAt).toISOString()), ['2026-02-02T08:00:00.000Z', '2026-02-03T08:00:00.000Z']);
});

test("a row with another employee's id fails the whole file for an EMPLOYEE: its row named, nothing written", async () => {
  const before = (await logsOf(alice.employeeId!)).length;
  const file = ['employeeId,startedAt,stoppedAt', `${alice.employeeId},2026-03-02T08:00:00Z,2026-03-02T09:00:00Z`, `${bob.employeeId},2026-03-03T08:00:00Z,2026-03-03T09:00:00Z`].join('\n');
  const res = await csv(alice, 'time-log', file);
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.equal(res.body.errors, [{ row: 2, message: 'the row is forbidden: a tenantId names another tenant or employeeId names another employee than yours' }]);
  assert.is(res.body.imported, 0);
  assert.is((await logsOf(alice.employeeId!)).length, before);
  assert.is((await logsOf(bob.employeeId!)).length, 0);
});

test("IMPORT_ADD is not enough: the resource's create permission is needed too (an EMPLOYEE cannot create tags)", async () => {
  const res = await csv(alice, 'tags', 'name,color\nMine,#123\n');
  assert.is(res.status, 403, JSON.stringify(res.body));
  assert.equal(res.body, { statusCode: 403, message: 'Forbidden resource', error: 'Forbidden' });
  assert.is((await t.db('tag').where({ tenantId: admin.tenantId, name: 'Mine' })).length, 0);
});

test.run();
