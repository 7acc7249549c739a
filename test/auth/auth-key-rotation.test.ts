// Rotating the JWT secrets (keyring.ts): every token names its key by `kid`; after a restart with
// the new secret in JWT_SECRET and the old one in JWT_SECRET_PREVIOUS, tokens of the old key keep
// working until they expire while new ones are signed with the new key; once the previous value
// is removed, the old tokens are refused. Three apps on ONE database play the three deployments.
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { issueCode } from '../../auth/email/codes.js';
import { keyId } from '../../auth/keyring.js';
import { createProjectApp as createApp } from '../../app/create-app.js';
import type { App } from '../../engine/app.js';
import { loadConfig } from '../../engine/config/config.js';
import { newTenant, PASSWORD, type Session } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { assertUnauthorized } from '../helpers/error-envelope.js';

const OLD = { access: TEST_ENV.JWT_SECRET, refresh: TEST_ENV.JWT_REFRESH_SECRET };
const NEW = { access: 'rotated-access-key-7c1f0e9d8b6a5f4e3d2c1b0a99887766', refresh: 'rotated-refresh-key-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d' };

let before: TestApp;
let during: App;
let after: App;
let owner: Session & { organizationId: string };
let oldRefresh: string;

const http = (app: App) => request(app.koa.callback());
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const header = (token: string) => jwt.decode(token, { complete: true })!.header;
const me = (app: App, token: string) => http(app).get('/api/user/me').set(bearer(token));

function appWith(env: Record<string, string>): App {
  return createApp({ config: loadConfig({ ...TEST_ENV, ...env }), db: before.db, logError: () => {}, log: () => {} });
}

test.before(async () => {
  before = await createTestApp();
  owner = await newTenant(before);
  oldRefresh = (await before.http.post('/api/auth/login').send({ email: owner.email, password: PASSWORD })).body.refresh_token;
  during = appWith({ JWT_SECRET: NEW.access, JWT_REFRESH_SECRET: NEW.refresh, JWT_SECRET_PREVIOUS: OLD.access, JWT_REFRESH_SECRET_PREVIOUS: OLD.refresh });
  after = appWith({ JWT_SECRET: NEW.access, JWT_REFRESH_SECRET: NEW.refresh });
});
test.after(async () => {
  await during?.close();
  await after?.close();
  await before?.close();
});

test('tokens name their key by a kid that reveals nothing of the secret', () => {
  const { kid, alg } = header(owner.token);
  assert.is(alg, 'HS256');
  assert.is(kid, keyId(OLD.access));
  assert.is(header(oldRefresh).kid, keyId(OLD.refresh));
  assert.is.not(keyId(OLD.access), keyId(NEW.access));
  assert.match(kid as string, /^[A-Za-z0-9_-]{16}$/);
  assert.not.ok(OLD.access.includes(kid as string));
});

test('during a rotation: old access tokens still pass, new ones are signed with the new key', async () => {
  const res = await me(during, owner.token);
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.id, owner.userId);
  const login = await http(during).post('/api/auth/login').send({ email: owner.email, password: PASSWORD });
  assert.is(login.status, 200);
  assert.is(header(login.body.token).kid, keyId(NEW.access));
  assert.is(header(login.body.refresh_token).kid, keyId(NEW.refresh));
  jwt.verify(login.body.token, NEW.access, { algorithms: ['HS256'] });
  // The deployment that does not know the new key yet refuses what it signed.
  assertUnauthorized(await me(before, login.body.token));
});

test('during a rotation: an old refresh token buys a pair signed with the new keys', async () => {
  const res = await http(during).post('/api/auth/refresh-token').send({ refresh_token: oldRefresh });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(header(res.body.token).kid, keyId(NEW.access));
  assert.is(header(res.body.refresh_token).kid, keyId(NEW.refresh));
  assert.is((await me(after, res.body.token)).status, 200, 'the new pair outlives the previous key');
  const next = await http(after).post('/api/auth/refresh-token').send({ refresh_token: res.body.refresh_token });
  assert.is(next.status, 200, JSON.stringify(next.body));
});

test('a kid decides the key: an unknown kid, or a kid naming another key than the one that signed, is a 401', async () => {
  const claims = jwt.decode(owner.token) as jwt.JwtPayload;
  const { iat: _iat, exp: _exp, ...payload } = claims;
  const sign = (secret: string, keyid?: string) => jwt.sign(payload, secret, { algorithm: 'HS256', expiresIn: 600, ...(keyid ? { keyid } : {}) });
  assert.is((await me(during, sign(NEW.access, keyId(NEW.access)))).status, 200, 'the control');
  assertUnauthorized(await me(during, sign(NEW.access, 'unknown-key-id00')));
  assertUnauthorized(await me(during, sign(NEW.access, keyId(OLD.access))));
  assertUnauthorized(await me(during, sign(OLD.access, keyId(NEW.access))));
  // A refresh key never signs an access token, whatever kid it claims.
  assertUnauthorized(await me(during, sign(NEW.refresh, keyId(NEW.refresh))));
  // Tokens from before key ids: tried with the current key, then the previous one.
  assert.is((await me(during, sign(OLD.access))).status, 200);
  assert.is((await me(during, sign(NEW.access))).status, 200);
  assertUnauthorized(await me(after, sign(OLD.access)));
});

test('an email code mailed before the rotation still verifies during it', async () => {
  const code = await issueCode(before.engine, OLD.access, owner.userId, 'verify-email');
  const res = await http(during).post('/api/auth/email/verify/code').send({ email: owner.email, code });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is((await before.db('user').where({ id: owner.userId }).first()).isEmailVerified, true);
});

test('after the rotation (previous secret removed): old tokens are refused, the new ones pass', async () => {
  assertUnauthorized(await me(after, owner.token));
  const login = await http(before).post('/api/auth/login').send({ email: owner.email, password: PASSWORD });
  const refused = await http(after).post('/api/auth/refresh-token').send({ refresh_token: login.body.refresh_token });
  assertUnauthorized(refused);
  // The refused refresh token was not spent: the deployment that knows its key still takes it.
  assert.is((await http(before).post('/api/auth/refresh-token').send({ refresh_token: login.body.refresh_token })).status, 200);
  const fresh = await http(after).post('/api/auth/login').send({ email: owner.email, password: PASSWORD });
  assert.is((await me(after, fresh.body.token)).status, 200);
});

test.run();
