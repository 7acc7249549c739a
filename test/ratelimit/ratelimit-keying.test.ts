// Whose count a request goes to: the user of a valid access token whose session is
// live, else the client IP, the socket's address unless a trusted proxy forwarded the request.
// Sign-in and password reset count per address whatever the token. A client's own X-Forwarded-For
// never buys it a fresh count; a forwarded port is ignored and an unreadable address is one
// caller; IPv4-mapped IPv6 is the IPv4 caller; IPv6 callers share a count per /64; and the memory
// store sweeps ended windows, forgets the oldest callers beyond its bound and says so once.
//
// The apps here run at RATE_LIMIT_SCALE=0.05 (anonymous 5, authenticated 50, POST 5 a minute), but
// for sign-in and password reset, at limits.yaml's own numbers: the numbers themselves are
// ratelimit.test.ts's. Distinct client addresses come from a trusted proxy on loopback
// (TRUST_PROXY=loopback) naming them in X-Forwarded-For.
import jwt from 'jsonwebtoken';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { LogLevel } from '../../engine/log/log.js';
import type { ExpiringCounts } from '../../engine/ratelimit/expiring-counts.js';
import { login, newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import {
  assertCountedDown,
  assertLimitHeaders,
  assertStatuses,
  assertTooMany,
  policiesOf,
  sendMany,
  siblingApps,
  sleep,
  type LimitedApp,
  type SiblingOptions,
} from '../helpers/ratelimit.js';

let t: TestApp;
let owner: Session & { organizationId: string };
let first: Session;
let second: Session;

const apps = siblingApps(() => t, { env: { RATE_LIMIT_SCALE: '0.05' } });
const behindProxy = (env: Record<string, string> = {}, options: SiblingOptions = {}) => apps.create({ ...options, env: { TRUST_PROXY: 'loopback', ...env } });

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

test('sign-in is counted per address whatever the token: several users from one address share its count of 5, their tiers stay their own', async () => {
  const app = behindProxy({ RATE_LIMIT_SCALE: '1' }); // limits.yaml unscaled: sign-in 5, tiers 100 / 1000 / 5000, POST 100
  const here = forwardedFor('203.0.113.20');
  const attempt = (auth: Record<string, string>, password = 'Wrong!Passw0rd', from = here) =>
    app.http.post('/api/auth/login').set({ ...auth, ...from }).send({ email: first.email, password });

  // Five attempts, each with another token (or none): one count of 5 goes down; each caller's tier
  // and POST limit are the caller's own.
  const rounds: Array<[Record<string, string>, Record<string, { q: number; w: number; r: number }>]> = [
    [first.auth, { authenticated: { q: 1000, w: 60, r: 999 }, 'POST /api/*': { q: 100, w: 60, r: 99 } }],
    [second.auth, { authenticated: { q: 1000, w: 60, r: 999 }, 'POST /api/*': { q: 100, w: 60, r: 99 } }],
    [{}, { anonymous: { q: 100, w: 60, r: 99 }, 'POST /api/*': { q: 100, w: 60, r: 99 } }],
    [owner.auth, { admin: { q: 5000, w: 60, r: 4999 }, 'POST /api/*': { q: 100, w: 60, r: 99 } }],
    [first.auth, { authenticated: { q: 1000, w: 60, r: 998 }, 'POST /api/*': { q: 100, w: 60, r: 98 } }],
  ];
  for (const [i, [auth, own]] of rounds.entries()) {
    const res = await attempt(auth);
    assert.is(res.status, 401, `attempt ${i + 1}`);
    assertLimitHeaders(res, { ...own, 'POST /api/auth/login': { q: 5, w: 60, r: 4 - i } });
  }

  // The sixth is refused whoever's token it carries, the right password included; no session opens.
  const sessions = await t.db('user_session').where({ userId: first.userId }).count({ n: '*' });
  const third = await userWithRole(t, owner, 'EMPLOYEE'); // a token this address has not shown yet
  for (const auth of [second.auth, {}, owner.auth, third.auth, first.auth]) assertTooMany(await attempt(auth, PASSWORD), 'POST /api/auth/login', 60);
  assert.equal(await t.db('user_session').where({ userId: first.userId }).count({ n: '*' }), sessions);

  // Another address has a count of its own; the user's tier count followed the user there.
  const elsewhere = await attempt(first.auth, 'Wrong!Passw0rd', forwardedFor('198.51.100.20'));
  assert.is(elsewhere.status, 401);
  assertLimitHeaders(elsewhere, { authenticated: { q: 1000, w: 60, r: 996 }, 'POST /api/*': { q: 100, w: 60, r: 96 }, 'POST /api/auth/login': { q: 5, w: 60, r: 4 } });
});

test('password reset (and its alias request-password) is counted per address whatever the token: 3 per 5 minutes', async () => {
  const app = behindProxy({ RATE_LIMIT_SCALE: '1' });
  const ask = (routePath: string, auth: Record<string, string>, from = forwardedFor('203.0.113.21')) =>
    app.http.post(routePath).set({ ...auth, ...from }).send({ email: uniqueEmail('nobody') });
  for (const [i, [routePath, auth]] of ([['/api/auth/reset-password', first.auth], ['/api/auth/request-password', second.auth], ['/api/auth/reset-password', {}]] as const).entries()) {
    const res = await ask(routePath, auth);
    assert.is(res.status, 200, `${routePath}: ${JSON.stringify(res.body)}`);
    assert.equal(policiesOf(res).get('POST /api/auth/reset-password'), { q: 3, w: 300 });
    assert.is(res.headers['x-ratelimit-remaining'], String(2 - i));
  }
  for (const auth of [owner.auth, first.auth, {}]) assertTooMany(await ask('/api/auth/request-password', auth), 'POST /api/auth/reset-password', 300);
  const elsewhere = await ask('/api/auth/reset-password', first.auth, forwardedFor('198.51.100.21'));
  assert.is(elsewhere.status, 200);
  assert.is(elsewhere.headers['x-ratelimit-remaining'], '2');
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

/** Ends a session in the database, as any other instance of the service would (no cache of this process told). */
const revokeInDatabase = (token: string) =>
  t.db('user_session').where({ id: (jwt.decode(token) as jwt.JwtPayload).sid }).update({ revokedAt: t.db.fn.now() });

test('a revoked session\'s token counts in its address\'s anonymous count, never in its user\'s', async () => {
  // Every request asks the database whether its session is live (no answers kept for 5 s).
  const app = apps.create({ env: { SESSION_CHECK_TTL_MS: '0' } });
  const user = await userWithRole(t, owner, 'EMPLOYEE');
  const stolen = await login(t, user.email);
  // The user changes the password from its own session: every other session ends.
  const changed = await t.http.post('/api/auth/change-password').set(user.auth).send({ currentPassword: PASSWORD, newPassword: 'N3w!Secret-pass', confirmPassword: 'N3w!Secret-pass' });
  assert.is(changed.status, 200, JSON.stringify(changed.body));

  for (let i = 0; i < 5; i++) {
    const res = await app.http.get('/api/auth/check').set(stolen.auth);
    assert.is(res.status, 401);
    assertLimitHeaders(res, { anonymous: { q: 5, w: 60, r: 4 - i }, 'GET /api/*': { q: 50, w: 60, r: 49 - i } });
  }
  assertTooMany(await app.http.get('/api/auth/check').set(stolen.auth), 'anonymous', 60);
  assertTooMany(await anonymousGet(app), 'anonymous', 60); // the address's count, with or without that token

  // The user, still signed in, was not held back by them: its own count, untouched.
  const own = await app.http.get('/api/auth/check').set(user.auth);
  assert.is(own.status, 200);
  assertLimitHeaders(own, { authenticated: { q: 50, w: 60, r: 49 }, 'GET /api/*': { q: 50, w: 60, r: 49 } });

  // A session ended directly in the database (by another instance, say): the same.
  const other = apps.create({ env: { SESSION_CHECK_TTL_MS: '0' } });
  const kept = await login(t, second.email);
  const ended = await login(t, second.email);
  assert.is(await revokeInDatabase(ended.token), 1);
  const revoked = await other.http.post('/api/no-such-route').set(ended.auth).send({});
  assert.is(revoked.status, 401);
  assertLimitHeaders(revoked, { anonymous: { q: 5, w: 60, r: 4 }, 'POST /api/*': { q: 5, w: 60, r: 4 } });
  const live = await other.http.post('/api/no-such-route').set(kept.auth).send({});
  assert.is(live.status, 404);
  assertLimitHeaders(live, { authenticated: { q: 50, w: 60, r: 49 }, 'POST /api/*': { q: 5, w: 60, r: 4 } });
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

test('a forwarded address with a port is the address without it: one count for 203.0.113.5, :1234 and :999', async () => {
  const app = behindProxy();
  const v4 = ['203.0.113.5:1234', '203.0.113.5:999', '203.0.113.5', '[::ffff:203.0.113.5]:80', '203.0.113.5:1'];
  await useUpAnonymous(app, (i) => forwardedFor(v4[i]));
  assertTooMany(await anonymousGet(app, forwardedFor('203.0.113.5')), 'anonymous', 60);
  assertTooMany(await anonymousGet(app, forwardedFor('203.0.113.5:4321')), 'anonymous', 60);

  const v6 = ['[2001:db8::1]:443', '2001:db8::1', '[2001:db8::1]', '[2001:db8::1]:8080', '2001:DB8::1'];
  await useUpAnonymous(app, (i) => forwardedFor(v6[i]));
  assertTooMany(await anonymousGet(app, forwardedFor('2001:db8::1')), 'anonymous', 60);
  assertTooMany(await anonymousGet(app, forwardedFor('[2001:db8::1]:1')), 'anonymous', 60);
  await assertFresh(app, forwardedFor('203.0.113.6:1234'));
});

test('forwarded addresses that cannot be read are one caller: each new string buys no fresh count', async () => {
  const app = behindProxy();
  const garbage = ['not-an-ip', 'x'.repeat(500), 'unknown', '203.0.113.5:port', '999.1.1.1'];
  await useUpAnonymous(app, (i) => forwardedFor(garbage[i]));
  for (const other of ['another-one', 'y'.repeat(500), '_hidden', '[not-an-ip]:80']) assertTooMany(await anonymousGet(app, forwardedFor(other)), 'anonymous', 60);
  // Readable addresses keep their own counts.
  await assertFresh(app, forwardedFor('203.0.113.30'));
});

test('ended windows are swept from the memory store (RATE_LIMIT_WINDOW_SCALE=0.02: 1.2 s windows)', async () => {
  const app = behindProxy({ RATE_LIMIT_WINDOW_SCALE: '0.02' });
  const store = app.rateLimiting.store!.db as ExpiringCounts;
  const answers = [];
  for (const address of ['203.0.113.40', '203.0.113.41', '203.0.113.42']) {
    const res = await anonymousGet(app, forwardedFor(address));
    assert.is(res.status, 200);
    answers.push(res);
  }
  // Each caller has a count in the anonymous tier and one in the GET limit; none has ended yet.
  assert.is(app.storedKeys(), 6);
  store.sweep();
  assert.is(app.storedKeys(), 6, 'a sweep keeps the counts of windows still running');

  const lastReset = Math.max(...answers.map((res) => Number(res.headers['x-ratelimit-reset'])));
  await sleep(lastReset * 1000 - Date.now() + 200);
  store.sweep();
  assert.is(app.storedKeys(), 0);
  // The caller starts again: a new count of 5 in a new window.
  const again = await anonymousGet(app, forwardedFor('203.0.113.40'));
  assert.is(again.status, 200);
  assertLimitHeaders(again, { anonymous: { q: 5, w: 2, r: 4 }, 'GET /api/*': { q: 50, w: 2, r: 49 } });
  assert.is(app.storedKeys(), 2);
});

/** 1000 callers, one anonymous GET each: 2000 counts (tier and GET limit). */
const flood = async (app: LimitedApp) =>
  assertStatuses(await sendMany(await app.url(), 1000, (i) => ({ path: '/api/auth/authenticated', headers: forwardedFor(`10.${i >> 8}.${i & 255}.1`) })), 200);

test('bounded memory: with RATE_LIMIT_MAX_KEYS=1000, more callers than that push out the oldest caller\'s count', async () => {
  const oldest = forwardedFor('198.51.100.200');
  const latest = forwardedFor(`10.${999 >> 8}.${999 & 255}.1`);

  const lines: Array<{ level: LogLevel; msg: string }> = [];
  const log = (level: LogLevel, msg: string) => void lines.push({ level, msg });
  const said = (level: LogLevel) => lines.filter((l) => l.level === level);

  const bounded = behindProxy({ RATE_LIMIT_MAX_KEYS: '1000' }, { appOptions: { log } });
  await useUpAnonymous(bounded, () => oldest);
  assertTooMany(await anonymousGet(bounded, oldest), 'anonymous', 60);
  assert.equal(lines, []);
  await flood(bounded);
  // Full, it drops the oldest 1 % at once (10 keys) to make room, so it holds between 990 and 1000.
  assert.ok(bounded.storedKeys() > 990 && bounded.storedKeys() <= 1000, `${bounded.storedKeys()} counts kept`);
  await assertFresh(bounded, oldest); // its count was dropped: it starts again
  assert.is((await anonymousGet(bounded, latest)).headers['x-ratelimit-remaining'], '3', 'the latest callers keep theirs');
  // A hundred-odd evictions, one warning.
  assert.is(said('warn').length, 1, JSON.stringify(lines));
  assert.match(said('warn')[0].msg, /RATE_LIMIT_MAX_KEYS/);
  assert.equal(said('info'), []);

  // A sweep that frees nothing (every window still runs) says nothing; one that frees room says so once.
  const store = bounded.rateLimiting.store!.db as ExpiringCounts;
  store.sweep();
  assert.ok(bounded.storedKeys() > 990, `${bounded.storedKeys()} counts kept`);
  assert.equal(said('info'), []);
  store.sweep(Date.now() / 1000 + 61); // as it will a minute from now, once the windows have ended
  assert.is(bounded.storedKeys(), 0);
  assert.is(said('info').length, 1, JSON.stringify(lines));
  assert.match(said('info')[0].msg, /room again/);
  store.sweep(Date.now() / 1000 + 61);
  assert.is(said('info').length, 1, 'room regained is told once');
  // Full again later: a new episode, one more warning.
  await flood(bounded);
  assert.is(said('warn').length, 2, JSON.stringify(lines));
  assert.is(lines.length, 3, JSON.stringify(lines));

  // The control: the same flood under the default bound leaves the oldest caller refused.
  const roomy = behindProxy();
  await useUpAnonymous(roomy, () => oldest);
  await flood(roomy);
  assert.is(roomy.storedKeys(), 2 + 2000);
  assertTooMany(await anonymousGet(roomy, oldest), 'anonymous', 60);
});

test.run();
