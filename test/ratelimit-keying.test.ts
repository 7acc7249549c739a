// Whose count a request goes to (CONTRACT §5): the user of a valid access token, else the client
// IP, the socket's address unless a trusted proxy forwarded the request. A client's own
// X-Forwarded-For never buys it a fresh count; IPv4-mapped IPv6 is the IPv4 caller; IPv6 callers
// share a count per /64; and the memory store forgets the oldest callers beyond its bound.
//
// The apps here run at RATE_LIMIT_SCALE=0.05 (anonymous 5, authenticated 50, POST 5 a minute): the
// numbers themselves are ratelimit.test.ts's. Distinct client addresses come from a trusted proxy
// on loopback (TRUST_PROXY=loopback) naming them in X-Forwarded-For.
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { login, newTenant, userWithRole, type Session } from './helpers/accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from './helpers/app.js';
import { assertCountedDown, assertLimitHeaders, assertStatuses, assertTooMany, sendMany, siblingApps, type LimitedApp } from './helpers/ratelimit.js';

let t: TestApp;
let owner: Session & { organizationId: string };
let first: Session;
let second: Session;

const apps = siblingApps(() => t, { env: { RATE_LIMIT_SCALE: '0.05' } });
const behindProxy = (env: Record<string, string> = {}) => apps.create({ env: { TRUST_PROXY: 'loopback', ...env } });

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
  first = await userWithRole(t, owner, 'EMPLOYEE');
  second = await userWithRole(t, owner, 'EMPLOYEE');
});
test.after.each(() => apps.closeAll());
test.after(async () => {
  await t.close();
});

const forwardedFor = (address: string) => ({ 'X-Forwarded-For': address });
/** An anonymous GET as `headers` say; answers 200 whoever asks. */
const anonymousGet = (app: LimitedApp, headers: Record<string, string> = {}) => app.http.get('/api/auth/authenticated').set(headers);

/** `count` anonymous GETs pass, counted down in one count of 5 (the anonymous tier). */
async function useUpAnonymous(app: LimitedApp, headers: (i: number) => Record<string, string>) {
  const answers = await sendMany(await app.url(), 5, (i) => ({ path: '/api/auth/authenticated', headers: headers(i) }), 1);
  assertStatuses(answers, 200);
  assertCountedDown(answers, 5);
}

/** A fresh count: the first request of its caller in the anonymous tier. */
async function assertFresh(app: LimitedApp, headers: Record<string, string>) {
  const res = await anonymousGet(app, headers);
  assert.is(res.status, 200);
  assertLimitHeaders(res, { anonymous: { q: 5, w: 60, r: 4 }, 'GET /api/*': { q: 50, w: 60, r: 49 } });
}

test('a valid access token is counted per user: two users from one IP have separate counts, apart from the IP\'s own', async () => {
  const app = apps.create();
  const post = (auth: Record<string, string> = {}) => app.http.post('/api/no-such-route').set(auth).send({});
  for (let i = 0; i < 5; i++) {
    const res = await post(first.auth);
    assert.is(res.status, 404);
    assertLimitHeaders(res, { authenticated: { q: 50, w: 60, r: 49 - i }, 'POST /api/*': { q: 5, w: 60, r: 4 - i } });
  }
  assertTooMany(await post(first.auth), 'POST /api/*', 60);

  const other = await post(second.auth);
  assert.is(other.status, 404);
  assertLimitHeaders(other, { authenticated: { q: 50, w: 60, r: 49 }, 'POST /api/*': { q: 5, w: 60, r: 4 } });

  const anonymous = await post();
  assert.is(anonymous.status, 401);
  assertLimitHeaders(anonymous, { anonymous: { q: 5, w: 60, r: 4 }, 'POST /api/*': { q: 5, w: 60, r: 4 } });
});

test('a user\'s count follows the user, not the address or the token: another IP or a new sign-in is still refused', async () => {
  const app = behindProxy();
  const post = (auth: Record<string, string>, address: string) => app.http.post('/api/no-such-route').set({ ...auth, ...forwardedFor(address) }).send({});
  for (let i = 0; i < 5; i++) assert.is((await post(first.auth, '203.0.113.1')).status, 404);
  assertTooMany(await post(first.auth, '203.0.113.1'), 'POST /api/*', 60);
  assertTooMany(await post(first.auth, '198.51.100.77'), 'POST /api/*', 60);
  const again = await login(t, first.email);
  assert.is.not(again.token, first.token);
  assertTooMany(await post(again.auth, '198.51.100.78'), 'POST /api/*', 60);
  // The address itself, without the token, has its own anonymous count.
  assert.is((await anonymousGet(app, forwardedFor('203.0.113.1'))).headers['x-ratelimit-remaining'], '4');
});

test('an invalid, expired, forged or refresh token counts in the IP\'s anonymous count', async () => {
  const app = apps.create();
  const claims = jwt.decode(first.token) as jwt.JwtPayload;
  const { exp: _exp, iat: _iat, ...lasting } = claims;
  const refresh = await t.http.post('/api/auth/login').send({ email: first.email, password: 'Str0ng!Passw0rd' });
  const badTokens = [
    'not-a-jwt',
    jwt.sign(lasting, 'another-secret-of-a-decent-length-0123456789', { algorithm: 'HS256', expiresIn: 600 }),
    jwt.sign({ ...lasting, exp: Math.floor(Date.now() / 1000) - 60 }, TEST_ENV.JWT_SECRET, { algorithm: 'HS256' }),
    jwt.sign({ ...lasting, role: 'EMPEROR' }, TEST_ENV.JWT_SECRET, { algorithm: 'HS256', expiresIn: 600 }),
    refresh.body.refresh_token as string,
  ];
  for (const [i, token] of badTokens.entries()) {
    const res = await app.http.get('/api/auth/check').set('Authorization', `Bearer ${token}`);
    assert.is(res.status, 401);
    assertLimitHeaders(res, { anonymous: { q: 5, w: 60, r: 4 - i }, 'GET /api/*': { q: 50, w: 60, r: 49 - i } });
  }
  assertTooMany(await anonymousGet(app), 'anonymous', 60);
  assertTooMany(await app.http.get('/api/auth/check').set('Authorization', `Bearer ${badTokens[1]}`), 'anonymous', 60);
  // The valid token of the same user, from the same IP: its own count.
  const valid = await app.http.get('/api/auth/check').set(first.auth);
  assert.is(valid.status, 200);
  assertLimitHeaders(valid, { authenticated: { q: 50, w: 60, r: 49 }, 'GET /api/*': { q: 50, w: 60, r: 49 } });
});

test('without TRUST_PROXY a spoofed X-Forwarded-For (or X-Real-IP, Forwarded) buys no fresh count', async () => {
  const spoof = (i: number) => ({ 'X-Forwarded-For': `203.0.113.${i + 10}`, 'X-Real-IP': `198.51.100.${i + 10}`, Forwarded: `for=192.0.2.${i + 10}` });
  const app = apps.create();
  await useUpAnonymous(app, spoof);
  assertTooMany(await anonymousGet(app, spoof(99)), 'anonymous', 60);
  assertTooMany(await anonymousGet(app, forwardedFor('203.0.113.250, 198.51.100.250')), 'anonymous', 60);

  // Trusting other proxies does not make the socket's loopback one of them.
  const elsewhere = apps.create({ env: { TRUST_PROXY: '10.0.0.0/8, 192.168.1.1' } });
  await useUpAnonymous(elsewhere, spoof);
  assertTooMany(await anonymousGet(elsewhere, spoof(99)), 'anonymous', 60);
});

test('behind a trusted proxy the forwarded address is the caller; in a chain only the nearest untrusted hop counts', async () => {
  const app = behindProxy();
  await useUpAnonymous(app, () => forwardedFor('203.0.113.7'));
  assertTooMany(await anonymousGet(app, forwardedFor('203.0.113.7')), 'anonymous', 60);
  // A client that prepends an address of its own is still counted as the address the proxy saw.
  assertTooMany(await anonymousGet(app, forwardedFor('198.51.100.1, 203.0.113.7')), 'anonymous', 60);
  assertTooMany(await anonymousGet(app, forwardedFor('10.9.9.9,203.0.113.7')), 'anonymous', 60);

  await assertFresh(app, forwardedFor('203.0.113.8'));
  await assertFresh(app, {}); // the proxy's own requests: its socket address
  // The proxy saw 198.51.100.2, whatever the client claimed before it; that is whose count moves.
  await assertFresh(app, forwardedFor('203.0.113.7, 198.51.100.2'));
  assert.is((await anonymousGet(app, forwardedFor('198.51.100.2'))).headers['x-ratelimit-remaining'], '3');

  // Two trusted hops: the address before them is the caller.
  const twoHops = behindProxy({ TRUST_PROXY: 'loopback, 10.0.0.0/8' });
  await useUpAnonymous(twoHops, (i) => forwardedFor(`192.0.2.${i}, 203.0.113.7, 10.1.2.3`));
  assertTooMany(await anonymousGet(twoHops, forwardedFor('203.0.113.7')), 'anonymous', 60);
  await assertFresh(twoHops, forwardedFor('203.0.113.9, 10.1.2.3'));
});

test('an IPv4-mapped IPv6 address is the IPv4 caller', async () => {
  const app = behindProxy();
  await useUpAnonymous(app, (i) => forwardedFor(['::ffff:203.0.113.9', '203.0.113.9', '::FFFF:203.0.113.9'][i % 3]));
  assertTooMany(await anonymousGet(app, forwardedFor('203.0.113.9')), 'anonymous', 60);
  assertTooMany(await anonymousGet(app, forwardedFor('::ffff:cb00:7109')), 'anonymous', 60); // the same, in hex
  await assertFresh(app, forwardedFor('::ffff:203.0.113.10'));
});

test('IPv6 callers in one /64 share a count; another /64 has its own', async () => {
  const app = behindProxy();
  const sameNetwork = ['2001:db8:aa:1::1', '2001:db8:aa:1:ffff:ffff:ffff:fffe', '2001:0DB8:00AA:0001::5', '2001:db8:aa:1:1234::', '2001:db8:aa:1::1'];
  await useUpAnonymous(app, (i) => forwardedFor(sameNetwork[i]));
  assertTooMany(await anonymousGet(app, forwardedFor('2001:db8:aa:1:abcd::42')), 'anonymous', 60);
  await assertFresh(app, forwardedFor('2001:db8:aa:2::1'));
  await assertFresh(app, forwardedFor('2001:db8:ab:1::1'));
});

/** 1000 callers, one anonymous GET each: 2000 counts (tier and GET limit). */
const flood = async (app: LimitedApp) =>
  assertStatuses(await sendMany(await app.url(), 1000, (i) => ({ path: '/api/auth/authenticated', headers: forwardedFor(`10.${i >> 8}.${i & 255}.1`) })), 200);

test('bounded memory: with RATE_LIMIT_MAX_KEYS=1000, more callers than that push out the oldest caller\'s count', async () => {
  const oldest = forwardedFor('198.51.100.200');
  const latest = forwardedFor(`10.${999 >> 8}.${999 & 255}.1`);

  const bounded = behindProxy({ RATE_LIMIT_MAX_KEYS: '1000' });
  await useUpAnonymous(bounded, () => oldest);
  assertTooMany(await anonymousGet(bounded, oldest), 'anonymous', 60);
  await flood(bounded);
  // Full, it drops the oldest 1 % at once (10 keys) to make room, so it holds between 990 and 1000.
  assert.ok(bounded.storedKeys() > 990 && bounded.storedKeys() <= 1000, `${bounded.storedKeys()} counts kept`);
  await assertFresh(bounded, oldest); // its count was dropped: it starts again
  assert.is((await anonymousGet(bounded, latest)).headers['x-ratelimit-remaining'], '3', 'the latest callers keep theirs');

  // The control: the same flood under the default bound leaves the oldest caller refused.
  const roomy = behindProxy();
  await useUpAnonymous(roomy, () => oldest);
  await flood(roomy);
  assert.is(roomy.storedKeys(), 2 + 2000);
  assertTooMany(await anonymousGet(roomy, oldest), 'anonymous', 60);
});

test.run();
