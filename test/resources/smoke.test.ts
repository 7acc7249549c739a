// The shortest end-to-end path: sign up, log in, create an employee, list it with nested relations.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newTenant } from '../helpers/accounts.js';

let t: TestApp;
test.before(async () => { t = await createTestApp(); });
test.after(async () => { await t.close(); });

test('register, login, create and list employees', async () => {
  const admin = await newTenant(t);
  const me = await t.http.post('/api/auth/login').send({ email: admin.email, password: 'Str0ng!Passw0rd' });
  const emp = await t.http.post('/api/employee').set(admin.auth).send({ firstName: 'Ann', lastName: 'Lee', userId: me.body.user.id, startedWorkOn: '2026-01-05' });
  assert.is(emp.status, 201, JSON.stringify(emp.body));
  assert.is(emp.body.startedWorkOn, '2026-01-05T00:00:00.000Z');
  const list = await t.http.get('/api/employee?relations[]=user.role&relations[]=organization').set(admin.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  assert.is(list.body.total, 1);
  assert.is(list.body.items[0].user.role.name, 'SUPER_ADMIN');
  assert.is(list.body.items[0].organization.id, admin.organizationId);
  assert.not.ok('hash' in list.body.items[0].user);
});

test.run();
