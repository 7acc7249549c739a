// Bearer verification: only an unexpired HS256 access token signed with the
// service's secret, of a known role, passes. Everything else is the same 401 with
// WWW-Authenticate: Bearer, and a refused write leaves nothing behind.
import { createHmac, generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { CLOCK_SKEW_SECONDS } from '../../auth/tokens.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { assertUnauthorized } from '../helpers/error-envelope.js';

let t: TestApp;
let owner: Session & { organizationId: string };
let refreshToken: string;

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const now = () => Math.floor(Date.now() / 1000);
const tagCount = async () => Number((await t.db('tag').count({ n: '*' }))[0].n);

/** The claims of a real access token of the owner, to forge variants of. */
const claims = () => ({ sub: owner.userId, tenantId: owner.tenantId, role: 'SUPER_ADMIN', typ: 'access', sid: (jwt.decode(owner.token) as jwt.JwtPayload).sid });
const sign = (payload: object, options: jwt.SignOptions = {}) => jwt.sign(payload, TEST_ENV.JWT_SECRET, { algorithm: 'HS256', ...options });
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Every protected route answers the same way: a read and a write, and the write leaves nothing. */
async function assertRefused(headers: Record<string, string>) {
  const before = await tagCount();
  assertUnauthorized(await t.http.get('/api/tags').set(headers));
  assertUnauthorized(await t.http.post('/api/tags').set(headers).send({ name: `refused ${before}`, color: 'red' }));
  assert.is(await tagCount(), before);
}

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
  const res = await t.http.post('/api/auth/login').send({ email: owner.email, password: 'Str0ng!Passw0rd' });
  refreshToken = res.body.refresh_token;
});
test.after(async () => {
  await t.close();
});

test('the control: a token signed like the service signs passes', async () => {
  assert.is((await t.http.get('/api/tags').set(owner.auth)).status, 200);
  assert.is((await t.http.get('/api/tags').set(bearer(sign(claims(), { expiresIn: 60 })))).status, 200);
});

test('no token is a 401', async () => {
  await assertRefused({});
  assertUnauthorized(await t.http.get(`/api/employee/${owner.userId}`));
  assertUnauthorized(await t.http.delete(`/api/organization/${owner.organizationId}`));
  assert.ok(await t.db('organization').where({ id: owner.organizationId }).first());
});

test('a malformed Authorization header is a 401', async () => {
  for (const value of ['Bearer', 'Bearer ', `Basic ${Buffer.from('a:b').toString('base64')}`, `Token ${owner.token}`, owner.token, `Bearer ${owner.token} extra`, 'Bearer not-a-jwt', 'Bearer a.b.c']) {
    await assertRefused({ Authorization: value });
  }
});

test('a bad signature is a 401: another secret, or a payload changed after signing', async () => {
  await assertRefused(bearer(jwt.sign(claims(), 'another-secret-of-a-decent-length-0123456789', { algorithm: 'HS256' })));
  const [header, , signature] = owner.token.split('.');
  const raised = { ...(jwt.decode(owner.token) as object), role: 'SUPER_ADMIN', tenantId: '0b7e6d3c-52f3-4c8e-9a51-7f1f2a3b4c5d' };
  await assertRefused(bearer(`${header}.${base64url(raised)}.${signature}`));
  await assertRefused(bearer(`${header}.${owner.token.split('.')[1]}.${signature.slice(0, -4)}AAAA`));
});

test('an expired token, or one not valid yet, is a 401', async () => {
  await assertRefused(bearer(sign({ ...claims(), iat: now() - 7200, exp: now() - 3600 })));
  await assertRefused(bearer(sign({ ...claims(), exp: now() - 1 })));
  await assertRefused(bearer(sign({ ...claims(), nbf: now() + 3600 })));
});

test('a token without exp is a 401, however well signed, and stays refused when sent again', async () => {
  const lasting = bearer(sign(claims()));
  assert.is((jwt.decode(lasting.Authorization.slice(7)) as jwt.JwtPayload).exp, undefined);
  await assertRefused(lasting);
  await assertRefused(lasting);
  await assertRefused(bearer(sign({ ...claims(), iat: now() })));
  assert.is((await t.http.get('/api/auth/authenticated').set(lasting)).text, 'false');
});

/** A token of the owner valid from `iat` for `lifetime` seconds, as the service would sign it but for those two. */
const lasting = (iat: number, lifetime: number) => bearer(sign({ ...claims(), iat, exp: iat + lifetime }));
const passes = async (headers: Record<string, string>) => {
  const before = await tagCount();
  assert.is((await t.http.get('/api/tags').set(headers)).status, 200);
  const created = await t.http.post('/api/tags').set(headers).send({ name: `passed ${before}`, color: 'red' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  assert.ok(await t.db('tag').where({ id: created.body.id, tenantId: owner.tenantId }).first());
};

test('a token valid for longer than JWT_EXPIRES_IN is a 401, however well signed; exactly that long passes', async () => {
  const lifetime = t.config.jwt.expiresIn;
  assert.is(lifetime, 86_400, 'the default');
  // exp 10^12: the year 33658.
  const farFuture = bearer(sign({ ...claims(), iat: now(), exp: 1e12 }));
  await assertRefused(farFuture);
  await assertRefused(farFuture);
  assert.is((await t.http.get('/api/auth/authenticated').set(farFuture)).text, 'false');
  await assertRefused(lasting(now(), lifetime + 1));
  await assertRefused(lasting(now() - 60, lifetime + 1));
  await passes(lasting(now(), lifetime));
  await passes(lasting(now() - 60, lifetime));
});

test('a token without iat is a 401, even with an exp within the lifetime', async () => {
  const noIat = sign(claims(), { noTimestamp: true, expiresIn: 60 });
  const decoded = jwt.decode(noIat) as jwt.JwtPayload;
  assert.is(decoded.iat, undefined);
  assert.type(decoded.exp, 'number');
  await assertRefused(bearer(noIat));
  // jsonwebtoken signs no iat but a number: the same signature, computed by hand.
  const unsigned = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ ...claims(), iat: String(now()), exp: now() + 60 })}`;
  await assertRefused(bearer(`${unsigned}.${createHmac('sha256', TEST_ENV.JWT_SECRET).update(unsigned).digest('base64url')}`));
});

test('a token issued in the future is a 401; within the clock skew it passes', async () => {
  await assertRefused(lasting(now() + 3600, 60));
  await assertRefused(lasting(now() + 3600, -3000));
  await assertRefused(lasting(now() + CLOCK_SKEW_SECONDS + 2, 60));
  await passes(lasting(now() + CLOCK_SKEW_SECONDS - 1, 60));
});

test('a token refused for an iat in the future is not kept refused: it passes once the clock reaches it', async () => {
  // floor(now) + skew + 2 is at least a second ahead of the skew whatever the fraction of the second.
  const iat = now() + CLOCK_SKEW_SECONDS + 2;
  const early = lasting(iat, 60);
  await assertRefused(early);
  await assertRefused(early);
  await new Promise((resolve) => setTimeout(resolve, (iat - CLOCK_SKEW_SECONDS) * 1000 - Date.now() + 50));
  await passes(early);
});

test('alg "none" is a 401', async () => {
  const payload = base64url({ ...claims(), iat: now(), exp: now() + 3600 });
  for (const alg of ['none', 'None', 'NONE']) {
    await assertRefused(bearer(`${base64url({ alg, typ: 'JWT' })}.${payload}.`));
  }
});

test('another algorithm is a 401: HS512 or HS384 with the same secret, RS256 with any key', async () => {
  await assertRefused(bearer(sign(claims(), { algorithm: 'HS512' })));
  await assertRefused(bearer(sign(claims(), { algorithm: 'HS384' })));
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await assertRefused(bearer(jwt.sign(claims(), privateKey, { algorithm: 'RS256' })));
});

test('the refresh token used as a bearer is a 401, and so is any token of another type', async () => {
  await assertRefused(bearer(refreshToken));
  await assertRefused(bearer(sign({ ...claims(), typ: 'refresh' })));
  const { typ: _typ, ...untyped } = claims();
  await assertRefused(bearer(sign(untyped)));
  await assertRefused(bearer(jwt.sign(claims(), TEST_ENV.JWT_REFRESH_SECRET, { algorithm: 'HS256' })));
});

test('a token of an unknown role, or missing its tenant or subject, is a 401', async () => {
  await assertRefused(bearer(sign({ ...claims(), role: 'GOD' })));
  await assertRefused(bearer(sign({ ...claims(), role: 'super_admin' })));
  const { tenantId: _tenant, ...noTenant } = claims();
  await assertRefused(bearer(sign(noTenant)));
  const { sub: _sub, ...noSubject } = claims();
  await assertRefused(bearer(sign(noSubject)));
  await assertRefused(bearer(sign({ ...claims(), role: ['SUPER_ADMIN'] })));
});

test('a token verified before is still refused once it expires (verification is not redone, expiry is checked)', async () => {
  const shortLived = sign({ ...claims(), exp: now() + 2 });
  assert.is((await t.http.get('/api/tags').set(bearer(shortLived))).status, 200, 'verified and kept');
  assert.is((await t.http.get('/api/tags').set(bearer(shortLived))).status, 200, 'answered from what was kept');
  // jsonwebtoken refuses a token from the second its exp names; so does what was kept.
  await new Promise((resolve) => setTimeout(resolve, (now() + 2) * 1000 - Date.now() + 50));
  await assertRefused(bearer(shortLived));
});

test('a token verified before does not let through its variants: another header form, a changed signature or payload', async () => {
  assert.is((await t.http.get('/api/tags').set(owner.auth)).status, 200);
  // The scheme is read in any case, as koa-jwt reads it; the same token passes.
  assert.is((await t.http.get('/api/tags').set('Authorization', `bearer ${owner.token}`)).status, 200);
  assert.is((await t.http.get('/api/tags').set('Authorization', `  Bearer ${owner.token}  `)).status, 200);
  // Forms koa-jwt does not read stay refused, the token having passed before or not.
  for (const value of [`Bearer  ${owner.token}`, `Bearer\t${owner.token}`, `Bearer ${owner.token} `.repeat(2), `Bearer ${owner.token}x`]) {
    await assertRefused({ Authorization: value });
  }
  const [header, payload, signature] = owner.token.split('.');
  await assertRefused(bearer(`${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('A') ? 'B' : 'A'}A`));
  await assertRefused(bearer(`${header}.${base64url({ ...(jwt.decode(owner.token) as object), role: 'ADMIN' })}.${signature}`));
  // A validly signed token that names no caller the service accepts stays refused when sent again
  // (its claims are kept once verified; the caller they name is worked out once).
  const godToken = bearer(sign({ ...claims(), role: 'GOD' }, { expiresIn: 60 }));
  await assertRefused(godToken);
  await assertRefused(godToken);
});

test('public routes need no token; the bearer scheme is checked on them only when a token is sent', async () => {
  assert.is((await t.http.get('/api/health')).status, 200);
  const login = await t.http.post('/api/auth/login').set('Authorization', 'Bearer garbage').send({ email: owner.email, password: 'Str0ng!Passw0rd' });
  assert.is(login.status, 200, 'a stale token in the client does not block logging in');
});

test.run();
