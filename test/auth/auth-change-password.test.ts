// POST /api/auth/change-password: the signed-in user proves its current password and sets a new
// one that follows the password rules (8 to 128 characters with an upper-case letter, a lower-case letter, a digit and a special character); every other refresh token of the user is revoked, the
// caller's own session stays. Wrong current password or broken rules: 400 and nothing changes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';

const NEW_PASSWORD = 'Fr3sh#Password';
const OK = { status: 200, message: 'OK' };

let t: TestApp;
let owner: Session & { organizationId: string };

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
});
test.after(async () => {
  await t.close();
});

interface SignedIn {
  auth: { Authorization: string };
  refreshToken: string;
}

const signIn = (email: string, password: string) => t.http.post('/api/auth/login').send({ email, password });
async function session(email: string, password = PASSWORD): Promise<SignedIn> {
  const res = await signIn(email, password);
  assert.is(res.status, 200, JSON.stringify(res.body));
  return { auth: { Authorization: `Bearer ${res.body.token}` }, refreshToken: res.body.refresh_token };
}
const change = (auth: Record<string, string> | undefined, body: unknown) => {
  const req = t.http.post('/api/auth/change-password');
  if (auth) req.set(auth);
  return req.send(body as object);
};
const refresh = (refreshToken: string) => t.http.post('/api/auth/refresh-token').send({ refresh_token: refreshToken });
const storedHash = async (userId: string) => (await t.db('user').select('hash').where({ id: userId }).first()).hash as string;
const liveTokens = async (userId: string) => Number((await t.db('refresh_token').where({ userId, status: 'active' }).count({ n: '*' }))[0].n);
const body = (currentPassword: string, newPassword: string, confirmPassword = newPassword) => ({ currentPassword, newPassword, confirmPassword });

test("200: the new password works, the old one does not, the other sessions are revoked and the caller's stays", async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const mine = await session(user.email);
  const others = [await session(user.email), await session(user.email)];
  const oldHash = await storedHash(user.userId);

  const res = await change(mine.auth, body(PASSWORD, NEW_PASSWORD));
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, OK);

  const hash = await storedHash(user.userId);
  assert.is.not(hash, oldHash);
  assert.ok(hash.startsWith('$argon2id$'));
  const mineRow = await t.db('refresh_token').where({ userId: user.userId, status: 'active' });
  assert.is(mineRow.length, 1, "only the caller's refresh token is left live");
  for (const other of others) assertUnauthorized(await refresh(other.refreshToken));
  const renewed = await refresh(mine.refreshToken);
  assert.is(renewed.status, 200, JSON.stringify(renewed.body));
  assertUnauthorized(await signIn(user.email, PASSWORD));
  assert.is((await signIn(user.email, NEW_PASSWORD)).status, 200);
});

test("the caller's access token goes on working after the change", async () => {
  const user = await userWithRole(t, owner, 'MANAGER');
  const mine = await session(user.email);
  assert.is((await change(mine.auth, body(PASSWORD, NEW_PASSWORD))).status, 200);
  const me = await t.http.get('/api/auth/check').set(mine.auth);
  assert.is(me.status, 200, JSON.stringify(me.body));
});

test('a wrong currentPassword is a 400; the hash and every session stay', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const mine = await session(user.email);
  await session(user.email);
  const hash = await storedHash(user.userId);
  const live = await liveTokens(user.userId);
  const res = await change(mine.auth, body('Wrong!Passw0rd', NEW_PASSWORD));
  assertError(res, 400);
  assert.equal(res.body.message, ['currentPassword is incorrect']);
  assert.is(await storedHash(user.userId), hash);
  assert.is(await liveTokens(user.userId), live);
  assert.is((await signIn(user.email, PASSWORD)).status, 200);
});

test('password rules: one message per broken rule, confirmPassword must match, the new must differ; nothing changes', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const mine = await session(user.email);
  const hash = await storedHash(user.userId);
  const live = await liveTokens(user.userId);

  const weak = await change(mine.auth, body(PASSWORD, 'short'));
  assertError(weak, 400);
  assert.equal(weak.body.message, [
    'newPassword must be at least 8 characters long',
    'newPassword must contain at least one uppercase letter',
    'newPassword must contain at least one number',
    'newPassword must contain at least one special character',
  ]);
  const mismatch = await change(mine.auth, body(PASSWORD, NEW_PASSWORD, 'Fr3sh#Passwor'));
  assertError(mismatch, 400);
  assert.equal(mismatch.body.message, ['confirmPassword must match newPassword']);
  const same = await change(mine.auth, body(PASSWORD, PASSWORD));
  assertError(same, 400);
  assert.equal(same.body.message, ['newPassword must differ from currentPassword']);
  // Every problem at once: the wrong current password and the broken rules.
  const all = await change(mine.auth, body('Wrong!Passw0rd', 'NOLOWER1!', 'other'));
  assertError(all, 400);
  assert.equal(all.body.message, ['currentPassword is incorrect', 'confirmPassword must match newPassword', 'newPassword must contain at least one lowercase letter']);
  const long = 'Aa1!'.repeat(33);
  assertError(await change(mine.auth, body(PASSWORD, long)), 400, 'newPassword must be shorter than or equal to 128 characters');

  assert.is(await storedHash(user.userId), hash);
  assert.is(await liveTokens(user.userId), live);
});

test('400 for missing, empty, non-string or unknown fields and a body that is not an object', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const mine = await session(user.email);
  const hash = await storedHash(user.userId);
  const missing = await change(mine.auth, {});
  assertError(missing, 400, 'currentPassword should not be empty', 'newPassword should not be empty', 'confirmPassword should not be empty');
  assertError(await change(mine.auth, { ...body(PASSWORD, NEW_PASSWORD), currentPassword: '' }), 400, 'currentPassword should not be empty');
  assertError(await change(mine.auth, { ...body(PASSWORD, NEW_PASSWORD), newPassword: 12345678 }), 400, 'newPassword must be a string');
  assertError(await change(mine.auth, { ...body(PASSWORD, NEW_PASSWORD), password: NEW_PASSWORD }), 400, 'property password should not exist');
  assertError(await change(mine.auth, { ...body(PASSWORD, NEW_PASSWORD), userId: owner.userId }), 400, 'property userId should not exist');
  assertError(await change(mine.auth, [PASSWORD]), 400, 'body must be an object');
  assert.is(await storedHash(user.userId), hash);
});

test('401 without a token, with a refresh token as bearer, or for a user made inactive; nothing changes', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const mine = await session(user.email);
  const hash = await storedHash(user.userId);
  assertUnauthorized(await change(undefined, body(PASSWORD, NEW_PASSWORD)));
  assertUnauthorized(await change({ Authorization: `Bearer ${mine.refreshToken}` }, body(PASSWORD, NEW_PASSWORD)));
  await t.db('user').where({ id: user.userId }).update({ isActive: false });
  assertUnauthorized(await change(mine.auth, body(PASSWORD, NEW_PASSWORD)));
  assert.is(await storedHash(user.userId), hash);
});

test("one user's change leaves other users' sessions alone", async () => {
  const a = await userWithRole(t, owner, 'EMPLOYEE');
  const b = await userWithRole(t, owner, 'EMPLOYEE');
  const aSession = await session(a.email);
  const bSession = await session(b.email);
  const bLive = await liveTokens(b.userId);
  assert.is((await change(aSession.auth, body(PASSWORD, NEW_PASSWORD))).status, 200);
  assert.is(await liveTokens(b.userId), bLive);
  assert.is((await refresh(bSession.refreshToken)).status, 200);
  assert.is((await signIn(b.email, PASSWORD)).status, 200);
});

test.run();
