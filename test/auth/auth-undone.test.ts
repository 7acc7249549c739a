// The account writes the database undoes (as a deadlock's victim would be): sign-up, sign-in,
// sign-out, password and profile changes, emailed codes, reset requests and resets. Their
// transactions only write rows, so each runs once more by itself; undone again, it is the 503 to
// send again with nothing written (test/helpers/undo-trigger.ts undoes the statements).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { authModels } from '../../auth/models.js';
import { createResetToken } from '../../auth/password/reset-tokens.js';
import { CONCURRENT_WRITE } from '../../engine/db/errors.js';
import { login, PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { undoneOnce, undoTrigger, type UndoTrigger } from '../helpers/undo-trigger.js';

let t: TestApp;
let users: UndoTrigger;
let sessions: UndoTrigger;
let sessionsSwept: UndoTrigger;

test.before(async () => {
  t = await createTestApp();
  users = await undoTrigger(t.db, 'user');
  sessions = await undoTrigger(t.db, 'user_session', ['insert']);
  sessionsSwept = await undoTrigger(t.db, 'user_session', ['delete']);
});

test.after(async () => {
  await users.drop();
  await sessions.drop();
  await sessionsSwept.drop();
  await t.close();
});

/** A sign-up; its new tenant is named after the user ("Una <lastName>"). */
const register = (email: string, lastName = 'Done') => t.http.post('/api/auth/register').send({ user: { firstName: 'Una', lastName, email }, password: PASSWORD, confirmPassword: PASSWORD });
const usersWith = async (email: string) => Number((await t.db('user').where({ email }).count({ n: '*' }))[0].n);
const tenantsNamed = async (name: string) => Number((await t.db('tenant').where({ name }).count({ n: '*' }))[0].n);

test('sign-up undone once: written by its second run, one user and one tenant', async () => {
  const email = uniqueEmail('undone');
  await users.undoNext(1);
  const res = await register(email, 'Once');
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(await users.statementsSeen(), 2);
  assert.is(await usersWith(email), 1);
  assert.is(await tenantsNamed('Una Once'), 1, 'the undone run left no tenant behind');
  await users.stop();
});

test('sign-up undone twice: 503 to send again, no user, no tenant; sent again, registered', async () => {
  const email = uniqueEmail('undone');
  await users.undoNext(2, '40001');
  assertError(await register(email, 'Twice'), 503, CONCURRENT_WRITE);
  assert.is(await users.statementsSeen(), 2);
  assert.is(await usersWith(email), 0);
  assert.is(await tenantsNamed('Una Twice'), 0);
  await users.stop();
  assert.is((await register(email, 'Twice')).status, 201);
  assert.is(await usersWith(email), 1);
  assert.is(await tenantsNamed('Una Twice'), 1);
});

test('sign-in undone once: one session; undone twice: 503 and no session', async () => {
  const email = uniqueEmail('undone');
  assert.is((await register(email)).status, 201);
  const userId = (await t.db('user').where({ email }).first('id')).id;
  const sessionsOf = async () => Number((await t.db('user_session').where({ userId }).count({ n: '*' }))[0].n);

  await sessions.undoNext(1);
  const res = await t.http.post('/api/auth/login').send({ email, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.ok(res.body.token && res.body.refresh_token);
  assert.is(await sessions.statementsSeen(), 2);
  assert.is(await sessionsOf(), 1);

  await sessions.undoNext(2);
  assertError(await t.http.post('/api/auth/login').send({ email, password: PASSWORD }), 503, CONCURRENT_WRITE);
  assert.is(await sessionsOf(), 1, 'no session of the undone sign-in');
  await sessions.stop();

  // The sweep of the user's ended sessions before a sign-in is a statement of its own, run again too.
  await sessionsSwept.undoNext(1);
  assert.is((await t.http.post('/api/auth/login').send({ email, password: PASSWORD })).status, 200);
  assert.is(await sessionsSwept.statementsSeen(), 2);
  assert.is(await sessionsOf(), 2);
  await sessionsSwept.stop();
});

test('a password change undone once is made: the new password signs in, the old one no more', async () => {
  const email = uniqueEmail('undone');
  assert.is((await register(email)).status, 201);
  const session = await login(t, email);
  const newPassword = 'An0ther!Passw0rd';
  await users.undoNext(1);
  const res = await t.http.post('/api/auth/change-password').set(session.auth).send({ currentPassword: PASSWORD, newPassword, confirmPassword: newPassword });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(await users.statementsSeen(), 2);
  await users.stop();
  assert.is((await t.http.post('/api/auth/login').send({ email, password: newPassword })).status, 200);
  assert.is((await t.http.post('/api/auth/login').send({ email, password: PASSWORD })).status, 401);
});

test('sign-out, a profile change, an emailed code, a reset request and a reset undone once: each made by its second run', async () => {
  const email = uniqueEmail('undone');
  assert.is((await register(email)).status, 201);
  const session = await login(t, email);
  const userId = session.userId;

  // The profile: the user row's update.
  await users.undoNext(1);
  const renamed = await t.http.put('/api/user/me').set(session.auth).send({ firstName: 'Renamed' });
  assert.is(renamed.status, 200, JSON.stringify(renamed.body));
  assert.is(await users.statementsSeen(), 2);
  assert.is((await t.db('user').where({ id: userId }).first('firstName')).firstName, 'Renamed');
  await users.stop();

  // A verification code: its row, written with the hour's count under the user's lock.
  const resent = await undoneOnce(t.db, 'email_code', ['insert'], () => t.http.post('/api/auth/email/verify/resend-verification-code').set(session.auth));
  assert.is(resent.result.status, 200, JSON.stringify(resent.result.body));
  assert.is(resent.statements, 2);
  assert.is(Number((await t.db('email_code').where({ userId }).count({ n: '*' }))[0].n), 1);

  // A reset request: the answer is the same either way, the token row says whether it was made.
  const requested = await undoneOnce(t.db, 'password_reset', ['insert'], () => t.http.post('/api/auth/request-password').send({ email }));
  assert.is(requested.result.status, 200);
  assert.is(requested.statements, 2);
  assert.is(Number((await t.db('password_reset').where({ userId }).count({ n: '*' }))[0].n), 1);

  // Sign-out: the session's revocation.
  const out = await undoneOnce(t.db, 'user_session', ['update'], () => t.http.post('/api/auth/logout').set(session.auth));
  assert.is(out.result.status, 200, JSON.stringify(out.result.body));
  assert.is(out.statements, 2);
  assert.ok((await t.db('user_session').where({ userId }).first('revokedAt')).revokedAt, 'the session is revoked');

  // The reset itself: the token spent and the user's other reset tokens with it (two updates),
  // the password changed and the sessions ended, together.
  const token = (await createResetToken(authModels(t.engine), t.db, email))!;
  const newPassword = 'Reset!Passw0rd9';
  const reset = await undoneOnce(t.db, 'password_reset', ['update'], () => t.http.post('/api/auth/reset-password').send({ token, password: newPassword, confirmPassword: newPassword }));
  assert.is(reset.result.status, 200, JSON.stringify(reset.result.body));
  assert.is(reset.statements, 3, 'the undone first update, then both updates of the second run');
  assert.is((await t.http.post('/api/auth/login').send({ email, password: newPassword })).status, 200);
});

test.run();
