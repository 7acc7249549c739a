// POST /api/auth/refresh-token: a refresh token buys one new pair. Only its SHA-256 is
// stored, with status, expiry, parent and session; a spent token sent again ends its whole
// session; two concurrent exchanges of one token: exactly one succeeds. Expired, forged, wrong-type
// and unknown tokens are 401; a missing or non-string refresh_token is a 400.
import { createHash, generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeUserSessions } from '../../auth/session/revoke.js';
import { CLOCK_SKEW_SECONDS } from '../../auth/tokens.js';
import { newTenant, PASSWORD, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';

let t: TestApp;
let owner: Session & { organizationId: string };

interface Pair {
  token: string;
  refresh_token: string;
}

const sha256 = (token: string) => createHash('sha256').update(token).digest('hex');
const now = () => Math.floor(Date.now() / 1000);
const decode = (token: string) => jwt.decode(token) as jwt.JwtPayload;
const row = (token: string) => t.db('refresh_token').where({ tokenHash: sha256(token) }).first();
const tokenRows = () => t.db('refresh_token').select('id', 'status', 'parentId', 'sessionId', 'tokenHash').orderBy('id');
const refresh = (body: unknown, app = t) => app.http.post('/api/auth/refresh-token').send(body as object);

async function signIn(email: string, app = t): Promise<Pair> {
  const res = await app.http.post('/api/auth/login').send({ email, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return { token: res.body.token, refresh_token: res.body.refresh_token };
}

async function refreshed(refreshToken: string, app = t): Promise<Pair> {
  const res = await refresh({ refresh_token: refreshToken }, app);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(Object.keys(res.body).sort(), ['refresh_token', 'token']);
  return res.body;
}

/** Refused with 401, and the table is exactly as it was. */
async function assertRefusedUnchanged(body: unknown) {
  const before = await tokenRows();
  const res = await refresh(body);
  assertUnauthorized(res);
  assert.equal(await tokenRows(), before, `table changed by ${JSON.stringify(body)}`);
}

const refreshClaims = () => ({ sub: owner.userId, tenantId: owner.tenantId, typ: 'refresh' });
/** Signed like the service signs refresh tokens; an option given as undefined is left out. */
function signRefresh(payload: object, options: Record<string, unknown> = {}) {
  const all = Object.entries({ algorithm: 'HS256', jwtid: randomUUID(), expiresIn: 3600, ...options }).filter(([, v]) => v !== undefined);
  return jwt.sign(payload, TEST_ENV.JWT_REFRESH_SECRET, Object.fromEntries(all) as jwt.SignOptions);
}
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An active row of the owner for `token`, in a session of its own, as if the service had issued it: only the JWT can be refused. */
async function storedActive(token: string): Promise<number> {
  const [{ id }] = await t.db('refresh_token').insert({
    tenantId: owner.tenantId, userId: owner.userId, sessionId: randomUUID(), tokenHash: sha256(token), status: 'active', expiresAt: new Date(Date.now() + 3600_000),
  }).returning('id');
  await t.db('user_session').insert({ id, tenantId: owner.tenantId, userId: owner.userId });
  await t.db('refresh_token').where({ id }).update({ sessionId: id });
  return id;
}

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
});
test.after(async () => {
  await t.close();
});

test('login stores only the hash of its refresh token, starting a session the access token names as sid', async () => {
  const pair = await signIn(owner.email);
  const stored = await t.db('refresh_token').where({ tokenHash: sha256(pair.refresh_token) }).first();
  assert.ok(stored, 'a row keyed by the SHA-256 of the token');
  assert.is(stored.status, 'active');
  assert.is(stored.parentId, null);
  assert.is(stored.sessionId, stored.id, 'the first token of a sign-in starts its session');
  assert.is(stored.userId, owner.userId);
  assert.is(stored.tenantId, owner.tenantId);
  const refreshJwt = decode(pair.refresh_token);
  assert.is(refreshJwt.typ, 'refresh');
  assert.type(refreshJwt.jti, 'string');
  assert.is(new Date(stored.expiresAt).getTime(), refreshJwt.exp! * 1000);
  assert.is(decode(pair.token).sid, stored.sessionId);
  // Neither the token nor its jti is kept anywhere in the row.
  const text = JSON.stringify(stored);
  assert.not.ok(text.includes(pair.refresh_token) || text.includes(refreshJwt.jti!));
});

test('200: a new pair; the old token is spent, its successor active in the same session', async () => {
  const first = await signIn(owner.email);
  const parent = await row(first.refresh_token);
  const second = await refreshed(first.refresh_token);

  const access = jwt.verify(second.token, TEST_ENV.JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
  assert.is(access.typ, 'access');
  assert.is(access.sub, owner.userId);
  assert.is(access.tenantId, owner.tenantId);
  assert.is(access.role, 'SUPER_ADMIN');
  assert.is(access.sid, parent.sessionId);
  const next = jwt.verify(second.refresh_token, TEST_ENV.JWT_REFRESH_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
  assert.is(next.typ, 'refresh');
  assert.is(next.sub, owner.userId);
  assert.is.not(next.jti, decode(first.refresh_token).jti);

  assert.is((await row(first.refresh_token)).status, 'spent');
  const child = await row(second.refresh_token);
  assert.is(child.status, 'active');
  assert.is(child.parentId, parent.id);
  assert.is(child.sessionId, parent.sessionId);

  // The new access token works, and the successor can be exchanged in its turn.
  assert.is((await t.http.get('/api/tags').set('Authorization', `Bearer ${second.token}`)).status, 200);
  const third = await refreshed(second.refresh_token);
  assert.is((await row(third.refresh_token)).parentId, child.id);
  assert.is(decode(third.token).sid, parent.sessionId);
});

test('a spent token sent again is a 401 and revokes its whole session; other sessions live on', async () => {
  const first = await signIn(owner.email);
  const other = await signIn(owner.email);
  const second = await refreshed(first.refresh_token);
  const third = await refreshed(second.refresh_token);

  assertUnauthorized(await refresh({ refresh_token: first.refresh_token }));
  const session = (await row(first.refresh_token)).sessionId;
  const statuses = (await t.db('refresh_token').where({ sessionId: session }).select('status')).map((r) => r.status).sort();
  assert.equal(statuses, ['revoked', 'spent', 'spent'], 'the live successor is revoked, the spent ones stay spent');
  assert.is((await row(third.refresh_token)).status, 'revoked');
  assertUnauthorized(await refresh({ refresh_token: third.refresh_token }));
  assertUnauthorized(await refresh({ refresh_token: second.refresh_token }));

  // The user's other sign-in is untouched.
  assert.is((await row(other.refresh_token)).status, 'active');
  await refreshed(other.refresh_token);
});

test('two concurrent exchanges of one token: exactly one succeeds, and the reuse ends the session', async () => {
  for (let round = 0; round < 5; round++) {
    const pair = await signIn(owner.email);
    const parent = await row(pair.refresh_token);
    const answers = await Promise.all([refresh({ refresh_token: pair.refresh_token }), refresh({ refresh_token: pair.refresh_token })]);
    assert.equal(answers.map((r) => r.status).sort(), [200, 401], JSON.stringify(answers.map((r) => r.body)));
    const winner = answers.find((r) => r.status === 200)!;
    assertUnauthorized(answers.find((r) => r.status === 401)!);

    const children = await t.db('refresh_token').where({ parentId: parent.id });
    assert.is(children.length, 1, 'one successor only');
    assert.is(children[0].tokenHash, sha256(winner.body.refresh_token));
    assert.is((await row(pair.refresh_token)).status, 'spent');
    // The second use was a reuse: the successor handed to the winner is revoked with its session.
    assert.is(children[0].status, 'revoked');
    assert.is(await t.db('refresh_token').where({ sessionId: parent.sessionId, status: 'active' }).first(), undefined);
    assertUnauthorized(await refresh({ refresh_token: winner.body.refresh_token }));
  }
});

test('lifetimes come from JWT_EXPIRES_IN and JWT_REFRESH_EXPIRES_IN', async () => {
  const short = await createTestApp({ env: { JWT_EXPIRES_IN: '120', JWT_REFRESH_EXPIRES_IN: '600' } });
  try {
    const tenant = await newTenant(short);
    const check = async (p: Pair) => {
      const access = decode(p.token);
      const refreshJwt = decode(p.refresh_token);
      assert.is(access.exp! - access.iat!, 120);
      assert.is(refreshJwt.exp! - refreshJwt.iat!, 600);
      const stored = await short.db('refresh_token').where({ tokenHash: sha256(p.refresh_token) }).first();
      assert.is(new Date(stored.expiresAt).getTime(), refreshJwt.exp! * 1000);
    };
    const pair = await signIn(tenant.email, short);
    await check(pair);
    await check(await refreshed(pair.refresh_token, short));
  } finally {
    await short.close();
  }
});

test('expired: a JWT past its exp, even with an active row; an active row past its expiresAt', async () => {
  // Signed with the right secret and stored as active, but the JWT has expired.
  const expired = signRefresh({ ...refreshClaims(), iat: now() - 7200, exp: now() - 60 }, { expiresIn: undefined });
  const [{ id }] = await t.db('refresh_token').insert({
    tenantId: owner.tenantId, userId: owner.userId, sessionId: randomUUID(), tokenHash: sha256(expired), status: 'active', expiresAt: new Date(Date.now() + 3600_000),
  }).returning('id');
  await t.db('refresh_token').where({ id }).update({ sessionId: id });
  await assertRefusedUnchanged({ refresh_token: expired });

  // A real token whose row says it has expired (the database's clock decides too).
  const pair = await signIn(owner.email);
  await t.db('refresh_token').where({ tokenHash: sha256(pair.refresh_token) }).update({ expiresAt: new Date(Date.now() - 1000) });
  await assertRefusedUnchanged({ refresh_token: pair.refresh_token });
  assert.is((await row(pair.refresh_token)).status, 'active', 'not spent');
});

test('without exp: a refresh token signed with the refresh secret and stored as active is still a 401', async () => {
  const lasting = signRefresh(refreshClaims(), { expiresIn: undefined });
  assert.is(decode(lasting).exp, undefined);
  const id = await storedActive(lasting);
  await assertRefusedUnchanged({ refresh_token: lasting });
  // The control: the same row with a token that has an exp is exchanged.
  const expiring = signRefresh(refreshClaims());
  await t.db('refresh_token').where({ id }).update({ tokenHash: sha256(expiring) });
  await refreshed(expiring);
});

test('valid longer than JWT_REFRESH_EXPIRES_IN, without iat or issued in the future: 401 even stored as active, nothing spent or stored', async () => {
  const lifetime = t.config.jwt.refreshExpiresIn;
  assert.is(lifetime, 7 * 86_400, 'the default');
  const whole = { expiresIn: undefined };
  const refused = [
    // exp 10^12: the year 33658.
    signRefresh({ ...refreshClaims(), iat: now(), exp: 1e12 }, whole),
    signRefresh({ ...refreshClaims(), iat: now(), exp: now() + lifetime + 1 }, whole),
    signRefresh({ ...refreshClaims(), iat: now() - 60, exp: now() - 60 + lifetime + 1 }, whole),
    signRefresh(refreshClaims(), { noTimestamp: true }),
    signRefresh({ ...refreshClaims(), iat: now() + 3600, exp: now() + 3660 }, whole),
    signRefresh({ ...refreshClaims(), iat: now() + CLOCK_SKEW_SECONDS + 2, exp: now() + 3600 }, whole),
  ];
  assert.is(decode(refused[3]).iat, undefined);
  const id = await storedActive(refused[0]);
  const sessions = await t.db('user_session').count({ n: '*' });
  for (const token of refused) {
    await t.db('refresh_token').where({ id }).update({ tokenHash: sha256(token) });
    await assertRefusedUnchanged({ refresh_token: token });
    assert.is((await t.db('refresh_token').where({ id }).first()).status, 'active', 'not spent, not revoked');
  }
  assert.equal(await t.db('user_session').count({ n: '*' }), sessions);
  // The controls, each on a row of its own: exactly the lifetime, and an iat within the clock skew.
  const exact = signRefresh(refreshClaims(), { expiresIn: lifetime });
  await t.db('refresh_token').where({ id }).update({ tokenHash: sha256(exact) });
  assert.is((await t.db('refresh_token').where({ parentId: id }).first()), undefined);
  await refreshed(exact);
  assert.is((await row(exact)).status, 'spent');
  assert.is((await t.db('refresh_token').where({ parentId: id }).first()).status, 'active', 'its successor stored');
  const skewed = signRefresh({ ...refreshClaims(), iat: now() + CLOCK_SKEW_SECONDS - 1, exp: now() + 3600 }, whole);
  await storedActive(skewed);
  await refreshed(skewed);
});

test('a lifetime shortened by configuration refuses the tokens issued for longer before it: access and refresh', async () => {
  // A restart with shorter JWT_EXPIRES_IN / JWT_REFRESH_EXPIRES_IN, the same secrets: tokens the
  // default lifetimes issued (one day, seven days) are refused; the new lifetimes pass.
  const short = await createTestApp({ env: { JWT_EXPIRES_IN: '120', JWT_REFRESH_EXPIRES_IN: '600' } });
  try {
    const tenant = await newTenant(short);
    const pair = await signIn(tenant.email, short);
    const { iat: _iat, exp: _exp, ...access } = decode(pair.token);
    const bearer = (expiresIn: number) => `Bearer ${jwt.sign(access, TEST_ENV.JWT_SECRET, { algorithm: 'HS256', expiresIn })}`;
    assertUnauthorized(await short.http.get('/api/tags').set('Authorization', bearer(86_400)));
    assertUnauthorized(await short.http.get('/api/tags').set('Authorization', bearer(121)));
    assert.is((await short.http.get('/api/tags').set('Authorization', bearer(120))).status, 200);

    // The sign-in's own row, made to hold a token of the same claims issued for seven days.
    const { iat: _i, exp: _e, jti, ...claims } = decode(pair.refresh_token);
    const older = jwt.sign(claims, TEST_ENV.JWT_REFRESH_SECRET, { algorithm: 'HS256', jwtid: jti, expiresIn: 7 * 86_400 });
    const rows = () => short.db('refresh_token').select('id', 'status', 'tokenHash').orderBy('id');
    await short.db('refresh_token').where({ tokenHash: sha256(pair.refresh_token) }).update({ tokenHash: sha256(older) });
    const before = await rows();
    assertUnauthorized(await refresh({ refresh_token: older }, short));
    assert.equal(await rows(), before, 'nothing spent or stored');
    await short.db('refresh_token').where({ tokenHash: sha256(older) }).update({ tokenHash: sha256(pair.refresh_token) });
    await refreshed(pair.refresh_token, short);
  } finally {
    await short.close();
  }
});

test('forged, alg none, another algorithm, wrong type, unknown jti: 401, nothing spent or stored', async () => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pair = await signIn(owner.email);
  const [header, payload, signature] = pair.refresh_token.split('.');
  const { iat: _iat, exp: _exp, ...claims } = decode(pair.refresh_token);
  const unsigned = base64url({ ...claims, iat: now(), exp: now() + 3600 });
  const forged = [
    jwt.sign(claims, 'another-secret-of-a-decent-length-0123456789', { algorithm: 'HS256', expiresIn: 3600 }),
    jwt.sign(claims, TEST_ENV.JWT_SECRET, { algorithm: 'HS256', expiresIn: 3600 }),
    `${base64url({ alg: 'none', typ: 'JWT' })}.${unsigned}.`,
    `${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.`,
    jwt.sign(claims, TEST_ENV.JWT_REFRESH_SECRET, { algorithm: 'HS512', expiresIn: 3600 }),
    jwt.sign(claims, TEST_ENV.JWT_REFRESH_SECRET, { algorithm: 'HS384', expiresIn: 3600 }),
    jwt.sign(claims, privateKey, { algorithm: 'RS256', expiresIn: 3600 }),
    `${header}.${base64url({ ...decode(pair.refresh_token), tenantId: randomUUID() })}.${signature}`,
    `${header}.${payload}.${signature.slice(0, -4)}AAAA`,
    // The access token, and tokens of the refresh secret with another type or none.
    pair.token,
    signRefresh({ ...refreshClaims(), typ: 'access' }),
    signRefresh({ sub: owner.userId, tenantId: owner.tenantId }),
    signRefresh({ ...refreshClaims() }, { jwtid: undefined }),
    signRefresh({ typ: 'refresh', tenantId: owner.tenantId }),
    // Well signed, of the right type, but never issued: its jti is unknown.
    signRefresh(refreshClaims()),
    'not-a-jwt',
    'a.b.c',
  ];
  for (const token of forged) await assertRefusedUnchanged({ refresh_token: token });
  assert.is((await row(pair.refresh_token)).status, 'active');
  await refreshed(pair.refresh_token);
});

test('400 when refresh_token is missing or not a non-empty string', async () => {
  const cases: Array<[unknown, string]> = [
    [{}, 'refresh_token should not be empty'],
    [{ refresh_token: '' }, 'refresh_token should not be empty'],
    [{ refresh_token: 42 }, 'refresh_token must be a string'],
    [{ refresh_token: null }, 'refresh_token must be a string'],
    [{ refresh_token: ['a'] }, 'refresh_token must be a string'],
    [{ refresh_token: { token: 'a' } }, 'refresh_token must be a string'],
    [{ refresh_token: 'x'.repeat(5000) }, 'refresh_token must be shorter than or equal to 4096 characters'],
    [{ refreshToken: 'a' }, 'refresh_token should not be empty'],
  ];
  const before = await tokenRows();
  for (const [body, message] of cases) assertError(await refresh(body), 400, message);
  assertError(await refresh({ refresh_token: 'a', extra: 1 }), 400, 'property extra should not exist');
  assertError(await t.http.post('/api/auth/refresh-token'), 400, 'refresh_token should not be empty');
  assertError(await t.http.post('/api/auth/refresh-token').set('Content-Type', 'application/json').send('{"refresh_token":'), 400);
  assertError(await t.http.post('/api/auth/refresh-token').set('Content-Type', 'text/plain').send('token'), 415);
  assert.equal(await tokenRows(), before);
});

test('the new access token reads role and employee from the database at refresh time', async () => {
  const manager = await userWithRole(t, owner, 'MANAGER');
  const pair = await signIn(manager.email);
  assert.is(decode(pair.token).role, 'MANAGER');
  assert.is(decode(pair.token).employeeId, undefined);

  const viewerRole = await t.db('role').where({ tenantId: owner.tenantId, name: 'VIEWER' }).first();
  await t.db('user').where({ id: manager.userId }).update({ roleId: viewerRole.id });
  const employee = await t.http.post('/api/employee').set(owner.auth).send({ firstName: 'Mia', lastName: 'Manager', userId: manager.userId, organizationId: owner.organizationId });
  assert.is(employee.status, 201, JSON.stringify(employee.body));

  const next = await refreshed(pair.refresh_token);
  const claims = decode(next.token);
  assert.is(claims.role, 'VIEWER');
  assert.is(claims.employeeId, employee.body.id);
  assert.is(claims.organizationId, owner.organizationId);
  // The new role is what the API enforces: a VIEWER may not create tags.
  assert.is((await t.http.post('/api/tags').set('Authorization', `Bearer ${next.token}`).send({ name: 'viewer tag', color: 'red' })).status, 403);
});

test('an inactive user cannot refresh (the token is not spent); a deleted one neither', async () => {
  const viewer = await userWithRole(t, owner, 'VIEWER');
  const pair = await signIn(viewer.email);
  await t.db('user').where({ id: viewer.userId }).update({ isActive: false });
  await assertRefusedUnchanged({ refresh_token: pair.refresh_token });
  assert.is((await row(pair.refresh_token)).status, 'active');

  await t.db('user').where({ id: viewer.userId }).update({ isActive: true });
  const next = await refreshed(pair.refresh_token);

  await t.db('user').where({ id: viewer.userId }).delete();
  assert.is(await t.db('refresh_token').where({ userId: viewer.userId }).first(), undefined, "a deleted user's tokens go with it");
  assertUnauthorized(await refresh({ refresh_token: next.refresh_token }));
});

test('a refresh token, old or new, used as a bearer is a 401', async () => {
  const pair = await signIn(owner.email);
  const next = await refreshed(pair.refresh_token);
  for (const token of [pair.refresh_token, next.refresh_token]) {
    assertUnauthorized(await t.http.get('/api/tags').set('Authorization', `Bearer ${token}`));
    assertUnauthorized(await t.http.get('/api/auth/check').set('Authorization', `Bearer ${token}`));
  }
});

test('revokeUserSessions revokes every live token of the user but the kept session, and only theirs', async () => {
  const colleague = await userWithRole(t, owner, 'ADMIN');
  const [kept, a, b] = [await signIn(colleague.email), await signIn(colleague.email), await signIn(colleague.email)];
  const bNext = await refreshed(b.refresh_token);
  const ownerPair = await signIn(owner.email);
  const keptSession = decode(kept.token).sid as string;

  // a, b's successor, and the sign-in userWithRole made.
  assert.is(await revokeUserSessions(t.engine.broadcast, t.db, colleague.userId, keptSession), 3);
  assert.equal(await t.db('refresh_token').where({ userId: colleague.userId, status: 'active' }).pluck('sessionId'), [keptSession]);
  assert.is((await row(a.refresh_token)).status, 'revoked');
  assert.is((await row(bNext.refresh_token)).status, 'revoked');
  assert.is((await row(b.refresh_token)).status, 'spent', 'a spent token stays spent');
  assert.is((await row(kept.refresh_token)).status, 'active');
  assert.is((await row(ownerPair.refresh_token)).status, 'active', "another user's session is untouched");
  assertUnauthorized(await refresh({ refresh_token: a.refresh_token }));
  assertUnauthorized(await refresh({ refresh_token: bNext.refresh_token }));
  const keptNext = await refreshed(kept.refresh_token);

  assert.is(await revokeUserSessions(t.engine.broadcast, t.db, colleague.userId), 1);
  assert.is((await row(keptNext.refresh_token)).status, 'revoked');
  assertUnauthorized(await refresh({ refresh_token: keptNext.refresh_token }));
  assert.is(await revokeUserSessions(t.engine.broadcast, t.db, colleague.userId), 0);
});

test.run();
