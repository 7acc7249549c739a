// The signed-in user's account, inside its own tenant: GET /api/user/me, PUT /api/user/me with the
// mass-assignment guard (server-owned fields ignored; role and tenantId only for an ADMIN or
// SUPER_ADMIN, SUPER_ADMIN only from a SUPER_ADMIN, never another tenant), and POST /api/tenant.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, PASSWORD, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertUnauthorized } from '../helpers/error-envelope.js';

type Admin = Session & { organizationId: string };

let t: TestApp;
let owner: Admin;
let stranger: Admin;

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t, 'Owner Co');
  stranger = await newTenant(t, 'Stranger Co');
});
test.after(async () => {
  await t.close();
});

const me = (auth?: Record<string, string>) => (auth ? t.http.get('/api/user/me').set(auth) : t.http.get('/api/user/me'));
const updateMe = (auth: Record<string, string> | undefined, body: unknown) => {
  const req = t.http.put('/api/user/me');
  if (auth) req.set(auth);
  return req.send(body as object);
};
const renameTenant = (auth: Record<string, string> | undefined, body: unknown) => {
  const req = t.http.post('/api/tenant');
  if (auth) req.set(auth);
  return req.send(body as object);
};
const stored = (userId: string) =>
  t.db('user').join('role', 'role.id', 'user.roleId').select('user.*', { roleName: 'role.name' }).where('user.id', userId).first();
const tenantName = async (id: string) => (await t.db('tenant').where({ id }).first()).name as string;

test('GET /api/user/me: 200, the caller with its role and no secret', async () => {
  const user = await userWithRole(t, owner, 'MANAGER', true);
  const res = await me(user.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.id, user.userId);
  assert.is(res.body.email, user.email);
  assert.is(res.body.tenantId, owner.tenantId);
  assert.is(res.body.name, 'Erin MANAGER');
  assert.is(res.body.role.name, 'MANAGER');
  assert.is(res.body.employeeId, user.employeeId);
  assert.is(res.body.isActive, true);
  assert.not.ok('hash' in res.body);
  assert.not.match(JSON.stringify(res.body), /argon2/);
  const ignored = await t.http.get('/api/user/me?relations[]=employee&includeEmployee=true').set(user.auth);
  assert.equal(ignored.body, res.body, 'query parameters are ignored');
});

test('GET /api/user is no list of users: its 404 names /api/user/me and how an admin adds a user', async () => {
  const res = await t.http.get('/api/user').set(owner.auth);
  assertError(
    res,
    404,
    "Cannot GET /api/user: the signed-in user is GET /api/user/me, and an admin adds a user to the tenant with POST /api/auth/register and the admin's token (the answer is the user, with its id)",
  );
  // Another unknown path keeps the plain sentence; without a token every unknown path is a 401.
  assertError(await t.http.get('/api/users').set(owner.auth), 404, 'Cannot GET /api/users');
  assert.match((await t.http.get('/api/user/').set(owner.auth)).body.message, /^Cannot GET \/api\/user\/: the signed-in user is GET \/api\/user\/me/);
  assertUnauthorized(await t.http.get('/api/user'));
});

test('GET and PUT /api/user/me: 401 without a token, with a bad one, or once the user is inactive', async () => {
  assertUnauthorized(await me());
  assertUnauthorized(await me({ Authorization: 'Bearer not-a-jwt' }));
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  await t.db('user').where({ id: user.userId }).update({ isActive: false });
  assertUnauthorized(await me(user.auth));
  assertUnauthorized(await updateMe(user.auth, { firstName: 'Gone' }));
  assert.is((await stored(user.userId)).firstName, 'Erin');
});

test('PUT /api/user/me: 200, firstName, lastName and imageUrl change, name follows, null clears', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const res = await updateMe(user.auth, { firstName: 'Ada', lastName: 'Lovelace', imageUrl: 'https://img.example.com/ada.png' });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.firstName, 'Ada');
  assert.is(res.body.name, 'Ada Lovelace');
  assert.not.ok('hash' in res.body);
  let row = await stored(user.userId);
  assert.equal([row.firstName, row.lastName, row.name, row.imageUrl], ['Ada', 'Lovelace', 'Ada Lovelace', 'https://img.example.com/ada.png']);

  const partial = await updateMe(user.auth, { lastName: 'King' });
  assert.is(partial.body.name, 'Ada King');
  const cleared = await updateMe(user.auth, { firstName: null, imageUrl: null });
  assert.is(cleared.status, 200, JSON.stringify(cleared.body));
  row = await stored(user.userId);
  assert.equal([row.firstName, row.lastName, row.name, row.imageUrl], [null, 'King', 'King', null]);
  const nothing = await updateMe(user.auth, {});
  assert.is(nothing.status, 200);
  assert.is(nothing.body.name, 'King');
  // A name that does not come from the two parts (a social sign-in's) stays until one part is sent.
  await t.db('user').where({ id: user.userId }).update({ name: 'Ada from GitHub' });
  assert.is((await updateMe(user.auth, { imageUrl: 'https://img.example.com/2.png' })).body.name, 'Ada from GitHub');
  assert.is((await updateMe(user.auth, { firstName: 'Ada' })).body.name, 'Ada King');
});

test('PUT /api/user/me: id, hash, isEmailVerified, isActive, roleId, name and timestamps are ignored', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const before = await stored(user.userId);
  const adminRole = await t.db('role').where({ tenantId: owner.tenantId, name: 'ADMIN' }).first();
  const res = await updateMe(user.auth, {
    firstName: 'Forger',
    id: randomUUID(),
    hash: '$argon2id$v=19$m=4096,t=3,p=1$forged$forged',
    isEmailVerified: true,
    isActive: false,
    roleId: adminRole.id,
    name: 'Forged Name',
    createdAt: '2000-01-01T00:00:00.000Z',
    updatedAt: '2000-01-01T00:00:00.000Z',
  });
  assert.is(res.status, 200, JSON.stringify(res.body));
  const after = await stored(user.userId);
  assert.is(after.id, before.id);
  assert.is(after.hash, before.hash);
  assert.is(after.isEmailVerified, false);
  assert.is(after.isActive, true);
  assert.is(after.roleName, 'EMPLOYEE');
  assert.is(after.name, 'Forger EMPLOYEE');
  assert.equal(after.createdAt, before.createdAt);
  assert.is((await login(t, user.email, PASSWORD)).userId, user.userId, 'the password is the same');
});

test('PUT /api/user/me: the unchanged email is accepted, a new one is a 400 (it has its own flow)', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  assert.is((await updateMe(user.auth, { email: user.email.toUpperCase(), firstName: 'Same' })).status, 200);
  const res = await updateMe(user.auth, { email: 'elsewhere@example.com', firstName: 'Changed' });
  assertError(res, 400, 'email cannot be changed here: request the change with POST /api/email-reset/request-change');
  const row = await stored(user.userId);
  assert.is(row.email, user.email);
  assert.is(row.firstName, 'Same', 'nothing of a refused body is written');
});

test('PUT /api/user/me: role or tenantId from a non-admin is a 403, even its own values, and nothing is written', async () => {
  for (const role of ['EMPLOYEE', 'MANAGER', 'VIEWER']) {
    const user = await userWithRole(t, owner, role);
    for (const body of [{ role: 'ADMIN' }, { role }, { tenantId: owner.tenantId }, { tenantId: stranger.tenantId }]) {
      assertForbidden(await updateMe(user.auth, { ...body, firstName: 'Nope' }));
    }
    const row = await stored(user.userId);
    assert.is(row.roleName, role);
    assert.is(row.firstName, 'Erin');
  }
});

test("PUT /api/user/me: an ADMIN may change its own role but not to SUPER_ADMIN, nor name another tenant", async () => {
  const admin = await userWithRole(t, owner, 'ADMIN');
  assertForbidden(await updateMe(admin.auth, { role: 'SUPER_ADMIN' }));
  assertForbidden(await updateMe(admin.auth, { tenantId: stranger.tenantId }));
  assertForbidden(await updateMe(admin.auth, { role: 'MANAGER', tenantId: stranger.tenantId }));
  assert.is((await stored(admin.userId)).roleName, 'ADMIN');

  const same = await updateMe(admin.auth, { tenantId: owner.tenantId.toUpperCase(), firstName: 'Ad' });
  assert.is(same.status, 200, 'its own tenant id is accepted and ignored');
  const demoted = await updateMe(admin.auth, { role: 'MANAGER' });
  assert.is(demoted.status, 200, JSON.stringify(demoted.body));
  assert.is(demoted.body.role.name, 'MANAGER');
  const row = await stored(admin.userId);
  assert.is(row.roleName, 'MANAGER');
  assert.is(row.tenantId, owner.tenantId);
  // Its access token still says ADMIN; the stored role decides, so it cannot win the role back.
  assertForbidden(await updateMe(admin.auth, { role: 'ADMIN' }));
  assert.is((await stored(admin.userId)).roleName, 'MANAGER');
  const fresh = await t.http.get('/api/auth/check').set((await login(t, admin.email)).auth);
  assert.is(fresh.body.role, 'MANAGER', 'tokens issued afterwards carry the new role');
});

test('PUT /api/user/me: a SUPER_ADMIN may give SUPER_ADMIN, and give it up unless it is the last one (409)', async () => {
  const tenant = await newTenant(t, 'Supers');
  assertError(await updateMe(tenant.auth, { role: 'ADMIN' }), 409, "The tenant's last SUPER_ADMIN cannot give up that role");
  assert.is((await stored(tenant.userId)).roleName, 'SUPER_ADMIN');
  assertForbidden(await updateMe(tenant.auth, { tenantId: stranger.tenantId }));
  assert.is((await updateMe(tenant.auth, { role: 'SUPER_ADMIN', tenantId: tenant.tenantId })).status, 200, 'unchanged role: nothing to check');

  const second = await userWithRole(t, tenant, 'SUPER_ADMIN');
  const res = await updateMe(tenant.auth, { role: 'ADMIN' });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is((await stored(tenant.userId)).roleName, 'ADMIN');
  assertError(await updateMe(second.auth, { role: 'EMPLOYEE' }), 409, "The tenant's last SUPER_ADMIN cannot give up that role");
  assert.is((await stored(second.userId)).roleName, 'SUPER_ADMIN');
});

test('PUT /api/user/me: 400 for broken field rules and unknown fields, nothing written; 401 without a token', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  assertError(await updateMe(user.auth, { firstName: '' }), 400, 'firstName should not be empty');
  assertError(await updateMe(user.auth, { lastName: 42 }), 400, 'lastName must be a string');
  assertError(await updateMe(user.auth, { firstName: 'x'.repeat(256) }), 400, 'firstName must be shorter than or equal to 255 characters');
  assertError(await updateMe(user.auth, { imageUrl: 'not a url' }), 400, 'imageUrl must be a URL address');
  assertError(await updateMe(user.auth, { email: 'nope' }), 400, 'email must be an email');
  assertError(await updateMe(user.auth, { role: 'OWNER' }), 400, /^role must be one of the following values: SUPER_ADMIN/);
  assertError(await updateMe(user.auth, { tenantId: 'x' }), 400, 'tenantId must be a UUID');
  assertError(await updateMe(user.auth, { password: 'Str0ng!Passw0rd' }), 400, 'property password should not exist');
  assertError(await updateMe(user.auth, ['firstName']), 400, 'body must be an object');
  assert.is((await stored(user.userId)).firstName, 'Erin');
  assertUnauthorized(await updateMe(undefined, { firstName: 'Anon' }));
});

test('POST /api/tenant: a SUPER_ADMIN or an ADMIN renames its own tenant, 200 with the tenant', async () => {
  const res = await renameTenant(owner.auth, { name: 'Renamed Co' });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.id, owner.tenantId);
  assert.is(res.body.name, 'Renamed Co');
  assert.ok(res.body.createdAt && res.body.updatedAt);
  assert.is(await tenantName(owner.tenantId), 'Renamed Co');
  const admin = await userWithRole(t, owner, 'ADMIN');
  assert.is((await renameTenant(admin.auth, { name: 'By Admin' })).status, 200);
  assert.is(await tenantName(owner.tenantId), 'By Admin');
  assert.is.not(await tenantName(stranger.tenantId), 'By Admin', 'no other tenant changes');
});

test('POST /api/tenant: 403 for other roles, 400 for a bad body, 401 without a token; the name stays', async () => {
  const before = await tenantName(owner.tenantId);
  for (const role of ['MANAGER', 'EMPLOYEE', 'DATA_ENTRY', 'VIEWER']) {
    assertForbidden(await renameTenant((await userWithRole(t, owner, role)).auth, { name: `By ${role}` }));
  }
  assertError(await renameTenant(owner.auth, {}), 400, 'name should not be empty');
  assertError(await renameTenant(owner.auth, { name: '' }), 400, 'name should not be empty');
  assertError(await renameTenant(owner.auth, { name: 7 }), 400, 'name must be a string');
  assertError(await renameTenant(owner.auth, { name: 'x'.repeat(256) }), 400, 'name must be shorter than or equal to 255 characters');
  assertError(await renameTenant(owner.auth, { name: 'Ok', id: stranger.tenantId }), 400, 'property id should not exist');
  assertUnauthorized(await renameTenant(undefined, { name: 'Anon' }));
  assertForbidden(await renameTenant({ ...owner.auth, 'Tenant-Id': stranger.tenantId }, { name: 'Cross' }));
  assert.is(await tenantName(owner.tenantId), before);
  assert.is(await tenantName(stranger.tenantId), 'Olive Owner');
});

test('POST /api/tenant judges the role stored now: a demoted admin gets 403, a deactivated one 401', async () => {
  const formerAdmin = await userWithRole(t, owner, 'ADMIN');
  const viewerRole = await t.db('role').where({ tenantId: owner.tenantId, name: 'VIEWER' }).first();
  await t.db('user').where({ id: formerAdmin.userId }).update({ roleId: viewerRole.id });
  const before = (await t.db('tenant').where({ id: owner.tenantId }).first()).name;
  assertForbidden(await t.http.post('/api/tenant').set(formerAdmin.auth).send({ name: 'Taken over' }));
  const deactivated = await userWithRole(t, owner, 'ADMIN');
  await t.db('user').where({ id: deactivated.userId }).update({ isActive: false });
  assertUnauthorized(await t.http.post('/api/tenant').set(deactivated.auth).send({ name: 'Taken over' }));
  assert.is((await t.db('tenant').where({ id: owner.tenantId }).first()).name, before);
});

test.run();
