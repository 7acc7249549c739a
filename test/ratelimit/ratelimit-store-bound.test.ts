// The bound on a request's wait for its counts (RATE_LIMIT_STORE_TIMEOUT_MS), on any store that
// may wait (Redis, a cluster's primary), without either: the middleware in a Koa app of its own
// over a stand-in store whose answers the test holds back. A request whose counts do not come in
// time goes on uncounted at its own bound (also one that began while another waited, whose bound
// ends later), a count that came stands beside one that did not, and the store hears of the
// failure. A bulk write's extra charge whose take fails is skipped the same way, never a 500.
// ratelimit-redis.test.ts holds the same against a hung Redis.
import { createServer } from 'node:http';
import Koa from 'koa';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chargeItems } from '../../engine/ratelimit/item-charge.js';
import { rateLimits } from '../../engine/ratelimit/middleware.js';
import type { LimitTable } from '../../engine/ratelimit/policy.js';
import type { LimitStore } from '../../engine/ratelimit/store.js';

const BOUND_MS = 800;
/**
 * What a loaded machine may add to a bound: less than half of it, so that a request that began
 * half a bound after another and were timed from the other's end (1.5 bounds) would fail.
 */
const SLACK_MS = 350;

const TABLE: LimitTable = {
  tiers: [
    { name: 'anonymous', kind: 'tier', per: 'caller', requests: 10, windowSeconds: 60, roles: [] },
    { name: 'authenticated', kind: 'tier', per: 'caller', requests: 10, windowSeconds: 60, roles: [] },
  ],
  endpoints: [{ name: 'GET /api/*', kind: 'endpoint', per: 'caller', method: 'GET', paths: ['/api/*'], requests: 20, windowSeconds: 60, source: 'test' }],
  sameAs: {},
  exempt: [],
};

/** A store in koa-ratelimit's Redis form whose counts answer when `answers` says, per policy's namespace. */
function standInStore(answers: (namespace: string) => 'now' | 'never') {
  const failures: unknown[] = [];
  const store: LimitStore & { failures: unknown[] } = {
    kind: 'redis',
    driver: 'redis',
    db: {
      defineCommand() {},
      ratelimiter(key: string, _now: number, _duration: number, max: number) {
        const namespace = key.slice(0, key.lastIndexOf(':', key.lastIndexOf(':') - 1));
        if (answers(namespace) === 'never') return new Promise(() => {});
        return Promise.resolve([max, Math.floor(Date.now() / 1000) + 60, max]);
      },
    } as unknown as LimitStore['db'],
    takeMany: async () => {
      throw new Error('the store refused the take');
    },
    available: () => true,
    failed: (err) => void failures.push(err),
    worked: () => {},
    ready: async () => {},
    close: async () => {},
    timeoutMs: BOUND_MS,
    failures,
  };
  return store;
}

function appOver(store: LimitStore) {
  const app = new Koa();
  app.use(rateLimits({ table: TABLE, store, prefix: 'bound', identify: () => undefined, clientAddress: () => '127.0.0.1' }));
  app.use(async (ctx) => {
    // A bulk write of three items charges two more (bulk-routes.ts) before writing.
    if (ctx.path === '/api/thing/bulk') await chargeItems(ctx, 3);
    ctx.body = { ok: true };
  });
  return createServer(app.callback());
}

async function timedGet(server: ReturnType<typeof appOver>, path = '/api/thing') {
  const began = Date.now();
  const res = await request(server).get(path);
  return { res, ms: Date.now() - began };
}

test('counts that answer: the request is counted by both limits, without waiting for the bound', async () => {
  const store = standInStore(() => 'now');
  const { res, ms } = await timedGet(appOver(store));
  assert.is(res.status, 200);
  assert.is(res.headers['ratelimit-policy'], '"anonymous";q=10;w=60, "GET /api/*";q=20;w=60');
  assert.is(res.headers['x-ratelimit-limit'], '10');
  assert.ok(ms < BOUND_MS, `answered after ${ms} ms`);
  assert.equal(store.failures, []);
});

test('counts that never answer: the request goes on uncounted at its bound, and the store hears of it', async () => {
  const store = standInStore(() => 'never');
  const { res, ms } = await timedGet(appOver(store));
  assert.is(res.status, 200);
  assert.equal(res.body, { ok: true });
  assert.is(res.headers['ratelimit-policy'], undefined);
  assert.is(res.headers['x-ratelimit-limit'], undefined);
  assert.ok(ms >= BOUND_MS - 5 && ms < BOUND_MS + SLACK_MS, `answered after ${ms} ms; the bound is ${BOUND_MS} ms`);
  assert.is(store.failures.length, 1);
  assert.match(String(store.failures[0]), `did not answer within ${BOUND_MS} ms`);
});

test('a request that begins while another waits: each goes on at its own bound, not at the first one\'s', async () => {
  const store = standInStore(() => 'never');
  const server = appOver(store);
  const first = timedGet(server);
  await new Promise((resolve) => setTimeout(resolve, BOUND_MS / 2));
  const second = timedGet(server);
  const [a, b] = [await first, await second];
  for (const { res, ms } of [a, b]) {
    assert.is(res.status, 200);
    assert.ok(ms >= BOUND_MS - 5 && ms < BOUND_MS + SLACK_MS, `answered after ${ms} ms; the bound is ${BOUND_MS} ms`);
  }
  assert.is(store.failures.length, 2);
});

test('one limit answers, the other does not: the one that answered stands, the request is not refused', async () => {
  const store = standInStore((namespace) => (namespace.endsWith('GET /api/*') ? 'never' : 'now'));
  const { res, ms } = await timedGet(appOver(store));
  assert.is(res.status, 200);
  assert.is(res.headers['ratelimit-policy'], '"anonymous";q=10;w=60');
  assert.ok(ms >= BOUND_MS - 5 && ms < BOUND_MS + SLACK_MS, `answered after ${ms} ms`);
  assert.is(store.failures.length, 1);
});

test("a bulk write's extra charge whose take fails: skipped, the store hears of it, the write goes on", async () => {
  const store = standInStore(() => 'now');
  const { res } = await timedGet(appOver(store), '/api/thing/bulk');
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body, { ok: true });
  // The request's own counts stand in its headers; the failed charge changed none of them.
  assert.is(res.headers['ratelimit-policy'], '"anonymous";q=10;w=60, "GET /api/*";q=20;w=60');
  assert.is(store.failures.length, 1);
  assert.match(String(store.failures[0]), 'the store refused the take');
});

test.run();
