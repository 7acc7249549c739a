// Signing out (POST /api/auth/logout, and the GET Ever Gauzy clients send): the session of the
// access token presented ends. Its refresh and access tokens are refused at once, on the instance
// that answered and on the others (two server processes on one PostgreSQL database); the user's
// other sessions stay signed in.
import { randomBytes, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tokenKeys } from '../../auth/tokens.js';
import { newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';
import { dropSchema, killServers, startServer, type ServerProcess } from '../helpers/server-process.js';

const DATABASE_URL = process.env.DATABASE_URL;

let t: TestApp;
let owner: Session & { organizationId: string };

interface Pair {
  token: string;
  refresh_token: string;
}

// A TTL of an hour: what this instance knows of a session would be trusted that long, so a
// refusal right after signing out shows the sign-out reached this instance's own answers.
test.before(async () => {
  t = await createTestApp({ env: { SESSION_CHECK_TTL_MS: '3600000' } });
  owner = await newTenant(t);
});
test.after(async () => {
  killServers();
  await t.close();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const sid = (token: string) => (jwt.decode(token) as jwt.JwtPayload).sid as string;

async function signIn(email: string, http = t.http): Promise<Pair> {
  const res = await http.post('/api/auth/login').send({ email, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return { token: res.body.token, refresh_token: res.body.refresh_token };
}

async function refreshed(refreshToken: string, http = t.http): Promise<Pair> {
  const res = await http.post('/api/auth/refresh-token').send({ refresh_token: refreshToken });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** The token passes a read and the token check (which also puts its session in this instance's cache). */
async function assertAccepted(token: string, http = t.http) {
  assert.is((await http.get('/api/user/me').set(bearer(token))).status, 200);
  assert.is((await http.get('/api/auth/check').set(bearer(token))).status, 200);
}

/** Refused on a read, a write (which leaves nothing), the token check and sign-out itself; "am I signed in?" says false. */
async function assertRefused(token: string, http = t.http) {
  const name = `after logout ${randomBytes(4).toString('hex')}`;
  assertUnauthorized(await http.get('/api/user/me').set(bearer(token)));
  assertUnauthorized(await http.post('/api/tags').set(bearer(token)).send({ name, color: 'red' }));
  assertUnauthorized(await http.get('/api/auth/check').set(bearer(token)));
  assertUnauthorized(await http.post('/api/auth/logout').set(bearer(token)));
  assertUnauthorized(await http.get('/api/auth/logout').set(bearer(token)));
  assert.is((await http.get('/api/auth/authenticated').set(bearer(token))).text, 'false');
  assert.is(await t.db('tag').where({ name }).first(), undefined);
}

async function assertRefreshRefused(refreshToken: string, http = t.http) {
  assertUnauthorized(await http.post('/api/auth/refresh-token').send({ refresh_token: refreshToken }));
}

for (const method of ['post', 'get'] as const) {
  test(`${method.toUpperCase()} /api/auth/logout: 200 OK; that session's access and refresh tokens are refused at once, other sessions pass`, async () => {
    const user = await userWithRole(t, owner, 'EMPLOYEE');
    const leaving = await signIn(user.email);
    const rotated = await refreshed(leaving.refresh_token);
    const otherDevice = await signIn(user.email);
    for (const token of [leaving.token, rotated.token, otherDevice.token]) await assertAccepted(token);

    const res = await t.http[method]('/api/auth/logout').set(bearer(rotated.token));
    assert.is(res.status, 200, JSON.stringify(res.body));
    assert.match(res.headers['content-type'], /^application\/json/);
    assert.equal(res.body, { status: 200, message: 'OK' });

    // The session is marked ended and every live refresh token of it revoked.
    const session = await t.db('user_session').where({ id: sid(rotated.token) }).first();
    assert.ok(session.revokedAt, 'the session is marked revoked');
    const tokens = await t.db('refresh_token').where({ sessionId: sid(rotated.token) }).select('status');
    assert.equal(tokens.map((r) => r.status).sort(), ['revoked', 'spent']);

    // Every token of that session: the access tokens from the sign-in and from the refresh, both refresh tokens.
    await assertRefused(leaving.token);
    await assertRefused(rotated.token);
    await assertRefreshRefused(rotated.refresh_token);
    await assertRefreshRefused(leaving.refresh_token);
    // The other device's session, and the user's earlier one, are untouched.
    await assertAccepted(otherDevice.token);
    await assertAccepted(user.token);
    assert.is((await t.db('user_session').where({ id: sid(otherDevice.token) }).first()).revokedAt, null);
    await assertAccepted((await refreshed(otherDevice.refresh_token)).token);
    // Signing in again starts a new session.
    await assertAccepted((await signIn(user.email)).token);
  });
}

test('logout without a token, or with one the API refuses, is a 401 that ends nothing; HEAD ends nothing either', async () => {
  const user = await userWithRole(t, owner, 'VIEWER');
  const key = tokenKeys(t.engine.config).access.current.key;
  const { iat: _iat, exp: _exp, ...claims } = jwt.decode(user.token) as jwt.JwtPayload;
  const refused = [
    {},
    { Authorization: 'Bearer garbage' },
    bearer(jwt.sign(claims, key, { algorithm: 'HS256' })), // its session, but no exp
    bearer(jwt.sign(claims, 'another-secret-of-a-decent-length-0123456789', { algorithm: 'HS256', expiresIn: 60 })),
  ];
  for (const headers of refused) {
    assertUnauthorized(await t.http.post('/api/auth/logout').set(headers));
    assertUnauthorized(await t.http.get('/api/auth/logout').set(headers));
  }
  assert.is((await t.db('user_session').where({ id: sid(user.token) }).first()).revokedAt, null, 'nothing was ended');
  await assertAccepted(user.token);
  // HEAD asks what a GET would answer, and ends nothing (a safe method).
  const head = await t.http.head('/api/auth/logout').set(user.auth);
  assert.is(head.status, 200);
  await assertAccepted(user.token);
  // A Tenant-Id header naming another tenant is the usual 403, and ends nothing either.
  assertError(await t.http.post('/api/auth/logout').set({ ...user.auth, 'Tenant-Id': randomUUID() }), 403, 'Forbidden resource');
  await assertAccepted(user.token);
});

test('the OpenAPI document declares both spellings of sign-out, with their answers', async () => {
  const doc = (await t.http.get('/swg-json')).body;
  const path = doc.paths['/api/auth/logout'];
  for (const method of ['post', 'get']) {
    const op = path?.[method];
    assert.ok(op, `${method} /api/auth/logout is declared`);
    for (const status of ['200', '401', '403']) assert.ok(op.responses[status], `${method}: ${status} declared`);
    assert.equal(op.responses['200'].content['application/json'].schema.required, ['status', 'message']);
    assert.is(op.security, undefined, 'the document-wide bearer requirement applies');
  }
});

// Two instances of the service, each its own process, on one PostgreSQL database: a sign-out on
// A reaches B's answers before A answers, though B keeps them an hour. The embedded database is
// one process on one folder: there is no second instance to sign out on.
(DATABASE_URL ? test : test.skip)('two processes: logout on A; B refuses the refresh and the access token at once', async () => {
  const schema = `logout_test_${randomBytes(4).toString('hex')}`;
  const env = { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1', SESSION_CHECK_TTL_MS: '3600000' };
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  try {
    a = await startServer(env);
    b = await startServer(env);
    const [httpA, httpB] = [request(a.url), request(b.url)];
    const email = uniqueEmail('logout');
    const reg = await httpA.post('/api/auth/register').send({ user: { firstName: 'Lou', lastName: 'Out', email }, password: PASSWORD, confirmPassword: PASSWORD });
    assert.is(reg.status, 201, JSON.stringify(reg.body));
    const leaving = await signIn(email, httpA);
    const staying = await signIn(email, httpB);
    // B has checked the session and keeps its answer for up to an hour.
    await assertAccepted(leaving.token, httpB);

    assert.is((await httpA.post('/api/auth/logout').set(bearer(leaving.token))).status, 200);
    // At once, on both: the access token and the refresh token.
    await assertRefused(leaving.token, httpB);
    await assertRefused(leaving.token, httpA);
    await assertRefreshRefused(leaving.refresh_token, httpB);
    await assertRefreshRefused(leaving.refresh_token, httpA);
    // The user's other session is live on both.
    await assertAccepted(staying.token, httpA);
    await assertAccepted(staying.token, httpB);
  } finally {
    await a?.stop();
    await b?.stop();
    await dropSchema(DATABASE_URL!, schema);
  }
});

test.run();
