// POST /api/auth/reset-password and its alias /api/auth/request-password: {email}
// answers the same 200 whether or not the account exists and mails a single-use token valid one
// hour (only its hash is stored); {token, password, confirmPassword} spends it, replaces the
// password and revokes every refresh token of the user. Mail is read from a real SMTP server.
import { createHash } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';
import { startSmtp, type SmtpCapture } from '../helpers/smtp.js';

const CLIENT = 'https://app.example.test';
const NEW_PASSWORD = 'N3w!Secret-pass';
const OK = { status: 200, message: 'OK' };
const INVALID_TOKEN = 'token is invalid, has expired or was already used';

let t: TestApp;
let smtp: SmtpCapture;
let owner: Session & { organizationId: string };

test.before(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ env: { SMTP_URL: smtp.url, CLIENT_BASE_URL: CLIENT } });
  owner = await newTenant(t);
});
test.after(async () => {
  await t.close();
  await smtp.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const requestReset = (body: unknown, path = '/api/auth/reset-password') => t.http.post(path).send(body as object);
const reset = (body: unknown) => t.http.post('/api/auth/reset-password').send(body as object);
const signIn = (email: string, password: string) => t.http.post('/api/auth/login').send({ email, password });
const refresh = (refreshToken: string) => t.http.post('/api/auth/refresh-token').send({ refresh_token: refreshToken });
const resetRows = (userId: string) => t.db('password_reset').where({ userId }).orderBy('createdAt');
const storedHash = async (userId: string) => (await t.db('user').select('hash').where({ id: userId }).first()).hash as string;

/** Reset mails already read, so each wait finds the next one sent to that address (registration mails a code too). */
const seen = new Set<object>();
const isResetMail = (m: { subject: string }) => /reset/i.test(m.subject);
async function nextMailTo(email: string) {
  const mail = await smtp.waitFor((m) => m.to.includes(email) && isResetMail(m) && !seen.has(m));
  seen.add(mail);
  return mail;
}

/** The token as the mail carries it: alone on a line, and in the client link on another. */
function tokenOf(text: string): string {
  const lines = text.split(/\r?\n/);
  const link = lines.find((line) => line.startsWith(`${CLIENT}/#/auth/reset-password?token=`));
  assert.ok(link, `no reset link line in: ${text}`);
  const token = decodeURIComponent(link!.split('?token=')[1]);
  assert.ok(lines.includes(token), 'the token also stands on a line of its own');
  return token;
}

/** A fresh user of the owner's tenant, and the token of a reset it asked for. */
async function userWithToken(): Promise<Session & { resetToken: string }> {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  assert.equal((await requestReset({ email: user.email })).body, OK);
  return { ...user, resetToken: tokenOf((await nextMailTo(user.email)).text) };
}

test('{email} of an account: 200 OK, a mail with the token and the client link, only its hash stored, valid one hour', async () => {
  const user = await userWithRole(t, owner, 'MANAGER');
  const res = await requestReset({ email: user.email });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, OK);
  const mail = await nextMailTo(user.email);
  assert.equal(mail.to, [user.email]);
  assert.match(mail.subject, /reset/i);
  const token = tokenOf(mail.text);
  assert.match(token, /^[A-Za-z0-9_-]{43}$/, 'a 256-bit url-safe token');

  const rows = await resetRows(user.userId);
  assert.is(rows.length, 1);
  assert.is(rows[0].tokenHash, sha256(token));
  assert.is(rows[0].tenantId, owner.tenantId);
  assert.is(rows[0].usedAt, null);
  assert.not.ok(JSON.stringify(rows).includes(token), 'the token itself is never stored');
  const [{ minutes }] = (await t.db.raw(`select extract(epoch from ("expiresAt" - now())) / 60 as minutes from password_reset where id = ?`, [rows[0].id])).rows;
  assert.ok(Number(minutes) > 55 && Number(minutes) <= 60, `expires in ${minutes} minutes`);
});

test('{email} of no account, or of an inactive one: the very same 200 OK, no token stored, no mail', async () => {
  const inactive = await userWithRole(t, owner, 'VIEWER');
  await t.db('user').where({ id: inactive.userId }).update({ isActive: false });
  const before = Number((await t.db('password_reset').count({ n: '*' }))[0].n);
  const nobody = uniqueEmail('nobody');
  for (const email of [nobody, inactive.email]) {
    const res = await requestReset({ email });
    assert.is(res.status, 200);
    assert.equal(res.body, OK);
    const alias = await requestReset({ email }, '/api/auth/request-password');
    assert.equal([alias.status, alias.body], [200, OK]);
  }
  assert.is(Number((await t.db('password_reset').count({ n: '*' }))[0].n), before);
  // A mail sent after these arrives; none went to either address before it.
  const marker = await userWithToken();
  assert.ok(marker.resetToken);
  assert.not.ok(smtp.messages.some((m) => m.to.includes(nobody) || (m.to.includes(inactive.email) && isResetMail(m))));
});

test('the email is matched trimmed and case-insensitively; the alias /api/auth/request-password mails a token too', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const res = await requestReset({ email: `  ${user.email.toUpperCase()} ` }, '/api/auth/request-password');
  assert.equal([res.status, res.body], [200, OK]);
  const token = tokenOf((await nextMailTo(user.email)).text);
  assert.is((await resetRows(user.userId))[0].tokenHash, sha256(token));
});

test('{email}: 400 for a missing, malformed or non-string email, an unknown field or a body that is not an object', async () => {
  const before = Number((await t.db('password_reset').count({ n: '*' }))[0].n);
  for (const path of ['/api/auth/reset-password', '/api/auth/request-password']) {
    assertError(await requestReset({}, path), 400, 'email should not be empty');
    assertError(await requestReset({ email: 'not-an-email' }, path), 400, 'email must be an email');
    assertError(await requestReset({ email: 42 }, path), 400, 'email must be a string');
    assertError(await requestReset({ email: owner.email, tenantId: owner.tenantId }, path), 400, 'property tenantId should not exist');
    assertError(await requestReset([owner.email], path), 400, 'body must be an object');
  }
  assertError(await requestReset({ token: 'abc', password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }, '/api/auth/request-password'), 400, 'property token should not exist');
  assert.is(Number((await t.db('password_reset').count({ n: '*' }))[0].n), before);
});

test('{token, password, confirmPassword}: 200, new argon2id hash, token spent, every refresh token revoked', async () => {
  const user = await userWithToken();
  const sessions = [await signIn(user.email, PASSWORD), await signIn(user.email, PASSWORD)];
  for (const s of sessions) assert.is(s.status, 200);
  const oldHash = await storedHash(user.userId);

  const res = await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, OK);

  const hash = await storedHash(user.userId);
  assert.is.not(hash, oldHash);
  assert.ok(hash.startsWith('$argon2id$'));
  const [row] = await resetRows(user.userId);
  assert.ok(row.usedAt, 'the token is spent');
  const live = await t.db('refresh_token').where({ userId: user.userId, status: 'active' });
  assert.is(live.length, 0, 'no live refresh token is left');
  for (const s of sessions) assertUnauthorized(await refresh(s.body.refresh_token));
  assertUnauthorized(await signIn(user.email, PASSWORD));
  assert.is((await signIn(user.email, NEW_PASSWORD)).status, 200);
});

test('a spent token is a 400 the second time; the password set by its first use stays', async () => {
  const user = await userWithToken();
  assert.is((await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD })).status, 200);
  const hash = await storedHash(user.userId);
  assertError(await reset({ token: user.resetToken, password: 'Other!Pass123', confirmPassword: 'Other!Pass123' }), 400, INVALID_TOKEN);
  assert.is(await storedHash(user.userId), hash);
  assert.is((await signIn(user.email, NEW_PASSWORD)).status, 200);
});

test('two concurrent uses of one token: exactly one succeeds', async () => {
  const user = await userWithToken();
  const body = { token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD };
  const answers = await Promise.all([reset(body), reset(body), reset(body)]);
  assert.equal(answers.map((r) => r.status).sort(), [200, 400, 400]);
  const rows = await resetRows(user.userId);
  assert.is(rows.length, 1);
  assert.ok(rows[0].usedAt);
});

test('an expired token is a 400 and changes nothing; it stays unusable', async () => {
  const user = await userWithToken();
  await t.db('password_reset').where({ userId: user.userId }).update({ expiresAt: t.db.raw(`now() - interval '1 second'`) });
  const hash = await storedHash(user.userId);
  const session = await signIn(user.email, PASSWORD);
  const live = (await t.db('refresh_token').where({ userId: user.userId, status: 'active' })).length;
  assertError(await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, INVALID_TOKEN);
  assert.is(await storedHash(user.userId), hash);
  assert.is((await resetRows(user.userId))[0].usedAt, null);
  assert.is((await t.db('refresh_token').where({ userId: user.userId, status: 'active' })).length, live, 'sessions are untouched');
  assert.is((await refresh(session.body.refresh_token)).status, 200);
});

test('an unknown or forged token is a 400, and so is the hash of a real one', async () => {
  const user = await userWithToken();
  const hash = await storedHash(user.userId);
  const [row] = await resetRows(user.userId);
  for (const token of ['nope', 'A'.repeat(43), row.tokenHash, `${user.resetToken}x`]) {
    assertError(await reset({ token, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, INVALID_TOKEN);
  }
  assert.is(await storedHash(user.userId), hash);
  assert.is((await resetRows(user.userId))[0].usedAt, null);
});

test('the token of a user deactivated since it was mailed is a 400 and changes nothing', async () => {
  const user = await userWithToken();
  const hash = await storedHash(user.userId);
  await t.db('user').where({ id: user.userId }).update({ isActive: false });
  assertError(await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, INVALID_TOKEN);
  assert.is(await storedHash(user.userId), hash);
  assert.is((await resetRows(user.userId))[0].usedAt, null);
});

test('a new request spends the token mailed before; the new one works', async () => {
  const user = await userWithToken();
  assert.equal((await requestReset({ email: user.email })).body, OK);
  const second = tokenOf((await nextMailTo(user.email)).text);
  assert.is.not(second, user.resetToken);
  const rows = await resetRows(user.userId);
  assert.is(rows.length, 2);
  assert.ok(rows.find((r: any) => r.tokenHash === sha256(user.resetToken)).usedAt, 'the first token is spent');
  assertError(await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, INVALID_TOKEN);
  assert.is((await reset({ token: second, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD })).status, 200);
  assert.is((await signIn(user.email, NEW_PASSWORD)).status, 200);
});

test('password rules: one message per broken rule, confirmPassword must match; the token is not spent', async () => {
  const user = await userWithToken();
  const hash = await storedHash(user.userId);
  const weak = await reset({ token: user.resetToken, password: 'abc', confirmPassword: 'abc' });
  assertError(weak, 400);
  assert.equal(weak.body.message, [
    'password must be at least 8 characters long',
    'password must contain at least one uppercase letter',
    'password must contain at least one number',
    'password must contain at least one special character',
  ]);
  assertError(await reset({ token: user.resetToken, password: 'alllowercase1!', confirmPassword: 'alllowercase1!' }), 400, 'password must contain at least one uppercase letter');
  const mismatch = await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: `${NEW_PASSWORD}x` });
  assertError(mismatch, 400);
  assert.equal(mismatch.body.message, ['confirmPassword must match password']);
  assertError(await reset({ token: user.resetToken, password: 'x'.repeat(129), confirmPassword: 'x'.repeat(129) }), 400, 'password must be shorter than or equal to 128 characters');
  assert.is(await storedHash(user.userId), hash);
  assert.is((await resetRows(user.userId))[0].usedAt, null, 'a refused password does not spend the token');
  assert.is((await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD })).status, 200);
});

test('{token, …}: 400 for missing or non-string fields and unknown fields, naming each', async () => {
  const user = await userWithToken();
  const missing = await reset({ token: user.resetToken });
  assertError(missing, 400, 'password should not be empty', 'confirmPassword should not be empty');
  assertError(await reset({ password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, 'token should not be empty');
  assertError(await reset({ token: 123, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, 'token must be a string');
  assertError(await reset({ token: '', password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, 'token should not be empty');
  assertError(await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD, userId: user.userId }), 400, 'property userId should not exist');
  assertError(await reset({ token: user.resetToken, email: user.email, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD }), 400, 'property token should not exist');
  assert.is((await resetRows(user.userId))[0].usedAt, null);
});

test('both forms are public: a bearer token is not needed, and a broken one is not looked at', async () => {
  const user = await userWithToken();
  const res = await t.http.post('/api/auth/reset-password').set('Authorization', 'Bearer broken').send({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
});

test('a reset also ends an email change the old sessions started: its pending code is gone', async () => {
  const user = await userWithToken();
  const change = await t.http.post('/api/email-reset/request-change').set(user.auth).send({ email: uniqueEmail('elsewhere') });
  assert.is(change.status, 200, JSON.stringify(change.body));
  assert.ok(await t.db('email_code').where({ userId: user.userId, purpose: 'change-email' }).first());
  assert.is((await reset({ token: user.resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD })).status, 200);
  assert.is(await t.db('email_code').where({ userId: user.userId }).first(), undefined);
});

test.run();
