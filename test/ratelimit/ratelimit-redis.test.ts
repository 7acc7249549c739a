// Rate limits kept in Redis (REDIS_URL): two instances of the service share one count, and a Redis
// that goes away (stopped, hung, or not there at start) never stops the service: requests are let
// through uncounted (fail-open), the outage is logged once, counting pauses 2 s after a failure and
// resumes when Redis is back. Retry-After is never early, and windows scaled below a millisecond
// still count. The outages are staged with a TCP proxy between the app and Redis. Skipped without
// REDIS_URL.
//
// Every test uses its own key prefix (RATE_LIMIT_PREFIX), so runs never see each other's counts,
// and deletes its keys at the end.
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { Redis } from 'ioredis';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createProjectApp as createApp } from '../../app/create-app.js';
import type { App } from '../../engine/app.js';
import type { LogLevel } from '../../engine/log/log.js';
import { modules as projectModules } from '../../resources/modules.js';
import { PASSWORD } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { sleep } from '../helpers/ratelimit.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

const REDIS_URL = process.env.REDIS_URL;
const redisTest = REDIS_URL ? test : test.skip;
if (!REDIS_URL) console.log('ratelimit-redis.test.ts: SKIPPED, REDIS_URL is not set (e.g. REDIS_URL=redis://127.0.0.1:6379)');

/** POST /api/auth/login: 5 requests per 60 s (limits.yaml), the tightest limit of a login. */
const LOGIN = { name: 'POST /api/auth/login', requests: 5, window: 60 };
/**
 * How long a test waits for the app to find Redis again (it retries at most every 2 s, and pauses
 * 2 s after a failure): a guard against a hang, generous for a loaded machine.
 */
const RECONNECT_WAIT_MS = 30_000;

type Http = ReturnType<typeof request>;
interface Response {
  status: number;
  body: any;
  headers: Record<string, string>;
}

const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

const newPrefix = () => `rltest:${randomBytes(6).toString('hex')}`;
const limitsOn = (prefix: string, redisUrl: string) => ({ RATE_LIMITS: 'on', REDIS_URL: redisUrl, RATE_LIMIT_PREFIX: prefix });
/**
 * For the tests that count exactly against a Redis that answers: a test process slowed by a
 * loaded machine must not turn a count into a (logged) failure within the default 500 ms.
 */
const PATIENT = { RATE_LIMIT_STORE_TIMEOUT_MS: '5000' };

/** A wrong password for nobody: 401, counted by the login limit like any attempt. */
const failedLogin = (http: Http): Promise<Response> =>
  http.post('/api/auth/login').send({ email: 'nobody@example.com', password: PASSWORD }) as unknown as Promise<Response>;

/** What an app says through its `log` option, and when (Date.now()). */
function logBook() {
  const lines: Array<{ level: LogLevel; msg: string; extra?: Record<string, unknown>; at: number }> = [];
  return {
    lines,
    log: (level: LogLevel, msg: string, extra?: Record<string, unknown>) => void lines.push({ level, msg, extra, at: Date.now() }),
    /** Lines of this level about Redis. */
    redis: (level: LogLevel) => lines.filter((l) => l.level === level && /redis/i.test(l.msg)),
  };
}

/** A 401 that was counted by the login limit: `remaining` left, every header a whole number. */
function assertCountedLogin(res: Response, remaining: number) {
  assert.is(res.status, 401, JSON.stringify(res.body));
  const h = res.headers;
  assert.is(h['x-ratelimit-limit'], String(LOGIN.requests), JSON.stringify(h));
  assert.is(h['x-ratelimit-remaining'], String(remaining), JSON.stringify(h));
  assertWholeReset(h);
  assert.ok(h['ratelimit-policy'].includes(`"${LOGIN.name}";q=${LOGIN.requests};w=${LOGIN.window}`), h['ratelimit-policy']);
  assert.match(h.ratelimit, new RegExp(`"${LOGIN.name}";r=${remaining};t=\\d+(,|$)`));
}

/** X-RateLimit-Reset is whole Unix seconds, within the login window from now. */
function assertWholeReset(h: Record<string, string>) {
  const reset = h['x-ratelimit-reset'];
  assert.match(reset, /^\d+$/, `X-RateLimit-Reset ${reset}`);
  const now = Date.now() / 1000;
  assert.ok(Number(reset) >= Math.floor(now) - 1 && Number(reset) <= Math.ceil(now) + LOGIN.window, `X-RateLimit-Reset ${reset} at ${now}`);
  for (const value of [h['x-ratelimit-limit'], h['x-ratelimit-remaining']]) assert.match(value, /^\d+$/);
}

/** Answered as if there were no limits: the route's own status, not a word about limits. */
function assertUncounted(res: Response) {
  assert.is(res.status, 401, `${res.status} ${JSON.stringify(res.body)}`);
  for (const name of RATE_LIMIT_HEADERS) assert.is(res.headers[name], undefined, `${name} while Redis is away`);
}

/** The login limit is used up: 429, the envelope, Retry-After within the window. */
function assertLoginRefused(res: Response) {
  assertError(res, 429, new RegExp(`^Too Many Requests: the limit "${LOGIN.name}" \\(5 requests per 60 s\\) is used up; retry in \\d+ s$`));
  assert.is(res.headers['x-ratelimit-remaining'], '0');
  assertWholeReset(res.headers);
  const retryAfter = res.headers['retry-after'];
  assert.match(retryAfter, /^\d+$/);
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= LOGIN.window, `Retry-After ${retryAfter}`);
}

/** Sends failed logins until one is counted again (rate-limit headers), each meanwhile answered uncounted. */
async function untilCounted(http: Http): Promise<Response> {
  const deadline = Date.now() + RECONNECT_WAIT_MS;
  for (;;) {
    const res = await failedLogin(http);
    if (res.headers['x-ratelimit-limit'] !== undefined) return res;
    assertUncounted(res);
    if (Date.now() > deadline) throw new Error(`requests were still uncounted ${RECONNECT_WAIT_MS} ms after Redis came back`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A Redis connection of the test's own, to look at the counts and clean up after. */
async function withRedis<T>(use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(REDIS_URL!, { maxRetriesPerRequest: 1 });
  try {
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

const keysOf = (redis: Redis, prefix: string) => redis.keys(`${prefix}:*`);

async function dropKeys(prefix: string) {
  await withRedis(async (redis) => {
    const keys = await keysOf(redis, prefix);
    if (keys.length) await redis.del(...keys);
  });
}

/** A proxy to REDIS_URL's server. */
function proxyToRedis(): Promise<TcpProxy> {
  const url = new URL(REDIS_URL!);
  return startTcpProxy(url.hostname.replace(/^\[|\]$/g, ''), Number(url.port || 6379));
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * An app whose Redis is reached through a TCP proxy the test can cut, stall and restore, with its
 * log collected and its own key prefix; all closed and the keys dropped whatever the test does.
 */
async function withProxiedApp(run: (t: TestApp, proxy: TcpProxy, book: ReturnType<typeof logBook>) => Promise<void>, env: Record<string, string> = {}) {
  const prefix = newPrefix();
  const book = logBook();
  const proxy = await proxyToRedis();
  let t: TestApp | undefined;
  try {
    t = await createTestApp({ env: { ...limitsOn(prefix, proxy.url(REDIS_URL!)), ...env }, appOptions: { log: book.log } });
    await run(t, proxy, book);
  } finally {
    await t?.close();
    await proxy.close();
    await dropKeys(prefix);
  }
}

redisTest('two instances on one Redis share one count: 3 logins on A and 2 on B use up the limit of 5 for both', async () => {
  const prefix = newPrefix();
  const bookA = logBook();
  const bookB = logBook();
  const a = await createTestApp({ env: { ...limitsOn(prefix, REDIS_URL!), ...PATIENT }, appOptions: { log: bookA.log } });
  let appB: App | undefined;
  try {
    // B is a second instance of the service: same configuration, same database, its own Redis connection.
    appB = createApp({ config: a.config, db: a.db, modules: projectModules, logError: () => {}, log: bookB.log });
    await appB.ready();
    assert.is(a.rateLimiting.store?.driver, 'redis');
    assert.is(appB.rateLimiting.store?.driver, 'redis');
    assert.is.not(a.rateLimiting.store?.db, appB.rateLimiting.store?.db, 'each instance has its own Redis client');
    const b = request(appB.koa.callback());

    for (const remaining of [4, 3, 2]) assertCountedLogin(await failedLogin(a.http), remaining);
    for (const remaining of [1, 0]) assertCountedLogin(await failedLogin(b), remaining);
    assertLoginRefused(await failedLogin(a.http));
    assertLoginRefused(await failedLogin(b));

    // The count is Redis's: one sorted set for the login limit, under this test's prefix, with the
    // five counted attempts (refusals are not added).
    await withRedis(async (redis) => {
      const keys = await keysOf(redis, prefix);
      const loginKeys = keys.filter((k) => k.startsWith(`${prefix}:${LOGIN.name}:`));
      assert.is(loginKeys.length, 1, JSON.stringify(keys));
      assert.is(await redis.zcard(loginKeys[0]), LOGIN.requests);
    });
    // Another limit of the same requests is counted past the login one: the anonymous tier saw all 7.
    const tier = await a.http.get('/api/no-such-route');
    assert.match(tier.headers.ratelimit, /"anonymous";r=92;t=\d+/);
    assert.equal([...bookA.lines, ...bookB.lines], [], 'nothing to log while Redis answers');
  } finally {
    await appB?.close();
    await a.close();
    await dropKeys(prefix);
  }
});

redisTest('Redis stops: requests are answered uncounted, one warning; Redis returns: counting resumes where it was, one notice', async () => {
  await withProxiedApp(async (t, proxy, book) => {
  for (const remaining of [4, 3]) assertCountedLogin(await failedLogin(t.http), remaining);
  assert.ok(proxy.connections >= 1, 'the app talks to Redis through the proxy');

  await proxy.cut();
  // More attempts than the limit allows: none refused, none failed, all answered by the route.
  for (let i = 0; i < 3 * LOGIN.requests; i++) assertUncounted(await failedLogin(t.http));
  const health = await t.http.get('/api/health');
  assert.is(health.status, 200);
  assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
  assert.match(book.redis('warn')[0].msg, /uncounted/);
  assert.equal(book.redis('info'), []);

  await proxy.restore();
  // The two attempts counted before the outage are still there; those during it never were.
  assertCountedLogin(await untilCounted(t.http), 2);
  for (const remaining of [1, 0]) assertCountedLogin(await failedLogin(t.http), remaining);
  assertLoginRefused(await failedLogin(t.http));

  assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
  assert.is(book.redis('info').length, 1, JSON.stringify(book.lines));
  assert.match(book.redis('info')[0].msg, /counted/);
  assert.equal(book.lines.filter((l) => l.level === 'error'), []);
  });
});

redisTest('Redis hangs (connection open, no answer): requests are still answered, one warning; it answers again: counted, one notice', async () => {
  await withProxiedApp(async (t, proxy, book) => {
  assertCountedLogin(await failedLogin(t.http), 4);

  proxy.stall();
  // More attempts than the limit allows, all answered; and the app gives up the hung connection
  // for a new one rather than have every request wait out the command timeout while Redis hangs.
  const acceptedBefore = proxy.accepted;
  const deadline = Date.now() + RECONNECT_WAIT_MS;
  for (let answered = 0; answered < LOGIN.requests + 2 || proxy.accepted === acceptedBefore; answered++) {
    assertUncounted(await failedLogin(t.http));
    if (Date.now() > deadline) throw new Error(`the app still waited on its hung Redis connection after ${RECONNECT_WAIT_MS} ms`);
  }
  assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
  assert.equal(book.redis('info'), []);

  await proxy.restore();
  // Commands held by the hang may still reach Redis late and count: only the return of the
  // headers and of the limit is certain.
  const counted = await untilCounted(t.http);
  let last = counted;
  for (let i = 0; last.status !== 429 && i < LOGIN.requests; i++) last = await failedLogin(t.http);
  assertLoginRefused(last);
  assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
  assert.is(book.redis('info').length, 1, JSON.stringify(book.lines));
  });
});

// The bound is RATE_LIMIT_STORE_TIMEOUT_MS for a request's counts all together. Each Redis
// command has that timeout too, but the commands of a request that arrives while another's round
// trip hangs are queued behind it (ioredis's auto-pipelining runs one pipeline at a time) and only
// then sent: before the bound was per request, such a request waited almost twice the timeout.
// A 3 s bound here, so that 1.5 s of slack for a loaded machine still tells one wait from two.
redisTest('Redis hangs: a request waits at most RATE_LIMIT_STORE_TIMEOUT_MS, also one that arrives while another waits', async () => {
  const BOUND_MS = 3000;
  const SLACK_MS = 1500;
  await withProxiedApp(async (t, proxy, book) => {
    assertCountedLogin(await failedLogin(t.http), 4);
    proxy.stall();
    const timed = async () => {
      const began = Date.now();
      const res = await failedLogin(t.http);
      return { res, ms: Date.now() - began };
    };
    const first = timed();
    // The second comes while the first one's counts hang (sent long before its bound ends).
    await sleep(BOUND_MS / 3);
    const second = await timed();
    const answers = [await first, second];
    for (const { res, ms } of answers) {
      assertUncounted(res);
      assert.ok(ms < BOUND_MS + SLACK_MS, `answered after ${ms} ms; the bound is ${BOUND_MS} ms`);
    }
    assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
  }, { RATE_LIMIT_STORE_TIMEOUT_MS: String(BOUND_MS) });
});

redisTest('Redis absent at start: the app starts anyway and answers uncounted, one warning', async () => {
  const prefix = newPrefix();
  const book = logBook();
  const port = await closedPort();
  const t = await createTestApp({ env: limitsOn(prefix, `redis://127.0.0.1:${port}`), appOptions: { log: book.log } });
  try {
    assert.is(t.rateLimiting.store?.driver, 'redis');
    for (let i = 0; i < LOGIN.requests + 2; i++) assertUncounted(await failedLogin(t.http));
    assert.is((await t.http.get('/api/health')).status, 200);
    assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
    assert.equal(book.redis('info'), []);
  } finally {
    await t.close();
  }
});

redisTest('Redis that comes up after the app: counting starts when it does, one warning then one notice', async () => {
  const prefix = newPrefix();
  const book = logBook();
  const proxy = await proxyToRedis();
  let t: TestApp | undefined;
  try {
    await proxy.cut();
    t = await createTestApp({ env: limitsOn(prefix, proxy.url(REDIS_URL!)), appOptions: { log: book.log } });
    assertUncounted(await failedLogin(t.http));
    assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));

    await proxy.restore();
    assertCountedLogin(await untilCounted(t.http), 4);
    assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
    assert.is(book.redis('info').length, 1, JSON.stringify(book.lines));
  } finally {
    await t?.close();
    await proxy.close();
    await dropKeys(prefix);
  }
});

redisTest('after a failure counting pauses 2 s, then resumes: a Redis back at once is not asked again before that', async () => {
  await withProxiedApp(async (t, proxy, book) => {
  assertCountedLogin(await failedLogin(t.http), 4);

  await proxy.cut();
  // The first count that fails starts the pause (and is the one warning).
  const deadline = Date.now() + RECONNECT_WAIT_MS;
  while (!book.redis('warn').length) {
    assertUncounted(await failedLogin(t.http));
    if (Date.now() > deadline) throw new Error('no failure noticed with Redis cut');
  }
  const failedAt = book.redis('warn')[0].at;
  await proxy.restore(); // the client reconnects within a few hundred ms

  // Counted again only once the pause is over, and soon after (a later failure may extend it).
  const counted = await untilCounted(t.http);
  const countedAt = Date.now();
  assert.ok(countedAt - failedAt >= 2000 - 5, `counted again ${countedAt - failedAt} ms after the failure, inside the 2 s pause`);
  assertCountedLogin(counted, 3);
  assert.is(book.redis('warn').length, 1, JSON.stringify(book.lines));
  assert.is(book.redis('info').length, 1, JSON.stringify(book.lines));
  });
});

redisTest('Retry-After is never early: sleeping exactly that long, the next attempt is let in (one sign-in per 2.1 s)', async () => {
  const prefix = newPrefix();
  const book = logBook();
  // RATE_LIMIT_SCALE=0.2: one sign-in per window; RATE_LIMIT_WINDOW_SCALE=0.035: a 2.1 s window,
  // so the wait left at the refusal is a little over 2 s, where a Retry-After rounded the wrong
  // way (down to 2) would send the client back before the window ends.
  const env = { ...limitsOn(prefix, REDIS_URL!), ...PATIENT, RATE_LIMIT_SCALE: '0.2', RATE_LIMIT_WINDOW_SCALE: '0.035' };
  const t = await createTestApp({ env, appOptions: { log: book.log } });
  const assertResetAhead = (res: Response) => {
    const reset = Number(res.headers['x-ratelimit-reset']);
    assert.ok(reset >= Date.now() / 1000, `X-RateLimit-Reset ${reset} is already past (${Date.now() / 1000})`);
    assert.ok(reset <= Date.now() / 1000 + 3 + 1, `X-RateLimit-Reset ${reset} is further than a window away`);
  };
  try {
    const first = await failedLogin(t.http);
    assert.is(first.status, 401);
    assert.is(first.headers['x-ratelimit-limit'], '1');
    assert.is(first.headers['x-ratelimit-remaining'], '0');
    assert.match(first.headers['ratelimit-policy'], /"POST \/api\/auth\/login";q=1;w=3/);
    assertResetAhead(first);

    const refused = await failedLogin(t.http);
    assertError(refused, 429, /^Too Many Requests: the limit "POST \/api\/auth\/login" \(1 request per 3 s\) is used up; retry in \d+ s$/);
    assertResetAhead(refused);
    const retryAfter = Number(refused.headers['retry-after']);
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 3, `Retry-After ${refused.headers['retry-after']}`);

    await sleep(retryAfter * 1000);
    const admitted = await failedLogin(t.http);
    assert.is(admitted.status, 401, `after Retry-After (${retryAfter} s): ${admitted.status} ${JSON.stringify(admitted.body)}`);
    assert.is(admitted.headers['x-ratelimit-remaining'], '0');
    assertResetAhead(admitted);
    assert.equal(book.lines, []);
  } finally {
    await t.close();
    await dropKeys(prefix);
  }
});

redisTest('windows scaled below a millisecond (RATE_LIMIT_WINDOW_SCALE=0.000001) still count on Redis, which takes no 0 ms window', async () => {
  const prefix = newPrefix();
  const book = logBook();
  const t = await createTestApp({ env: { ...limitsOn(prefix, REDIS_URL!), ...PATIENT, RATE_LIMIT_WINDOW_SCALE: '0.000001' }, appOptions: { log: book.log } });
  try {
    for (let i = 0; i < LOGIN.requests + 2; i++) {
      const res = await failedLogin(t.http);
      // A 1 ms window has long ended by the next attempt: each is the first of its window.
      assert.is(res.status, 401, `${res.status} ${JSON.stringify(res.body)}`);
      assert.is(res.headers['x-ratelimit-limit'], String(LOGIN.requests), 'counted');
      assert.match(res.headers['ratelimit-policy'], /"POST \/api\/auth\/login";q=5;w=1/);
    }
    assert.equal(book.lines, [], 'Redis took every count');
    // The counts expire with their windows (1 ms): nothing is left behind.
    await withRedis((redis) => waitFor(async () => (await keysOf(redis, prefix)).length === 0, 'the counts to expire'));
  } finally {
    await t.close();
    await dropKeys(prefix);
  }
});

test.run();
