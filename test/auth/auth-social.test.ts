// Social login against a provider stub on loopback: the whole flow for each provider (start →
// provider → callback → signed-in redirect), matching by identity and by verified email, and every
// way a callback can be refused (state, browser, provider errors), with the database checked after.
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { stateKey } from '../../auth/social/state.js';
import { PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { startOAuthProvider, type OAuthProviderStub, type StubAccount, type StubProvider } from '../helpers/oauth-provider.js';
import { undoneOnce } from '../helpers/undo-trigger.js';

const CLIENT = 'http://client.example';
const PROVIDERS: StubProvider[] = ['google', 'github', 'microsoft', 'facebook'];

let stub: OAuthProviderStub;
let t: TestApp;
test.before(async () => {
  stub = await startOAuthProvider();
  t = await createTestApp({ env: { CLIENT_BASE_URL: CLIENT, ...Object.assign({}, ...PROVIDERS.map((p) => stub.env(p))) } });
});
test.after(async () => {
  await t?.close();
  await stub?.close();
});

/** An account as each provider's profile endpoint describes it, its email verified. */
function account(provider: StubProvider, email: string, { verified = true, subject = String(Math.floor(Math.random() * 1e12)) } = {}): StubAccount {
  switch (provider) {
    case 'google':
      return { profile: { sub: subject, email, email_verified: verified, given_name: 'Gia', family_name: 'Social', picture: 'https://img.example/p.png' } };
    case 'microsoft':
      // Microsoft's userinfo says nothing of verification: the ID token's optional claim xms_edov does.
      return {
        profile: { sub: subject, email, given_name: 'Gia', family_name: 'Social', name: 'Gia Social' },
        idToken: { aud: stub.clientId('microsoft'), iss: 'https://login.microsoftonline.com/some-tenant/v2.0', sub: subject, email, xms_edov: verified },
      };
    case 'github':
      return {
        profile: { id: Number(subject), login: 'gia', name: 'Gia Social', email: null, avatar_url: 'https://img.example/a.png' },
        emails: [{ email: 'other@example.com', primary: false, verified: true }, { email, primary: true, verified }],
      };
    case 'facebook':
      return { profile: { id: subject, first_name: 'Gia', last_name: 'Social', name: 'Gia Social', ...(verified ? { email } : {}) } };
  }
}

const cookieOf = (res: { headers: Record<string, any> }) => ((res.headers['set-cookie'] ?? []) as string[]).map((c) => c.split(';')[0]).join('; ');

/** GET /api/auth/{provider}: its 302, the authorize URL, the state and the browser's cookie. */
async function start(provider: StubProvider) {
  const res = await t.http.get(`/api/auth/${provider}`);
  assert.is(res.status, 302, JSON.stringify(res.body));
  const authorize = new URL(res.headers.location);
  return { res, authorize, state: authorize.searchParams.get('state')!, cookie: cookieOf(res) };
}

/** What the provider does: the user signs in as `who`, the browser comes back to the callback URL. */
async function atProvider(provider: StubProvider, authorize: URL, who: StubAccount): Promise<URL> {
  stub.signInAs(provider, who);
  const res = await fetch(authorize, { redirect: 'manual' });
  assert.is(res.status, 302, await res.text());
  return new URL(res.headers.get('location')!);
}

const callback = (url: URL, cookie: string) => t.http.get(url.pathname + url.search).set('Cookie', cookie);

/** The whole flow; the final answer of the callback. */
async function signIn(provider: StubProvider, who: StubAccount) {
  const { authorize, cookie } = await start(provider);
  return callback(await atProvider(provider, authorize, who), cookie);
}

/** The tokens of a success redirect, after checking where it points. */
function successOf(res: { status: number; headers: Record<string, any>; body: unknown }) {
  assert.is(res.status, 302, JSON.stringify(res.body));
  const location: string = res.headers.location;
  assert.ok(location.startsWith(`${CLIENT}/#/sign-in/success?`), location);
  assert.is(res.headers['cache-control'], 'no-store');
  const query = new URLSearchParams(location.slice(location.indexOf('?') + 1));
  return { jwt: query.get('jwt')!, refreshToken: query.get('refresh_token')!, userId: query.get('userId')! };
}

function errorOf(res: { status: number; headers: Record<string, any>; body: unknown }): string | null {
  assert.is(res.status, 302, JSON.stringify(res.body));
  const location: string = res.headers.location;
  assert.ok(location.startsWith(`${CLIENT}/#/sign-in?`), location);
  return new URLSearchParams(location.slice(location.indexOf('?') + 1)).get('error');
}

const count = async (table: string) => Number((await t.db(table).count({ n: '*' }))[0].n);
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A password user through the register endpoint, its email verified (or not). */
async function registered(email: string, verified: boolean) {
  const res = await t.http.post('/api/auth/register').send({ user: { firstName: 'Pat', lastName: 'Word', email }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(res.status, 201, JSON.stringify(res.body));
  await t.db('user').where({ id: res.body.id }).update({ isEmailVerified: verified });
  return res.body as { id: string; tenantId: string };
}

for (const provider of PROVIDERS) {
  test(`${provider}: the start redirects to the provider with client, callback, scope, state and PKCE S256`, async () => {
    const { res, authorize, state, cookie } = await start(provider);
    assert.is(`${authorize.origin}${authorize.pathname}`, `${stub.url}/${provider}/authorize`);
    const q = authorize.searchParams;
    assert.is(q.get('client_id'), stub.clientId(provider));
    assert.is(q.get('response_type'), 'code');
    assert.is(q.get('redirect_uri'), `${t.config.apiBaseUrl}/api/auth/${provider}/callback`);
    assert.match(q.get('scope')!, /email/);
    assert.is(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge')!, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(state.length > 20);
    // The state's cookie goes back only to the callback, never to scripts.
    assert.match(String(res.headers['set-cookie']), new RegExp(`path=/api/auth/${provider}/callback`));
    assert.match(String(res.headers['set-cookie']).toLowerCase(), /httponly/);
    assert.ok(cookie.startsWith('social_login_state='));
  });

  test(`${provider}: a first sign-in creates the user with a new tenant as SUPER_ADMIN, and the tokens work`, async () => {
    const email = uniqueEmail(provider);
    const users = await count('user');
    const who = account(provider, email);
    const { jwt: token, refreshToken, userId } = successOf(await signIn(provider, who));

    // The code was redeemed with the client's credentials and the PKCE verifier (the stub checks both).
    const redeemed = stub.tokenRequests.at(-1)!;
    assert.is(redeemed.provider, provider);
    assert.match(redeemed.body.get('code_verifier')!, /^[A-Za-z0-9_-]{43,128}$/);

    assert.is(await count('user'), users + 1);
    const user = await t.db('user').join('role', 'role.id', 'user.roleId').select('user.*', { role: 'role.name' }).where('user.email', email).first();
    assert.is(user.id, userId);
    assert.is(user.role, 'SUPER_ADMIN');
    assert.is(user.isEmailVerified, true);
    assert.is(user.hash, null);
    assert.is(user.firstName, 'Gia');
    assert.is(user.lastName, 'Social');
    assert.is(user.name, 'Gia Social');
    const tenant = await t.db('tenant').where({ id: user.tenantId }).first();
    assert.is(tenant.name, 'Gia Social');
    assert.is(await t.db('role').where({ tenantId: user.tenantId }).count({ n: '*' }).then((r) => Number(r[0].n)), 8);
    const identity = await t.db('user_identity').where({ userId }).first();
    assert.is(identity.provider, provider);
    assert.is(identity.subject, String(who.profile.sub ?? who.profile.id));
    assert.is(identity.tenantId, user.tenantId);

    // The access token is accepted on a protected route, in the new tenant.
    const claims = jwt.decode(token) as jwt.JwtPayload;
    assert.is(claims.sub, userId);
    assert.is(claims.tenantId, user.tenantId);
    assert.is(claims.role, 'SUPER_ADMIN');
    const org = await t.http.post('/api/organization').set(bearer(token)).send({ name: 'Social Org', currency: 'EUR' });
    assert.is(org.status, 201, JSON.stringify(org.body));
    assert.is(org.body.tenantId, user.tenantId);
    const me = await t.http.get('/api/user/me').set(bearer(token));
    assert.is(me.status, 200, JSON.stringify(me.body));
    assert.is(me.body.id, userId);
    assert.is(me.body.email, email);
    const refreshed = await t.http.post('/api/auth/refresh-token').send({ refresh_token: refreshToken });
    assert.is(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.is((jwt.decode(refreshed.body.token) as jwt.JwtPayload).sub, userId);

    // No password was set: password login refuses, with the same 401 as a wrong password.
    const login = await t.http.post('/api/auth/login').send({ email, password: PASSWORD });
    assert.is(login.status, 401);
    assert.is(login.body.message, 'Unauthorized');
  });

  test(`${provider}: the next sign-in of the same account is the same user, even when its email changed`, async () => {
    const who = account(provider, uniqueEmail(provider));
    const first = successOf(await signIn(provider, who));
    const users = await count('user');
    const moved = account(provider, uniqueEmail('moved'), { subject: String(who.profile.sub ?? who.profile.id) });
    const second = successOf(await signIn(provider, moved));
    assert.is(second.userId, first.userId);
    assert.is(await count('user'), users);
    assert.is(await t.db('user_identity').where({ userId: first.userId }).count({ n: '*' }).then((r) => Number(r[0].n)), 1);
  });

  test(`${provider}: a verified email that matches a user links the account to that user`, async () => {
    const email = uniqueEmail('linked');
    const existing = await registered(email, true);
    const users = await count('user');
    // The provider's letter case is not the stored one.
    const { jwt: token, userId } = successOf(await signIn(provider, account(provider, email.toUpperCase())));
    assert.is(userId, existing.id);
    assert.is(await count('user'), users);
    assert.is((jwt.decode(token) as jwt.JwtPayload).tenantId, existing.tenantId);
    const identity = await t.db('user_identity').where({ userId, provider }).first();
    assert.ok(identity);
    // A verified account keeps its password.
    assert.is((await t.http.post('/api/auth/login').send({ email, password: PASSWORD })).status, 200);
    const list = await t.http.get('/api/organization').set(bearer(token));
    assert.is(list.status, 200, JSON.stringify(list.body));
  });

  test(`${provider}: an email the provider does not vouch for, with no linked account → ?error=email_not_verified, nothing created`, async () => {
    const email = uniqueEmail('unverified');
    await registered(email, true);
    const users = await count('user');
    const identities = await count('user_identity');
    assert.is(errorOf(await signIn(provider, account(provider, email, { verified: false }))), 'email_not_verified');
    assert.is(errorOf(await signIn(provider, account(provider, uniqueEmail('nobody'), { verified: false }))), 'email_not_verified');
    assert.is(await count('user'), users);
    assert.is(await count('user_identity'), identities);
  });
}

test('a sign-up through a provider that the database undoes once (as a deadlock\'s victim) is made by its second run: one user', async () => {
  const email = uniqueEmail('social-undone');
  const { result, statements } = await undoneOnce(t.db, 'user', ['insert'], () => signIn('google', account('google', email)));
  const { userId } = successOf(result);
  assert.is(statements, 2, 'undone once, then run again');
  assert.equal((await t.db('user').where({ email }).select('id')).map((row) => row.id), [userId]);
});

test('a matching account whose email was never verified: linked, its password (set by whoever registered) stops working', async () => {
  const email = uniqueEmail('squatted');
  const squatter = await registered(email, false);
  const squatterLogin = await t.http.post('/api/auth/login').send({ email, password: PASSWORD });
  assert.is(squatterLogin.status, 200);
  // What the squatter started before the owner arrives: a password reset and the registration's code.
  assert.is((await t.http.post('/api/auth/reset-password').send({ email })).status, 200);
  assert.ok(await t.db('password_reset').where({ userId: squatter.id }).whereNull('usedAt').first());
  assert.ok(await t.db('email_code').where({ userId: squatter.id }).first());
  const { userId } = successOf(await signIn('google', account('google', email)));
  assert.is(userId, squatter.id);
  assert.is(await t.db('password_reset').where({ userId }).whereNull('usedAt').first(), undefined);
  assert.is(await t.db('email_code').where({ userId }).first(), undefined);
  const user = await t.db('user').where({ id: userId }).first();
  assert.is(user.isEmailVerified, true);
  assert.is(user.hash, null);
  assert.is((await t.http.post('/api/auth/login').send({ email, password: PASSWORD })).status, 401);
  // The sessions opened with that password are over too.
  assert.is((await t.http.post('/api/auth/refresh-token').send({ refresh_token: squatterLogin.body.refresh_token })).status, 401);
});

test('microsoft: the ID token vouches for the email only when it was issued to this client, for this account and this address', async () => {
  const email = uniqueEmail('edov');
  const users = await count('user');
  const sub = 'ms-subject-1';
  const claims = { aud: stub.clientId('microsoft'), sub, email, xms_edov: true };
  const tries: Array<Record<string, unknown>> = [
    { ...claims, aud: 'another-client' },
    { ...claims, aud: [stub.clientId('microsoft') + 'x'] },
    { ...claims, sub: 'someone-else' },
    { ...claims, email: uniqueEmail('other') },
    { ...claims, xms_edov: false },
  ];
  for (const idToken of tries) {
    const res = await signIn('microsoft', { profile: { sub, email }, idToken });
    assert.is(errorOf(res), 'email_not_verified', JSON.stringify(idToken));
  }
  assert.is(await count('user'), users);
  const { userId } = successOf(await signIn('microsoft', { profile: { sub, email }, idToken: { ...claims, aud: [stub.clientId('microsoft')] } }));
  assert.is((await t.db('user').where({ id: userId }).first()).email, email);
});

test('google: an ID token issued to someone else changes nothing; the userinfo decides', async () => {
  const email = uniqueEmail('foreign');
  // The stub's default ID token claims everything verified, but for another client.
  const res = await signIn('google', { profile: { sub: 'g-unverified', email, email_verified: false } });
  assert.is(errorOf(res), 'email_not_verified');
});

test('github: the verified primary address from /user/emails counts, not the public profile email', async () => {
  const email = uniqueEmail('primary');
  const who: StubAccount = {
    profile: { id: 424242, login: 'octo', name: 'Octo Cat', email: 'public@example.com' },
    emails: [{ email, primary: true, verified: true }],
  };
  const { userId } = successOf(await signIn('github', who));
  const user = await t.db('user').where({ id: userId }).first();
  assert.is(user.email, email);
  assert.is(user.firstName, 'Octo');
  assert.is(user.lastName, 'Cat');
  assert.is(await t.db('user').where({ email: 'public@example.com' }).first(), undefined);
});

test('github: without the emails endpoint an unknown account cannot sign up (the public email is not verified)', async () => {
  const users = await count('user');
  const res = await signIn('github', { profile: { id: 777001, login: 'noemails', email: uniqueEmail('public') } });
  assert.is(errorOf(res), 'email_not_verified');
  assert.is(await count('user'), users);
});

test('an inactive user → ?error=account_inactive, no tokens', async () => {
  const email = uniqueEmail('inactive');
  const existing = await registered(email, true);
  await t.db('user').where({ id: existing.id }).update({ isActive: false });
  assert.is(errorOf(await signIn('facebook', account('facebook', email))), 'account_inactive');
});

// --- the state ---------------------------------------------------------------------------------

/** The database and the provider's token endpoint are left alone by a refused callback. */
async function refused(res: { status: number; body: any }, expected: RegExp, before: { users: number; identities: number; tokens: number }) {
  assert.is(res.status, 400, JSON.stringify(res.body));
  assert.is(res.body.statusCode, 400);
  assert.is(res.body.error, 'Bad Request');
  assert.ok(Array.isArray(res.body.message));
  assert.match(res.body.message[0], expected);
  assert.is(await count('user'), before.users);
  assert.is(await count('user_identity'), before.identities);
  assert.is(stub.tokenRequests.length, before.tokens);
}

const snapshot = async () => ({ users: await count('user'), identities: await count('user_identity'), tokens: stub.tokenRequests.length });

test('a replayed callback (same state, same browser) → 400, nothing happens the second time', async () => {
  const { authorize, cookie } = await start('google');
  const back = await atProvider('google', authorize, account('google', uniqueEmail('replay')));
  successOf(await callback(back, cookie));
  const before = await snapshot();
  await refused(await callback(back, cookie), /state is invalid, expired or already used/, before);
});

test('a state whose callback already failed at the provider is spent too', async () => {
  const { state, cookie } = await start('google');
  const denied = await t.http.get(`/api/auth/google/callback?error=access_denied&state=${state}`).set('Cookie', cookie);
  assert.is(errorOf(denied), 'access_denied');
  const before = await snapshot();
  await refused(await t.http.get(`/api/auth/google/callback?code=abc&state=${state}`).set('Cookie', cookie), /already used/, before);
});

test('no state, a forged one, an expired one, another provider\'s → 400, no user', async () => {
  const { authorize, cookie, state } = await start('google');
  const back = await atProvider('google', authorize, account('google', uniqueEmail('state')));
  const code = back.searchParams.get('code')!;
  const before = await snapshot();
  const key = stateKey(TEST_ENV.JWT_SECRET);
  const nonce = (jwt.decode(state) as jwt.JwtPayload).jti!;
  const forged = jwt.sign({ typ: 'social-state', provider: 'google' }, 'not-the-server-secret-0123456789abcdef', { algorithm: 'HS256', jwtid: nonce, expiresIn: 600 });
  const expired = jwt.sign({ typ: 'social-state', provider: 'google', exp: Math.floor(Date.now() / 1000) - 5 }, key.key, { algorithm: 'HS256', jwtid: nonce });
  const unsigned = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from(JSON.stringify({ typ: 'social-state', provider: 'google', jti: nonce })).toString('base64url')}.`;
  const cb = (query: string) => t.http.get(`/api/auth/google/callback?${query}`).set('Cookie', cookie);
  await refused(await cb(`code=${code}`), /state should not be empty/, before);
  await refused(await cb(`code=${code}&state=`), /state should not be empty/, before);
  await refused(await cb(`code=${code}&state=${forged}`), /state is invalid/, before);
  await refused(await cb(`code=${code}&state=${expired}`), /state is invalid/, before);
  await refused(await cb(`code=${code}&state=${unsigned}`), /state is invalid/, before);
  await refused(await cb(`code=${code}&state=${state}&state=${state}`), /state must be given once/, before);
  // Google's state at GitHub's callback (with the cookie, had it gone there).
  await refused(await t.http.get(`/api/auth/github/callback?code=${code}&state=${state}`).set('Cookie', cookie), /state is invalid/, before);
  // All refused before being spent: the genuine callback still works.
  successOf(await callback(back, cookie));
});

test('a callback in another browser (no state cookie, or another sign-in\'s) → 400: a stolen callback URL signs no one in', async () => {
  const first = await start('microsoft');
  const second = await start('microsoft');
  const back = await atProvider('microsoft', first.authorize, account('microsoft', uniqueEmail('csrf')));
  const before = await snapshot();
  await refused(await t.http.get(back.pathname + back.search), /not issued to this browser/, before);
  await refused(await callback(back, second.cookie), /not issued to this browser/, before);
  successOf(await callback(back, first.cookie));
});

test('a valid state without code or error → 400', async () => {
  const { state, cookie } = await start('facebook');
  const before = await snapshot();
  await refused(await t.http.get(`/api/auth/facebook/callback?state=${state}`).set('Cookie', cookie), /code should not be empty/, before);
});

// --- failures at the provider ------------------------------------------------------------------

test('the user refuses at the provider → 302 to the client sign-in with the provider\'s error code', async () => {
  const before = await snapshot();
  const { state, cookie } = await start('github');
  const res = await t.http.get(`/api/auth/github/callback?error=access_denied&error_description=The+user+said+no&state=${state}`).set('Cookie', cookie);
  assert.is(errorOf(res), 'access_denied');
  // A code that is not one is not passed on to the client.
  const other = await start('github');
  const odd = await t.http.get(`/api/auth/github/callback?error=${encodeURIComponent('<script>')}&state=${other.state}`).set('Cookie', other.cookie);
  assert.is(errorOf(odd), 'provider_error');
  assert.is(await count('user'), before.users);
  assert.is(stub.tokenRequests.length, before.tokens);
});

test('the token endpoint refuses (bad client secret, bad code, server error, not JSON) → ?error=token_exchange_failed, no user', async () => {
  const answers = [
    { status: 401, body: { error: 'invalid_client' } },
    { status: 400, body: { error: 'invalid_grant' } },
    { status: 500, body: 'oops' },
    // GitHub answers errors with 200 and no access token.
    { status: 200, body: { error: 'bad_verification_code' } },
  ];
  try {
    for (const answer of answers) {
      stub.failToken(answer);
      const users = await count('user');
      assert.is(errorOf(await signIn('google', account('google', uniqueEmail('token')))), 'token_exchange_failed', JSON.stringify(answer));
      assert.is(await count('user'), users);
    }
  } finally {
    stub.failToken(undefined);
  }
});

test('a code the provider does not know (or already redeemed) → ?error=token_exchange_failed', async () => {
  const { state, cookie } = await start('microsoft');
  stub.signInAs('microsoft', account('microsoft', uniqueEmail('badcode')));
  assert.is(errorOf(await t.http.get(`/api/auth/microsoft/callback?code=not-a-code&state=${state}`).set('Cookie', cookie)), 'token_exchange_failed');
});

test('the profile endpoint fails → ?error=profile_unavailable, no user', async () => {
  stub.failProfile(503);
  try {
    for (const provider of PROVIDERS) {
      const users = await count('user');
      assert.is(errorOf(await signIn(provider, account(provider, uniqueEmail('profile')))), 'profile_unavailable', provider);
      assert.is(await count('user'), users);
    }
  } finally {
    stub.failProfile(undefined);
  }
});

test('a profile without an account id → ?error=profile_unavailable', async () => {
  assert.is(errorOf(await signIn('facebook', { profile: { name: 'No Id', email: uniqueEmail('noid') } })), 'profile_unavailable');
});

test('an unreachable token endpoint → ?error=token_exchange_failed, not a 500', async () => {
  const closed = await startOAuthProvider();
  const env = closed.env('google');
  await closed.close();
  const other = await createTestApp({ env: { CLIENT_BASE_URL: CLIENT, ...env } });
  try {
    const begin = await other.http.get('/api/auth/google');
    const state = new URL(begin.headers.location).searchParams.get('state');
    const res = await other.http.get(`/api/auth/google/callback?code=abc&state=${state}`).set('Cookie', cookieOf(begin));
    assert.is(res.status, 302, JSON.stringify(res.body));
    assert.ok(res.headers.location.endsWith('/#/sign-in?error=token_exchange_failed'), res.headers.location);
  } finally {
    await other.close();
  }
});

test('a provider without client id and secret → 404 on both routes', async () => {
  const bare = await createTestApp({ env: stub.env('github') });
  try {
    for (const provider of ['google', 'microsoft', 'facebook']) {
      for (const path of [`/api/auth/${provider}`, `/api/auth/${provider}/callback?code=a&state=b`]) {
        const res = await bare.http.get(path);
        assert.is(res.status, 404, path);
        assert.equal(res.body, { statusCode: 404, message: `Sign-in with ${provider} is not enabled`, error: 'Not Found' });
      }
    }
    assert.is((await bare.http.get('/api/auth/github')).status, 302);
  } finally {
    await bare.close();
  }
});

test.run();
