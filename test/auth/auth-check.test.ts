// GET /api/auth/check: 200 {valid, userId, tenantId, role, expiresAt} for an access
// token the API accepts, 401 otherwise. GET /api/auth/authenticated (the Ever Gauzy alias): public,
// 200 true or false, never a 401.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { revokeSession } from '../../auth/session/revoke.js';
import { newTenant, PASSWORD, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';

let t: TestApp;
let owner: Session & { organizationId: string };
let refreshToken: string;
/** An access token of a session of the owner's that has been revoked. */
let revokedToken: string;

const now = () => Math.floor(Date.now() / 1000);
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const sid = (token: string) => (jwt.decode(token) as jwt.JwtPayload).sid as string;
const claims = () => ({ sub: owner.userId, tenantId: owner.tenantId, role: 'SUPER_ADMIN', typ: 'access', sid: sid(owner.token) });
const sign = (payload: object, options: jwt.SignOptions = {}) => jwt.sign(payload, TEST_ENV.JWT_SECRET, { algorithm: 'HS256', ...options });
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const check = (headers: Record<string, string> = {}) => t.http.get('/api/auth/check').set(headers);
const authenticated = (headers: Record<string, string> = {}) => t.http.get('/api/auth/authenticated').set(headers);

/** Headers of every token the bearer middleware refuses. */
function refusedTokens(): Array<Record<string, string>> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const payload = base64url({ ...claims(), iat: now(), exp: now() + 3600 });
  return [
    {},
    { Authorization: 'Bearer' },
    { Authorization: 'Bearer garbage' },
    { Authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    { Authorization: owner.token },
    bearer(refreshToken),
    bearer(sign({ ...claims(), exp: now() - 1 })),
    bearer(sign(claims())),
    bearer(sign(claims(), { algorithm: 'HS512' })),
    bearer(jwt.sign(claims(), privateKey, { algorithm: 'RS256' })),
    bearer(`${base64url({ alg: 'none', typ: 'JWT' })}.${payload}.`),
    bearer(jwt.sign(claims(), 'another-secret-of-a-decent-length-0123456789', { algorithm: 'HS256' })),
    bearer(sign({ ...claims(), typ: 'refresh' })),
    bearer(sign({ ...claims(), role: 'GOD' })),
    bearer(sign({ ...claims(), sid: undefined })),
    bearer(sign({ ...claims(), sid: randomUUID() })),
    bearer(sign({ ...claims(), sid: 'not-a-uuid' })),
    bearer(revokedToken),
  ];
}

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
  const res = await t.http.post('/api/auth/login').send({ email: owner.email, password: PASSWORD });
  refreshToken = res.body.refresh_token;
  const ended = await t.http.post('/api/auth/login').send({ email: owner.email, password: PASSWORD });
  revokedToken = ended.body.token;
  assert.is(await revokeSession(t.engine.broadcast, t.db, owner.userId, sid(revokedToken)), 1);
});
test.after(async () => {
  await t.close();
});

test('check: 200 with the claims of the token and its expiry as an ISO timestamp', async () => {
  const res = await check(owner.auth);
  assert.is(res.status, 200, JSON.stringify(res.body));
  const { exp } = jwt.decode(owner.token) as jwt.JwtPayload;
  assert.equal(res.body, {
    valid: true,
    userId: owner.userId,
    tenantId: owner.tenantId,
    role: 'SUPER_ADMIN',
    expiresAt: new Date(exp! * 1000).toISOString(),
  });

  const viewer = await userWithRole(t, owner, 'VIEWER');
  const other = await check(viewer.auth);
  assert.is(other.status, 200);
  assert.is(other.body.userId, viewer.userId);
  assert.is(other.body.role, 'VIEWER');
  assert.is(other.body.tenantId, owner.tenantId);
});

test('check: the role the user has now, not the one the token was signed with; a refresh signs the new one', async () => {
  const manager = await userWithRole(t, owner, 'MANAGER');
  const pair = (await t.http.post('/api/auth/login').send({ email: manager.email, password: PASSWORD })).body;
  const role = await t.db('role').where({ tenantId: owner.tenantId, name: 'DATA_ENTRY' }).first();
  await t.db('user').where({ id: manager.userId }).update({ roleId: role.id });
  assert.is(jwt.decode(pair.token, { json: true })?.role, 'MANAGER');
  assert.is((await check(bearer(pair.token))).body.role, 'DATA_ENTRY', 'a token acts with the role stored now');
  const next = await t.http.post('/api/auth/refresh-token').send({ refresh_token: pair.refresh_token });
  assert.is(next.status, 200);
  assert.is((await check(bearer(next.body.token))).body.role, 'DATA_ENTRY');
});

test('check: a token signed with the secret but without exp is a 401 (and the same claims with one pass)', async () => {
  assertUnauthorized(await check(bearer(sign(claims()))));
  assertUnauthorized(await check(bearer(sign({ ...claims(), iat: now() }))));
  const lasting = await check(bearer(sign(claims(), { expiresIn: 60 })));
  assert.is(lasting.status, 200, JSON.stringify(lasting.body));
  assert.type(lasting.body.expiresAt, 'string');
});

test('check: 401 for every token the API refuses; 403 for a Tenant-Id of another tenant', async () => {
  for (const headers of refusedTokens()) assertUnauthorized(await check(headers));
  assertError(await check({ ...owner.auth, 'Tenant-Id': randomUUID() }), 403, 'Forbidden resource');
  assert.is((await check({ ...owner.auth, 'Tenant-Id': owner.tenantId })).status, 200);
});

test('authenticated: 200 true for a token the API accepts', async () => {
  const res = await authenticated(owner.auth);
  assert.is(res.status, 200);
  assert.match(res.headers['content-type'], /^application\/json/);
  assert.is(res.text, 'true');
  assert.is(res.body, true);
});

test('authenticated: 200 false without a token or with any refused one, never a 401', async () => {
  for (const headers of [...refusedTokens(), { Authorization: 'Bearer garbage', 'Tenant-Id': randomUUID() }]) {
    const res = await authenticated(headers);
    assert.is(res.status, 200, `${JSON.stringify(headers)}: ${res.status} ${res.text}`);
    assert.is(res.text, 'false');
    assert.is(res.headers['www-authenticate'], undefined);
  }
});

test('authenticated: a valid token with a Tenant-Id of another tenant is the usual 403', async () => {
  assertError(await authenticated({ ...owner.auth, 'Tenant-Id': randomUUID() }), 403, 'Forbidden resource');
  assert.is((await authenticated({ ...owner.auth, 'Tenant-Id': owner.tenantId })).text, 'true');
});

test.run();
