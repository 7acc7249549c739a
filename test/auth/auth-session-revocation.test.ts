// Ending a session ends its ACCESS tokens too, on every protected route: after a password reset, a
// password change (all sessions but the caller's), a spent refresh token shown again, and
// revokeUserSessions itself. SESSION_CHECK_TTL_MS=0 here, so every request asks the database; one
// test shows that with a long TTL a revocation made through this process still takes effect at
// once. On PostgreSQL, a refresh held open while the sessions are revoked leaves a successor token
// that nothing accepts.
import { createHash } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { accessToken } from '../../auth/session/issue.js';
import { revokeUserSessions } from '../../auth/session/revoke.js';
import { exchangeToken } from '../../auth/session/store.js';
import { signRefreshToken, tokenKeys } from '../../auth/tokens.js';
import { newTenant, PASSWORD, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, usingPostgres, type TestApp } from '../helpers/app.js';
import { assertUnauthorized } from '../helpers/error-envelope.js';
import { startSmtp, type SmtpCapture } from '../helpers/smtp.js';

const NEW_PASSWORD = 'N3w!Secret-pass';

let t: TestApp;
let smtp: SmtpCapture;
let owner: Session & { organizationId: string };

interface Pair {
  token: string;
  refresh_token: string;
}

test.before(async () => {
  smtp = await startSmtp();
  t = await createTestApp({ env: { SMTP_URL: smtp.url, SESSION_CHECK_TTL_MS: '0' } });
  owner = await newTenant(t);
});
test.after(async () => {
  await t.close();
  await smtp.close();
});

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const sid = (token: string) => (jwt.decode(token) as jwt.JwtPayload).sid as string;
const tagCount = async (app = t) => Number((await app.db('tag').count({ n: '*' }))[0].n);
const sessionRow = (token: string, app = t) => app.db('user_session').where({ id: sid(token) }).first();

async function signIn(email: string, password = PASSWORD, app = t): Promise<Pair> {
  const res = await app.http.post('/api/auth/login').send({ email, password });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return { token: res.body.token, refresh_token: res.body.refresh_token };
}

async function refreshed(refreshToken: string): Promise<Pair> {
  const res = await t.http.post('/api/auth/refresh-token').send({ refresh_token: refreshToken });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** The token works on a read, a write, the token check and the public "am I signed in?". */
async function assertAccepted(token: string, app = t) {
  assert.is((await app.http.get('/api/user/me').set(bearer(token))).status, 200);
  assert.is((await app.http.get('/api/auth/check').set(bearer(token))).status, 200);
  assert.is((await app.http.get('/api/auth/authenticated').set(bearer(token))).text, 'true');
}

/**
 * The token is refused everywhere a token is taken: reads, writes (which leave nothing), the token
 * check, registration by a signed-in caller; and the public check answers false.
 */
async function assertRefused(token: string, app = t) {
  const before = await tagCount(app);
  assertUnauthorized(await app.http.get('/api/user/me').set(bearer(token)));
  assertUnauthorized(await app.http.get('/api/tags').set(bearer(token)));
  assertUnauthorized(await app.http.post('/api/tags').set(bearer(token)).send({ name: `after revocation ${before}`, color: 'red' }));
  assertUnauthorized(await app.http.put('/api/user/me').set(bearer(token)).send({ firstName: 'Mallory' }));
  assertUnauthorized(await app.http.get('/api/auth/check').set(bearer(token)));
  const email = `after-revocation-${before}@example.com`;
  assertUnauthorized(await app.http.post('/api/auth/register').set(bearer(token)).send({ user: { firstName: 'M', lastName: 'M', email }, password: PASSWORD, confirmPassword: PASSWORD }));
  const answer = await app.http.get('/api/auth/authenticated').set(bearer(token));
  assert.is(answer.status, 200);
  assert.is(answer.text, 'false');
  assert.is(await tagCount(app), before);
  assert.is(await app.db('user').where({ email }).first(), undefined);
}

test('a live session: its access tokens pass, from the sign-in and from each refresh', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const first = await signIn(user.email);
  const second = await refreshed(first.refresh_token);
  await assertAccepted(first.token);
  await assertAccepted(second.token);
  const row = await sessionRow(first.token);
  assert.is(row.userId, user.userId);
  assert.is(row.tenantId, user.tenantId);
  assert.is(row.revokedAt, null);
});

test('password reset: every access token of the user is refused at once; a new sign-in works', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const pairs = [await signIn(user.email), await signIn(user.email)];
  const rotated = await refreshed(pairs[1].refresh_token);
  const bystander = await signIn(owner.email);

  assert.is((await t.http.post('/api/auth/reset-password').send({ email: user.email })).status, 200);
  const mail = await smtp.waitFor((m) => m.to.includes(user.email) && /reset/i.test(m.subject));
  const resetToken = decodeURIComponent(mail.text.split(/\r?\n/).find((line) => line.includes('?token='))!.split('?token=')[1]);
  const res = await t.http.post('/api/auth/reset-password').send({ token: resetToken, password: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));

  for (const token of [user.token, pairs[0].token, pairs[1].token, rotated.token]) await assertRefused(token);
  for (const token of [user.token, pairs[0].token, pairs[1].token]) assert.ok((await sessionRow(token)).revokedAt, 'the session is marked revoked');
  await assertAccepted(bystander.token);
  await assertAccepted((await signIn(user.email, NEW_PASSWORD)).token);
});

test("change-password: the caller's session keeps working, the other sessions' access tokens are refused", async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const mine = await signIn(user.email);
  const other = await signIn(user.email);
  const res = await t.http.post('/api/auth/change-password').set(bearer(mine.token))
    .send({ currentPassword: PASSWORD, newPassword: NEW_PASSWORD, confirmPassword: NEW_PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));

  await assertAccepted(mine.token);
  await assertAccepted((await refreshed(mine.refresh_token)).token);
  await assertRefused(other.token);
  await assertRefused(user.token);
  assert.is((await sessionRow(mine.token)).revokedAt, null);
  assert.ok((await sessionRow(other.token)).revokedAt);
});

test('a spent refresh token shown again: every access token of that session is refused, other sessions pass', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const first = await signIn(user.email);
  const second = await refreshed(first.refresh_token);
  assertUnauthorized(await t.http.post('/api/auth/refresh-token').send({ refresh_token: first.refresh_token }));

  await assertRefused(first.token);
  await assertRefused(second.token);
  assertUnauthorized(await t.http.post('/api/auth/refresh-token').send({ refresh_token: second.refresh_token }));
  assert.ok((await sessionRow(first.token)).revokedAt);
  await assertAccepted(user.token, t);
});

test('revokeUserSessions: access tokens of the revoked sessions are refused, the kept one passes', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const kept = await signIn(user.email);
  const ended = await signIn(user.email);
  assert.is(await revokeUserSessions(t.engine.broadcast, t.db, user.userId, sid(kept.token)), 2);
  await assertAccepted(kept.token);
  await assertRefused(ended.token);
  await assertRefused(user.token);
  assert.is(await revokeUserSessions(t.engine.broadcast, t.db, user.userId), 1);
  await assertRefused(kept.token);
});

test('tokens without a session, or naming one that does not exist or is not theirs: 401', async () => {
  const { iat: _iat, exp: _exp, sid: _sid, ...claims } = jwt.decode(owner.token) as jwt.JwtPayload;
  const key = tokenKeys(t.engine.config).access.current.key;
  const sign = (extra: object) => jwt.sign({ ...claims, ...extra }, key, { algorithm: 'HS256', expiresIn: 60 });
  const colleague = await userWithRole(t, owner, 'ADMIN');
  for (const token of [sign({}), sign({ sid: 'not-a-uuid' }), sign({ sid: 42 }), sign({ sid: '0b6e1a4e-59c5-4b0e-9d4e-3b1c1c1c1c1c' }), sign({ sid: sid(colleague.token) })]) {
    await assertRefused(token);
  }
  await assertAccepted(sign({ sid: sid(owner.token) }));
});

test('a session whose refresh tokens have all expired is deleted at the next sign-in, and its access tokens refused', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const old = await signIn(user.email);
  await t.db('refresh_token').where({ sessionId: sid(old.token) }).update({ expiresAt: new Date(Date.now() - 1000) });
  const fresh = await signIn(user.email);
  assert.is(await sessionRow(old.token), undefined);
  assert.is(await t.db('refresh_token').where({ sessionId: sid(old.token) }).first(), undefined);
  await assertRefused(old.token);
  await assertAccepted(fresh.token);
  await assertAccepted(user.token);
});

test('with a long SESSION_CHECK_TTL_MS the answer is cached, yet a revocation through this process takes effect at once', async () => {
  const cached = await createTestApp({ env: { SESSION_CHECK_TTL_MS: '3600000' } });
  try {
    const admin = await newTenant(cached);
    const pair = await signIn(admin.email, PASSWORD, cached);
    await assertAccepted(pair.token, cached);
    // Revoked behind the service's back: the cached answer still stands (this is what the TTL buys).
    await cached.db('user_session').where({ id: sid(pair.token) }).update({ revokedAt: cached.db.fn.now() });
    assert.is((await cached.http.get('/api/user/me').set(bearer(pair.token))).status, 200);
    await cached.db('user_session').where({ id: sid(pair.token) }).update({ revokedAt: null });

    assert.is(await revokeUserSessions(cached.engine.broadcast, cached.db, admin.userId), 2);
    await assertRefused(pair.token, cached);
    await assertRefused(admin.token, cached);
  } finally {
    await cached.close();
  }
});

// A request while the revoking transaction is open reads the session as still live (and may cache
// that); once it commits, the answer is forgotten. PGlite's one connection cannot serve a request
// while a transaction is open: PostgreSQL only.
(usingPostgres() ? test : test.skip)("with a long TTL, a revocation inside a caller's transaction takes effect when it commits", async () => {
  const cached = await createTestApp({ env: { SESSION_CHECK_TTL_MS: '3600000' } });
  try {
    const admin = await newTenant(cached);
    await assertAccepted(admin.token, cached);
    const trx = await cached.db.transaction();
    try {
      assert.is(await revokeUserSessions(cached.engine.broadcast, trx, admin.userId), 1);
      assert.is((await cached.http.get('/api/user/me').set(bearer(admin.token))).status, 200, 'not revoked until committed');
      await trx.commit();
    } catch (err) {
      if (!trx.isCompleted()) await trx.rollback();
      throw err;
    }
    await assertRefused(admin.token, cached);
  } finally {
    await cached.close();
  }
});

// PGlite has a single connection: a transaction held open there blocks every other query, so the
// two sides of this race cannot run at once. PostgreSQL only.
(usingPostgres() ? test : test.skip)('a refresh held open while the sessions are revoked: its successor is refused everywhere', async () => {
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const pair = await signIn(user.email);
  const next = signRefreshToken(tokenKeys(t.engine.config), user.userId, user.tenantId);
  const trx = await t.db.transaction();
  let revoking: Promise<number> | undefined;
  try {
    // The exchange has spent the token and inserted its successor, and is not committed yet.
    const spent = await exchangeToken(trx, sha256(pair.refresh_token), { tokenHash: sha256(next.token), expiresAt: next.expiresAt });
    assert.is(spent?.sessionId, sid(pair.token));
    const { rows } = await trx.raw('select pg_backend_pid() as pid');
    revoking = revokeUserSessions(t.engine.broadcast, t.db, user.userId);
    // Wait until the revocation is blocked by the exchange's row lock.
    for (let tries = 0; ; tries += 1) {
      const blocked = await t.db.raw('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [rows[0].pid]);
      if (blocked.rows[0].n > 0) break;
      if (tries > 200) throw new Error('the revocation never waited on the exchange');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await trx.commit();
  } catch (err) {
    if (!trx.isCompleted()) await trx.rollback();
    throw err;
  }
  await revoking;

  // The UPDATE could not see the successor being inserted: it is still `active`...
  assert.is((await t.db('refresh_token').where({ tokenHash: sha256(next.token) }).first()).status, 'active');
  assert.ok((await sessionRow(pair.token)).revokedAt);
  // ...but in a revoked session: it is not exchanged, and nothing of the session is accepted.
  const before = await t.db('refresh_token').where({ userId: user.userId }).select('id', 'status').orderBy('id');
  assertUnauthorized(await t.http.post('/api/auth/refresh-token').send({ refresh_token: next.token }));
  assert.equal(await t.db('refresh_token').where({ userId: user.userId }).select('id', 'status').orderBy('id'), before);
  const account = { id: user.userId, tenantId: user.tenantId, role: 'EMPLOYEE' };
  await assertRefused(accessToken(t.engine, account, sid(pair.token)));
  await assertRefused(pair.token);
});

test.run();
