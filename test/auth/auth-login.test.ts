// POST /api/auth/login: 200 with the user, an access token and a refresh token;
// an unknown email, a wrong password and an inactive user get the very same 401.
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';

let t: TestApp;
let owner: Session & { organizationId: string };

const loginWith = (body: unknown) => t.http.post('/api/auth/login').send(body as object);

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
});
test.after(async () => {
  await t.close();
});

test('200: the user (no secrets), an HS256 access token and a refresh token', async () => {
  const res = await loginWith({ email: owner.email, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(Object.keys(res.body).sort(), ['refresh_token', 'token', 'user']);
  const { user } = res.body;
  assert.is(user.id, owner.userId);
  assert.is(user.email, owner.email);
  assert.is(user.name, 'Olive Owner');
  assert.is(user.firstName, 'Olive');
  assert.is(user.lastName, 'Owner');
  assert.is(user.tenantId, owner.tenantId);
  assert.is(user.role.name, 'SUPER_ADMIN');
  assert.is(user.hash, undefined);
  assert.not.match(JSON.stringify(res.body), /argon2/);

  const access = jwt.verify(res.body.token, TEST_ENV.JWT_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
  assert.is(access.sub, owner.userId);
  assert.is(access.tenantId, owner.tenantId);
  assert.is(access.role, 'SUPER_ADMIN');
  assert.is(access.typ, 'access');
  assert.is(access.exp! - access.iat!, 86_400, 'one day by default');
  assert.is((jwt.decode(res.body.token, { complete: true }) as jwt.Jwt).header.alg, 'HS256');

  const refresh = jwt.verify(res.body.refresh_token, TEST_ENV.JWT_REFRESH_SECRET, { algorithms: ['HS256'] }) as jwt.JwtPayload;
  assert.is(refresh.sub, owner.userId);
  assert.is(refresh.typ, 'refresh');
  assert.match(String(refresh.jti), /^[0-9a-f-]{36}$/);
});

test("the token carries the caller's employee and organization when it has one", async () => {
  const worker = await userWithRole(t, owner, 'EMPLOYEE', true);
  const claims = jwt.decode(worker.token) as jwt.JwtPayload;
  assert.is(claims.role, 'EMPLOYEE');
  assert.is(claims.employeeId, worker.employeeId);
  assert.is(claims.organizationId, owner.organizationId);
  const res = await loginWith({ email: worker.email, password: PASSWORD });
  assert.is(res.body.user.employeeId, worker.employeeId);
});

test('the email matches in any case and with surrounding spaces', async () => {
  const res = await loginWith({ email: `  ${owner.email.toUpperCase()} `, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.user.id, owner.userId);
});

test('unknown email, wrong password and inactive user: the same 401 with WWW-Authenticate: Bearer', async () => {
  const inactive = await userWithRole(t, owner, 'VIEWER');
  await t.db('user').where({ id: inactive.userId }).update({ isActive: false });
  const answers = [
    await loginWith({ email: 'nobody@example.com', password: PASSWORD }),
    await loginWith({ email: owner.email, password: 'Wr0ng!Password' }),
    await loginWith({ email: owner.email, password: PASSWORD.toLowerCase() }),
    await loginWith({ email: inactive.email, password: PASSWORD }),
  ];
  for (const res of answers) {
    assertError(res, 401, 'Unauthorized');
    assert.is(res.headers['www-authenticate'], 'Bearer');
    assert.equal(res.body, answers[0].body);
    assert.is(res.text, answers[0].text);
  }
});

test('missing or mistyped fields are a 400', async () => {
  assertError(await loginWith({ email: owner.email }), 400, 'password should not be empty');
  assertError(await loginWith({ password: PASSWORD }), 400, 'email should not be empty');
  assertError(await loginWith({}), 400, 'email should not be empty', 'password should not be empty');
  assertError(await loginWith({ email: 42, password: true }), 400, 'email must be a string', 'password must be a string');
  assertError(await loginWith({ email: '', password: '' }), 400, 'email should not be empty', 'password should not be empty');
  assertError(await loginWith({ email: owner.email, password: PASSWORD, remember: true }), 400, 'property remember should not exist');
  const text = await t.http.post('/api/auth/login').set('Content-Type', 'text/plain').send(`email=${owner.email}`);
  assertError(text, 415);
});

test('every login issues a fresh pair of tokens', async () => {
  const first = await loginWith({ email: owner.email, password: PASSWORD });
  const second = await loginWith({ email: owner.email, password: PASSWORD });
  assert.is.not(first.body.refresh_token, second.body.refresh_token);
  const me = await t.http.get('/api/tags').set('Authorization', `Bearer ${second.body.token}`);
  assert.is(me.status, 200);
});

test.run();
