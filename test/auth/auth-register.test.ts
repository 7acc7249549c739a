// POST /api/auth/register: without a token a new tenant with the user as its
// SUPER_ADMIN; with an ADMIN's token a user of that tenant. Privileged fields need such a token,
// server-owned fields are never assigned, and each password rule (8 to 128 characters with an upper-case letter, a lower-case letter, a digit and a special character)
// has its own message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden } from '../helpers/error-envelope.js';

type Admin = Session & { organizationId: string };

let t: TestApp;
let owner: Admin;
let admin: Session;

const register = (body: unknown, auth?: Record<string, string>) => {
  const req = t.http.post('/api/auth/register');
  if (auth) req.set(auth);
  return req.send(body as object);
};
const counts = async () => ({
  tenants: Number((await t.db('tenant').count({ n: '*' }))[0].n),
  users: Number((await t.db('user').count({ n: '*' }))[0].n),
  roles: Number((await t.db('role').count({ n: '*' }))[0].n),
});
const userByEmail = (email: string) =>
  t.db('user').join('role', 'role.id', 'user.roleId').select('user.*', { roleName: 'role.name' }).where('user.email', email.toLowerCase()).first();

/** Neither the hash nor any argon2 string ever leaves the service. */
function assertNoSecret(body: unknown) {
  const text = JSON.stringify(body);
  assert.not.match(text, /argon2/);
  assert.not.match(text, /"hash"/);
  assert.not.match(text, new RegExp(PASSWORD.replace(/[!]/g, '\\!')));
}

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
  admin = await userWithRole(t, owner, 'ADMIN');
});
test.after(async () => {
  await t.close();
});

test('without a token: 201, a new tenant with its eight roles, the user its SUPER_ADMIN, hashed with argon2id', async () => {
  const before = await counts();
  const email = uniqueEmail('Founder').replace('founder', 'FoUnDeR');
  const res = await register({ user: { firstName: 'Fay', lastName: 'Founder', email }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assertNoSecret(res.body);
  assert.is(res.body.email, email.toLowerCase());
  assert.is(res.body.name, 'Fay Founder');
  assert.is(res.body.role.name, 'SUPER_ADMIN');
  assert.is(res.body.isEmailVerified, false);

  const after = await counts();
  assert.equal(after, { tenants: before.tenants + 1, users: before.users + 1, roles: before.roles + 8 });
  const user = await userByEmail(email);
  assert.is(user.id, res.body.id);
  assert.is(user.roleName, 'SUPER_ADMIN');
  assert.is(user.tenantId, res.body.tenantId);
  assert.ok(user.hash.startsWith('$argon2id$'), user.hash.slice(0, 12));
  assert.ok(await t.db('tenant').where({ id: user.tenantId }).first());
  const roles = (await t.db('role').where({ tenantId: user.tenantId })).map((r: { name: string }) => r.name).sort();
  assert.equal(roles, ['ADMIN', 'CANDIDATE', 'DATA_ENTRY', 'EMPLOYEE', 'INTERVIEWER', 'MANAGER', 'SUPER_ADMIN', 'VIEWER']);
  assert.not.equal(user.tenantId, owner.tenantId);
});

test("with an ADMIN's token: a user of that tenant, EMPLOYEE by default or the role given", async () => {
  const before = await counts();
  const plain = await register({ user: { email: uniqueEmail() }, password: PASSWORD }, admin.auth);
  assert.is(plain.status, 201, JSON.stringify(plain.body));
  assertNoSecret(plain.body);
  assert.is(plain.body.tenantId, owner.tenantId);
  assert.is(plain.body.role.name, 'EMPLOYEE');
  const manager = await register({ user: { email: uniqueEmail(), role: 'MANAGER', tenantId: owner.tenantId }, password: PASSWORD }, admin.auth);
  assert.is(manager.status, 201, JSON.stringify(manager.body));
  const stored = await userByEmail(manager.body.email);
  assert.is(stored.roleName, 'MANAGER');
  assert.is(stored.tenantId, owner.tenantId);
  assert.equal(await counts(), { ...before, users: before.users + 2 });
  const superAdmin = await register({ user: { email: uniqueEmail(), role: 'SUPER_ADMIN' }, tenantId: owner.tenantId, password: PASSWORD }, owner.auth);
  assert.is(superAdmin.status, 201, 'a SUPER_ADMIN may make another');
  assert.is((await userByEmail(superAdmin.body.email)).roleName, 'SUPER_ADMIN');
});

test('privileged fields without an admin token are a 403 and nothing is written', async () => {
  const manager = await userWithRole(t, owner, 'MANAGER');
  const before = await counts();
  const cases: Array<[Record<string, unknown>, Record<string, string> | undefined]> = [
    [{ user: { email: uniqueEmail(), role: 'ADMIN' }, password: PASSWORD }, undefined],
    [{ user: { email: uniqueEmail(), role: 'EMPLOYEE' }, password: PASSWORD }, undefined],
    [{ user: { email: uniqueEmail(), tenantId: owner.tenantId }, password: PASSWORD }, undefined],
    [{ user: { email: uniqueEmail() }, tenantId: owner.tenantId, password: PASSWORD }, undefined],
    [{ user: { email: uniqueEmail(), role: 'ADMIN' }, password: PASSWORD }, manager.auth],
    [{ user: { email: uniqueEmail() }, tenantId: owner.tenantId, password: PASSWORD }, manager.auth],
  ];
  for (const [body, auth] of cases) assertForbidden(await register(body, auth));
  assert.equal(await counts(), before);
});

test('an ADMIN cannot make a SUPER_ADMIN nor register into another tenant (403, nothing written)', async () => {
  const stranger = await newTenant(t, 'Stranger');
  const before = await counts();
  const email = uniqueEmail();
  assertForbidden(await register({ user: { email, role: 'SUPER_ADMIN' }, password: PASSWORD }, admin.auth));
  assertForbidden(await register({ user: { email, tenantId: stranger.tenantId }, password: PASSWORD }, admin.auth));
  assertForbidden(await register({ user: { email }, tenantId: stranger.tenantId, password: PASSWORD }, admin.auth));
  assert.equal(await counts(), before);
  assert.not.ok(await userByEmail(email));
});

test('id, hash, isEmailVerified, isActive, roleId and name in the body are never assigned', async () => {
  const forged = {
    id: '11111111-1111-4111-8111-111111111111',
    hash: '$argon2id$v=19$m=4096,t=3,p=1$forged$forged',
    isEmailVerified: true,
    isActive: false,
    roleId: '22222222-2222-4222-8222-222222222222',
    name: 'Forged Name',
    createdAt: '2000-01-01T00:00:00.000Z',
  };
  const email = uniqueEmail();
  const res = await register({ ...forged, user: { ...forged, email, firstName: 'Real', lastName: 'Person' }, password: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  const user = await userByEmail(email);
  assert.is.not(user.id, forged.id);
  assert.is.not(user.hash, forged.hash);
  assert.ok(user.hash.startsWith('$argon2id$'));
  assert.is(user.isEmailVerified, false);
  assert.is(user.isActive, true);
  assert.is(user.roleName, 'SUPER_ADMIN');
  assert.is(user.name, 'Real Person');
  assert.is.not(new Date(user.createdAt).getFullYear(), 2000);
  assert.not.ok(await t.db('user').where({ id: forged.id }).first());
  await login(t, email);
});

test('the password may come at the top level, inside user, or both when equal', async () => {
  for (const body of [
    { user: { email: uniqueEmail() }, password: PASSWORD },
    { user: { email: uniqueEmail(), password: PASSWORD } },
    { user: { email: uniqueEmail(), password: PASSWORD }, password: PASSWORD, confirmPassword: PASSWORD },
  ]) {
    const res = await register(body);
    assert.is(res.status, 201, JSON.stringify(res.body));
    await login(t, res.body.email);
  }
});

test('differing passwords, a wrong confirmation or no password are a 400 and nothing is written', async () => {
  const before = await counts();
  assertError(await register({ user: { email: uniqueEmail(), password: PASSWORD }, password: `${PASSWORD}x` }), 400, 'user.password must match password');
  assertError(await register({ user: { email: uniqueEmail() }, password: PASSWORD, confirmPassword: `${PASSWORD}x` }), 400, 'confirmPassword must match password');
  assertError(await register({ user: { email: uniqueEmail() } }), 400, 'password should not be empty');
  assertError(await register({ user: { email: uniqueEmail() }, password: 12345678 }), 400, 'password must be a string');
  assert.equal(await counts(), before);
});

test('each broken password rule has its own message', async () => {
  const cases: Array<[string, string]> = [
    ['Ab1!xyz', 'password must be at least 8 characters long'],
    ['abcdefg1!', 'password must contain at least one uppercase letter'],
    ['ABCDEFG1!', 'password must contain at least one lowercase letter'],
    ['Abcdefgh!', 'password must contain at least one number'],
    ['Abcdefgh1', 'password must contain at least one special character'],
  ];
  const before = await counts();
  for (const [password, message] of cases) {
    const res = await register({ user: { email: uniqueEmail() }, password, confirmPassword: password });
    assertError(res, 400, message);
    assert.equal(res.body.message, [message], `only the broken rule for ${password}`);
  }
  const all = await register({ user: { email: uniqueEmail() }, password: 'abc' });
  assertError(all, 400, 'password must be at least 8 characters long', 'password must contain at least one uppercase letter', 'password must contain at least one number', 'password must contain at least one special character');
  assert.is(all.body.message.length, 4);
  assert.equal(await counts(), before);
});

test('a bad or missing email is a 400; a taken one (in any case) is a 409; nothing is written', async () => {
  const before = await counts();
  assertError(await register({ user: { email: 'not-an-email' }, password: PASSWORD }), 400, 'user.email must be an email');
  assertError(await register({ user: { email: 'a@b@c.com' }, password: PASSWORD }), 400, 'user.email must be an email');
  assertError(await register({ user: {}, password: PASSWORD }), 400, 'user.email should not be empty');
  assertError(await register({ password: PASSWORD }), 400, 'user should not be empty');
  assertError(await register({ user: { email: owner.email.toUpperCase() }, password: PASSWORD }), 409, 'This email is already registered');
  assertError(await register({ user: { email: owner.email }, password: PASSWORD }, admin.auth), 409, 'This email is already registered');
  assert.equal(await counts(), before);
});

test('a token that is present but invalid is a 401, even on this public route', async () => {
  const before = await counts();
  const res = await register({ user: { email: uniqueEmail() }, password: PASSWORD }, { Authorization: 'Bearer not.a.token' });
  assert.is(res.status, 401);
  assert.is(res.headers['www-authenticate'], 'Bearer');
  assert.equal(await counts(), before);
});

test('an admin demoted or deactivated since its token was issued registers no one of its tenant', async () => {
  const formerAdmin = await userWithRole(t, owner, 'ADMIN');
  const employeeRole = await t.db('role').where({ tenantId: owner.tenantId, name: 'EMPLOYEE' }).first();
  await t.db('user').where({ id: formerAdmin.userId }).update({ roleId: employeeRole.id });
  const before = await counts();
  const email = uniqueEmail('backdoor');
  assertForbidden(await register({ user: { email, role: 'ADMIN' }, password: PASSWORD }, formerAdmin.auth));
  assert.equal(await counts(), before);
  assert.is(await userByEmail(email), undefined);

  const deactivated = await userWithRole(t, owner, 'ADMIN');
  await t.db('user').where({ id: deactivated.userId }).update({ isActive: false });
  const beforeInactive = await counts();
  assertError(await register({ user: { email, role: 'EMPLOYEE' }, password: PASSWORD }, deactivated.auth), 401);
  assertError(await register({ user: { email }, password: PASSWORD }, deactivated.auth), 401);
  assert.equal(await counts(), beforeInactive);
});

test('long first and last names still register: the tenant name is cut to its column', async () => {
  const email = uniqueEmail('long');
  const res = await register({ user: { email, firstName: 'F'.repeat(200), lastName: 'L'.repeat(200) }, password: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  const tenant = await t.db('tenant').where({ id: res.body.tenantId }).first();
  assert.is(tenant.name, `${'F'.repeat(200)} ${'L'.repeat(54)}`);
});

test.run();
