// Rate limits through real requests, with limits.yaml's own numbers: each kind of limit
// (caller tier, method, endpoint) refuses the request after its last allowed one, every counted
// answer carries the headers of the limits it met, a 429 is the JSON envelope with Retry-After and
// never reaches the handler, the health check is exempt, a window that ends lets the caller in
// again, and RATE_LIMITS=off switches it all off.
//
// Accounts are made through the test app with limits off; each test counts on a fresh sibling app
// with limits on over the same database (test/helpers/ratelimit.ts). The runs of a thousand
// requests go over keep-alive connections to a listening server.
import { randomUUID } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, PASSWORD, uniqueEmail, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import {
  assertCountedDown,
  assertLimitHeaders,
  assertNoLimitHeaders,
  assertStatuses,
  assertTooMany,
  countsOf,
  policiesOf,
  sendMany,
  siblingApps,
  sleep,
} from '../helpers/ratelimit.js';

let t: TestApp;
let owner: Session & { organizationId: string }; // SUPER_ADMIN: the admin tier
let admin: Session; // ADMIN: the admin tier too
let employee: Session; // EMPLOYEE: the authenticated tier

const apps = siblingApps(() => t);

test.before(async () => {
  t = await createTestApp();
  owner = await newTenant(t);
  admin = await userWithRole(t, owner, 'ADMIN');
  employee = await userWithRole(t, owner, 'EMPLOYEE');
});
test.after.each(() => apps.closeAll());
test.after(async () => {
  await t.close();
});

const count = async (table: string, where: Record<string, unknown> = {}) => Number((await t.db(table).where(where).count({ n: '*' }))[0].n);
const loginBody = (password = 'Wrong!Passw0rd') => ({ email: employee.email, password });

test('every counted answer, 200, 401 or 404, names the limits it met; the X-RateLimit trio is the tightest', async () => {
  const app = apps.create();

  const ok = await app.http.get('/api/auth/check').set(employee.auth);
  assert.is(ok.status, 200);
  assertLimitHeaders(ok, { authenticated: { q: 1000, w: 60, r: 999 }, 'GET /api/*': { q: 1000, w: 60, r: 999 } });
  assert.is(ok.headers['x-ratelimit-limit'], '1000');
  // The first request of a window: it ends a whole minute from now, in whole Unix seconds.
  const now = Date.now() / 1000;
  assert.ok(Math.abs(Number(ok.headers['x-ratelimit-reset']) - (now + 60)) <= 1.5, `X-RateLimit-Reset ${ok.headers['x-ratelimit-reset']} is not now + 60 (${now})`);

  const missing = await app.http.get('/api/no-such-route').set(employee.auth);
  assert.is(missing.status, 404);
  assertLimitHeaders(missing, { authenticated: { q: 1000, w: 60, r: 998 }, 'GET /api/*': { q: 1000, w: 60, r: 998 } });

  // HEAD is counted as the GET it mirrors.
  const head = await app.http.head('/api/auth/check').set(employee.auth);
  assert.is(head.status, 200);
  assertLimitHeaders(head, { authenticated: { q: 1000, w: 60, r: 997 }, 'GET /api/*': { q: 1000, w: 60, r: 997 } });

  // Without a token: the client IP's own counts, in the anonymous tier.
  const refused = await app.http.get('/api/tags');
  assert.is(refused.status, 401);
  assertLimitHeaders(refused, { anonymous: { q: 100, w: 60, r: 99 }, 'GET /api/*': { q: 1000, w: 60, r: 999 } });
  assert.is(refused.headers['x-ratelimit-limit'], '100');

  // Tier, method and endpoint at once; the endpoint's 5 is the tightest.
  const login = await app.http.post('/api/auth/login').send(loginBody());
  assert.is(login.status, 401);
  assertLimitHeaders(login, {
    anonymous: { q: 100, w: 60, r: 98 },
    'POST /api/*': { q: 100, w: 60, r: 99 },
    'POST /api/auth/login': { q: 5, w: 60, r: 4 },
  });
  assert.is(login.headers['x-ratelimit-limit'], '5');
  assert.is(login.headers['x-ratelimit-remaining'], '4');

  // ADMIN is in the admin tier; the GET limit is then the tightest.
  const adminCheck = await app.http.get('/api/auth/check').set(admin.auth);
  assert.is(adminCheck.status, 200);
  assertLimitHeaders(adminCheck, { admin: { q: 5000, w: 60, r: 4999 }, 'GET /api/*': { q: 1000, w: 60, r: 999 } });
  assert.is(adminCheck.headers['x-ratelimit-limit'], '1000');
});

test('tier: an anonymous caller gets 100 requests a minute, then 429 even on a GET (the GET limit is 1000)', async () => {
  const app = apps.create();
  const answers = await sendMany(await app.url(), 100, { path: '/api/auth/authenticated' });
  assertStatuses(answers, 200);
  assertCountedDown(answers, 100);

  const res = await app.http.get('/api/auth/authenticated');
  assertTooMany(res, 'anonymous', 60);
  assert.is(countsOf(res).get('GET /api/*')?.r, 1000 - 101, 'the GET limit is far from used up');
  assertTooMany(await app.http.post('/api/auth/login').send(loginBody(PASSWORD)), 'anonymous', 60);
});

test('tier: an authenticated caller gets 1000 GETs, then a POST is refused by the tier though the POST limit is untouched', async () => {
  const app = apps.create();
  const answers = await sendMany(await app.url(), 1000, { path: '/api/auth/check', headers: employee.auth });
  assertStatuses(answers, 200);
  assertCountedDown(answers, 1000);

  const tags = await count('tag');
  const res = await app.http.post('/api/tags').set(employee.auth).send({ name: 'over the tier', color: 'red' });
  assertTooMany(res, 'authenticated', 60);
  assert.equal(policiesOf(res).get('POST /api/*'), { q: 100, w: 60 });
  assert.is(countsOf(res).get('POST /api/*')?.r, 99, 'this POST is the first the POST limit saw');
  assert.is(await count('tag'), tags);
});

test('method: an admin gets 1000 GETs a minute, then a GET is refused by the GET limit while a POST passes (admin tier 5000)', async () => {
  const app = apps.create();
  const answers = await sendMany(await app.url(), 1000, { path: '/api/auth/check', headers: owner.auth });
  assertStatuses(answers, 200);
  assertCountedDown(answers, 1000);

  const res = await app.http.get('/api/auth/check').set(owner.auth);
  assertTooMany(res, 'GET /api/*', 60);
  assert.is(countsOf(res).get('admin')?.r, 5000 - 1001);

  const created = await app.http.post('/api/tags').set(owner.auth).send({ name: 'after the GET limit', color: 'red' });
  assert.is(created.status, 201);
  assertLimitHeaders(created, { admin: { q: 5000, w: 60, r: 5000 - 1002 }, 'POST /api/*': { q: 100, w: 60, r: 99 } });
  assert.ok(await t.db('tag').where({ id: created.body.id }).first());
});

test('method: 50 DELETEs a minute', async () => {
  const app = apps.create();
  const answers = await sendMany(await app.url(), 50, () => ({ method: 'DELETE', path: `/api/tags/${randomUUID()}`, headers: owner.auth }));
  assertStatuses(answers, 404);
  assertCountedDown(answers, 50);
  assertTooMany(await app.http.delete(`/api/tags/${randomUUID()}`).set(owner.auth), 'DELETE /api/*', 60);
  // Other methods are not held back by it.
  assert.is((await app.http.get(`/api/tags/${randomUUID()}`).set(owner.auth)).status, 404);
});

test('method: PUT and PATCH share one count of 100 a minute', async () => {
  const app = apps.create();
  const answers = await sendMany(await app.url(), 100, (i) => ({
    method: i % 2 ? 'PATCH' : 'PUT',
    path: `/api/tags/${randomUUID()}`,
    headers: owner.auth,
    body: { name: 'renamed', color: 'blue' },
  }));
  assertStatuses(answers, 404);
  assertCountedDown(answers, 100);

  const patch = await app.http.patch(`/api/tags/${randomUUID()}`).set(owner.auth).send({ color: 'green' });
  assertTooMany(patch, 'PUT /api/*', 60);
  assert.equal(policiesOf(patch).get('PUT /api/*'), { q: 100, w: 60 });
  assertTooMany(await app.http.put(`/api/tags/${randomUUID()}`).set(owner.auth).send({ name: 'x', color: 'green' }), 'PUT /api/*', 60);
});

test('endpoint: 5 sign-in attempts a minute, a trailing slash included; the 6th is refused even with the right password and opens no session', async () => {
  const app = apps.create();
  for (const [i, path] of ['/api/auth/login', '/api/auth/login', '/api/auth/login', '/api/auth/login/', '/api/auth/login/'].entries()) {
    const res = await app.http.post(path).send(loginBody());
    assert.is(res.status, 401, `${path} reaches the sign-in`);
    assert.is(res.headers['x-ratelimit-limit'], '5');
    assert.is(res.headers['x-ratelimit-remaining'], String(4 - i));
  }
  const sessions = await count('user_session', { userId: employee.userId });
  assertTooMany(await app.http.post('/api/auth/login').send(loginBody(PASSWORD)), 'POST /api/auth/login', 60);
  assertTooMany(await app.http.post('/api/auth/login/').send(loginBody(PASSWORD)), 'POST /api/auth/login', 60);
  // No other spelling reaches the sign-in around its count, with or without a token.
  for (const path of ['/api/auth/login//', '/api//auth/login', '/api/auth/%6Cogin', '/api/auth/./login', '/api/auth/LOGIN', '/api/auth/login;x']) {
    for (const auth of [{}, owner.auth]) {
      const res = await app.http.post(path).set(auth).send(loginBody(PASSWORD));
      assert.is(res.status, Object.keys(auth).length ? 404 : 401, `${path} is not the sign-in`);
    }
  }
  assert.is(await count('user_session', { userId: employee.userId }), sessions);
});

test('endpoint: 3 registrations per 5 minutes; the 4th is refused and creates no user', async () => {
  const app = apps.create();
  const register = (email: string) => app.http.post('/api/auth/register').send({ user: { firstName: 'Rita', lastName: 'Limit', email }, password: PASSWORD, confirmPassword: PASSWORD });
  for (let i = 0; i < 3; i++) {
    const res = await register(uniqueEmail('limited'));
    assert.is(res.status, 201);
    assertLimitHeaders(res, {
      anonymous: { q: 100, w: 60, r: 99 - i },
      'POST /api/*': { q: 100, w: 60, r: 99 - i },
      'POST /api/auth/register': { q: 3, w: 300, r: 2 - i },
    });
  }
  const email = uniqueEmail('refused');
  assertTooMany(await register(email), 'POST /api/auth/register', 300);
  assert.is(await count('user', { email }), 0);
});

test('endpoint: reset-password and its alias request-password share 3 per 5 minutes', async () => {
  const app = apps.create();
  const ask = (path: string) => app.http.post(path).send({ email: uniqueEmail('nobody') });
  for (const [i, path] of ['/api/auth/reset-password', '/api/auth/request-password', '/api/auth/reset-password'].entries()) {
    const res = await ask(path);
    assert.is(res.status, 200);
    assert.equal(policiesOf(res).get('POST /api/auth/reset-password'), { q: 3, w: 300 });
    assert.is(res.headers['x-ratelimit-remaining'], String(2 - i));
  }
  assertTooMany(await ask('/api/auth/request-password'), 'POST /api/auth/reset-password', 300);
  assertTooMany(await ask('/api/auth/reset-password'), 'POST /api/auth/reset-password', 300);
});

test('endpoint: 10 uploads a minute over both spellings, in force before any route serves them', async () => {
  const app = apps.create();
  const answers = await sendMany(await app.url(), 10, (i) => ({
    method: 'POST',
    path: i % 2 ? '/api/image-assets/upload' : '/api/image-asset/upload',
    headers: owner.auth,
    body: {},
  }));
  // The upload route answers a JSON body itself: not multipart, a 415 (and still counted).
  for (const [i, answer] of answers.entries()) assert.is(answer.status, 415, `request #${i} answered ${answer.status}`);
  assertCountedDown(answers, 10);
  assertTooMany(await app.http.post('/api/image-asset/upload').set(owner.auth).send({}), 'POST /api/image-asset/upload', 60);
  assertTooMany(await app.http.post('/api/image-assets/upload/').set(owner.auth).send({}), 'POST /api/image-asset/upload', 60);
});

test('endpoint: 5 exports per 5 minutes under /api/export, the path itself included', async () => {
  const app = apps.create();
  // The zip (with and without the trailing slash), an unknown resource, a path below no route: each counted.
  const statuses = [200, 404, 200, 404, 200];
  for (const [i, path] of ['/api/export', '/api/export/x', '/api/export/', '/api/export/a/b', '/api/export'].entries()) {
    const res = await app.http.get(path).set(owner.auth);
    assert.is(res.status, statuses[i], path);
    assertLimitHeaders(res, {
      admin: { q: 5000, w: 60, r: 4999 - i },
      'GET /api/*': { q: 1000, w: 60, r: 999 - i },
      'GET /api/export/*': { q: 5, w: 300, r: 4 - i },
    });
  }
  assertTooMany(await app.http.get('/api/export/y').set(owner.auth), 'GET /api/export/*', 300);
  // A path that merely starts with the same letters is not below /api/export.
  const other = await app.http.get('/api/exports').set(owner.auth);
  assert.is(other.status, 404);
  assert.equal([...policiesOf(other).keys()].sort(), ['GET /api/*', 'admin']);
});

test('endpoint: 5 imports per 5 minutes under /api/import', async () => {
  const app = apps.create();
  const answers = await sendMany(await app.url(), 5, (i) => ({ method: 'POST', path: i ? `/api/import/kind-${i}` : '/api/import', headers: owner.auth, body: {} }));
  assertStatuses(answers, 404);
  assertCountedDown(answers, 5);
  for (const a of answers) assert.equal(policiesOf(a).get('POST /api/import/*'), { q: 5, w: 300 });
  assertTooMany(await app.http.post('/api/import/other').set(owner.auth).send({}), 'POST /api/import/*', 300);
});

test('GET /api/health is exempt: no limit headers, not counted, and served after the anonymous tier is used up', async () => {
  const app = apps.create();
  const health = async () => {
    for (const res of [await app.http.get('/api/health'), await app.http.head('/api/health'), await app.http.get('/api/health/')]) {
      assert.is(res.status, 200);
      assertNoLimitHeaders(res);
    }
  };
  await health();
  const first = await app.http.get('/api/auth/authenticated');
  assert.is(first.headers['x-ratelimit-remaining'], '99', 'the health checks were not counted');

  assertStatuses(await sendMany(await app.url(), 99, { path: '/api/auth/authenticated' }), 200);
  assertTooMany(await app.http.get('/api/auth/authenticated'), 'anonymous', 60);
  await health();
  // Other methods on the health path are counted like any request (and refused now).
  assertTooMany(await app.http.post('/api/health').send({}), 'anonymous', 60);
});

test('a window that ends lets the caller in again (RATE_LIMIT_SCALE=0.2, RATE_LIMIT_WINDOW_SCALE=0.05: one sign-in per 3 s)', async () => {
  // One attempt per window: the one request that hashes a password comes first, and the refusal
  // right after it is cheap (refused before the sign-in runs), so the window is seconds too long
  // for the refusal to miss it however slow the password check.
  const app = apps.create({ env: { RATE_LIMIT_SCALE: '0.2', RATE_LIMIT_WINDOW_SCALE: '0.05' } });
  const first = await app.http.post('/api/auth/login').send(loginBody());
  assert.is(first.status, 401);
  assertLimitHeaders(first, {
    anonymous: { q: 20, w: 3, r: 19 },
    'POST /api/*': { q: 20, w: 3, r: 19 },
    'POST /api/auth/login': { q: 1, w: 3, r: 0 },
  });
  const sessions = await count('user_session', { userId: employee.userId });
  assertTooMany(await app.http.post('/api/auth/login').send(loginBody(PASSWORD)), 'POST /api/auth/login', 3);
  assert.is(await count('user_session', { userId: employee.userId }), sessions);

  // X-RateLimit-Reset is the first answer's window end, rounded up: past it the count starts again.
  await sleep(Number(first.headers['x-ratelimit-reset']) * 1000 - Date.now() + 100);
  const again = await app.http.post('/api/auth/login').send(loginBody(PASSWORD));
  assert.is(again.status, 200);
  assertLimitHeaders(again, {
    anonymous: { q: 20, w: 3, r: 19 },
    'POST /api/*': { q: 20, w: 3, r: 19 },
    'POST /api/auth/login': { q: 1, w: 3, r: 0 },
  });
  assert.is(await count('user_session', { userId: employee.userId }), sessions + 1);
});

test('windows scaled below a millisecond still count, without a store error (RATE_LIMIT_WINDOW_SCALE=0.000001)', async () => {
  // Every window is clamped to 1 ms (0 would never count on the memory store and is refused by
  // Redis: ratelimit-redis.test.ts). How many requests share a millisecond depends on the speed,
  // so the figures are not asserted; that each request is counted and answered, and nothing failed, is.
  const lines: string[] = [];
  const app = apps.create({ env: { RATE_LIMIT_WINDOW_SCALE: '0.000001' }, appOptions: { log: (level, msg) => void lines.push(`${level}: ${msg}`) } });
  for (let i = 0; i < 5; i++) {
    const res = await app.http.get('/api/auth/check').set(employee.auth);
    assert.is(res.status, 200); // 1000 a millisecond: never refused
    assert.equal(policiesOf(res), new Map([['authenticated', { q: 1000, w: 1 }], ['GET /api/*', { q: 1000, w: 1 }]]));
    assert.match(res.headers['x-ratelimit-remaining'], /^\d+$/);
  }
  assert.equal(lines, [], 'the store never failed');
});

test('RATE_LIMITS=off: no limit headers and never a 429', async () => {
  assert.is(t.rateLimiting.enabled, false);
  for (let i = 0; i < 110; i++) {
    const res = await t.http.get('/api/auth/authenticated');
    assert.is(res.status, 200);
    assertNoLimitHeaders(res);
  }
  for (let i = 0; i < 6; i++) {
    const res = await t.http.post('/api/auth/login').send(loginBody());
    assert.is(res.status, 401);
    assertNoLimitHeaders(res);
  }
});

test.run();
