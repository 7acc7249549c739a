// Rate-limit suites: apps with limits on that share one test database, many requests in little
// time, and assertions on the limit headers and the 429 answer.
//
// Why siblings: registration and sign-in are limited too (3 and 5 per caller), so accounts are made
// through the test app with limits off, and each test then counts on a fresh app with limits on
// (its own store, so its own counts) over the same database. The access tokens work on both: same
// secrets, same sessions.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import * as assert from 'uvu/assert';
import { createProjectApp as createApp, type ProjectAppOptions as AppOptions } from '../../app/create-app.js';
import type { App } from '../../engine/app.js';
import { loadConfig } from '../../engine/config/config.js';
import { ExpiringCounts } from '../../engine/ratelimit/expiring-counts.js';
import { RESOURCES_DIR } from '../../app/paths.js';
import { modules as projectModules } from '../../resources/modules.js';
import { TEST_ENV, type TestApp } from './app.js';

export interface LimitedApp extends App {
  http: ReturnType<typeof request>;
  /** The base URL of a real listening server of this app (started on first use). */
  url(): Promise<string>;
  /** Distinct keys in the memory store (each caller's count of each policy is one). */
  storedKeys(): number;
}

export interface SiblingOptions {
  env?: Record<string, string>;
  resourceDirs?: string[];
  appOptions?: Partial<AppOptions>;
}

/**
 * Makes apps with limits on over a test app's database; `closeAll` ends every one made so far
 * (call it in test.after.each).
 */
export function siblingApps(base: () => TestApp, defaults: SiblingOptions = {}) {
  const open: Array<{ app: App; server?: Server }> = [];
  return {
    create(options: SiblingOptions = {}): LimitedApp {
      const env = { ...TEST_ENV, RATE_LIMITS: 'on', ...defaults.env, ...options.env };
      const app = createApp({
        config: loadConfig(env),
        db: base().db,
        resourceDirs: options.resourceDirs ?? defaults.resourceDirs ?? [RESOURCES_DIR],
        modules: projectModules,
        logError: () => {},
        log: () => {},
        ...defaults.appOptions,
        ...options.appOptions,
      });
      const entry: { app: App; server?: Server } = { app };
      open.push(entry);
      return {
        ...app,
        http: request(app.koa.callback()),
        async url() {
          if (!entry.server) {
            entry.server = createServer(app.koa.callback()).listen(0, '127.0.0.1');
            await once(entry.server, 'listening');
          }
          return `http://127.0.0.1:${(entry.server.address() as AddressInfo).port}`;
        },
        storedKeys() {
          const db = app.rateLimiting.store?.db;
          assert.instance(db, ExpiringCounts, 'the memory store');
          return (db as ExpiringCounts).size;
        },
      };
    },
    async closeAll() {
      for (const { app, server } of open.splice(0)) {
        if (server) {
          server.closeAllConnections();
          server.close();
        }
        await app.close();
      }
    },
  };
}

export interface Sent {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface Answer {
  status: number;
  headers: Headers;
}

/**
 * Sends `count` copies of a request over keep-alive connections, a few at a time: a thousand
 * requests in well under a second. Answers come back in the order they were sent.
 */
export async function sendMany(baseUrl: string, count: number, sent: Sent | ((i: number) => Sent), concurrency = 8): Promise<Answer[]> {
  const answers: Answer[] = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const { method = 'GET', path, headers = {}, body } = typeof sent === 'function' ? sent(i) : sent;
      const res = await fetch(`${baseUrl}${path}`, {
        method,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      await res.arrayBuffer(); // read to the end, so the connection is reused
      answers[i] = { status: res.status, headers: res.headers };
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return answers;
}

/** Every answer has this status (a 429 among them names its index). */
export function assertStatuses(answers: Answer[], status: number) {
  const other = answers.findIndex((a) => a.status !== status);
  assert.is(other, -1, `request #${other} answered ${answers[other]?.status}, expected ${status} for all ${answers.length}`);
}

/**
 * Each of n requests counted once against a limit of n: the X-RateLimit-Remaining values are
 * n-1 … 0, each seen once, whatever order the requests were answered in.
 */
export function assertCountedDown(answers: Answer[], limit: number) {
  const remaining = answers.map((a) => Number(a.headers.get('x-ratelimit-remaining'))).sort((a, b) => b - a);
  assert.equal(remaining, Array.from({ length: answers.length }, (_, i) => limit - 1 - i));
  for (const a of answers) assert.is(a.headers.get('x-ratelimit-limit'), String(limit));
}

// ---------------------------------------------------------------------------------------------
// Headers

type HeaderSource = { headers: Record<string, string | string[] | undefined> } | Answer;

function header(res: HeaderSource, name: string): string | undefined {
  if (res.headers instanceof Headers) return res.headers.get(name) ?? undefined;
  const value = (res.headers as Record<string, string | string[] | undefined>)[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

export const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

export function assertNoLimitHeaders(res: HeaderSource) {
  for (const name of RATE_LIMIT_HEADERS) assert.is(header(res, name), undefined, `${name} should be absent`);
}

/** One entry of the IETF draft's lists: `"name";a=N;b=N`. */
function parseList(value: string | undefined, what: string, params: [string, string]): Array<{ name: string; a: number; b: number }> {
  assert.type(value, 'string', `${what} header missing`);
  const item = new RegExp(`^"([^"\\\\]+)";${params[0]}=(\\d+);${params[1]}=(\\d+)$`);
  return value!.split(/,\s*/).map((text) => {
    const match = item.exec(text);
    assert.ok(match, `${what} item ${JSON.stringify(text)} is not "name";${params[0]}=N;${params[1]}=N`);
    return { name: match![1], a: Number(match![2]), b: Number(match![3]) };
  });
}

/** RateLimit-Policy: name → quota and window (seconds), in the order sent. */
export function policiesOf(res: HeaderSource): Map<string, { q: number; w: number }> {
  return new Map(parseList(header(res, 'ratelimit-policy'), 'RateLimit-Policy', ['q', 'w']).map((p) => [p.name, { q: p.a, w: p.b }]));
}

/** RateLimit: name → remaining and seconds until reset, in the order sent. */
export function countsOf(res: HeaderSource): Map<string, { r: number; t: number }> {
  return new Map(parseList(header(res, 'ratelimit'), 'RateLimit', ['r', 't']).map((p) => [p.name, { r: p.a, t: p.b }]));
}

export interface ExpectedPolicy {
  /** Requests per window. */
  q: number;
  /** Window in seconds. */
  w: number;
  /** Left after this request. */
  r: number;
}

/**
 * The limit headers of a counted answer: one RateLimit-Policy and one RateLimit entry per applied
 * policy (exactly `expected`, same order in both), and the X-RateLimit trio of the one with fewest
 * left, its reset in whole Unix seconds within its window from now.
 */
export function assertLimitHeaders(res: HeaderSource, expected: Record<string, ExpectedPolicy>) {
  const policies = policiesOf(res);
  const counts = countsOf(res);
  assert.equal([...policies.keys()].sort(), Object.keys(expected).sort(), 'RateLimit-Policy names the applied policies');
  assert.equal([...counts.keys()], [...policies.keys()], 'RateLimit lists the same policies in the same order');
  for (const [name, { q, w, r }] of Object.entries(expected)) {
    assert.equal(policies.get(name), { q, w }, `RateLimit-Policy of "${name}"`);
    const count = counts.get(name)!;
    assert.is(count.r, r, `RateLimit r of "${name}"`);
    assert.ok(count.t >= 0 && count.t <= w, `RateLimit t of "${name}" is ${count.t}, outside 0..${w}`);
  }
  // The most restrictive: fewest left (between equals, any of them: same figures).
  const fewest = Math.min(...Object.values(expected).map((p) => p.r));
  const tightest = Object.entries(expected).filter(([, p]) => p.r === fewest);
  const limit = Number(header(res, 'x-ratelimit-limit'));
  assert.ok(tightest.some(([, p]) => p.q === limit), `X-RateLimit-Limit ${limit} is not the limit of ${tightest.map(([n]) => n).join(' or ')}`);
  assert.is(header(res, 'x-ratelimit-remaining'), String(fewest));
  assertResetWithin(res, Math.max(...tightest.map(([, p]) => p.w)));
}

/** X-RateLimit-Reset: a whole number of Unix seconds between now and now + window (+1 for rounding up). */
export function assertResetWithin(res: HeaderSource, windowSeconds: number) {
  const reset = header(res, 'x-ratelimit-reset');
  assert.match(reset ?? '', /^\d+$/, `X-RateLimit-Reset ${reset} is not whole seconds`);
  const now = Date.now() / 1000;
  assert.ok(Number(reset) >= Math.floor(now) && Number(reset) <= Math.ceil(now + windowSeconds) + 1, `X-RateLimit-Reset ${reset} is not within ${windowSeconds} s of now (${Math.floor(now)})`);
}

/**
 * A 429 refused by `policy` (its window in whole seconds): the JSON envelope naming it, Retry-After
 * whole seconds in 1..window, and the limit headers.
 */
export function assertTooMany(res: { status: number; body?: any; headers: any }, policy: string, windowSeconds: number) {
  assert.is(res.status, 429, `expected 429 from "${policy}", got ${res.status} ${JSON.stringify(res.body)}`);
  assert.equal(Object.keys(res.body).sort(), ['error', 'message', 'statusCode']);
  assert.is(res.body.statusCode, 429);
  assert.is(res.body.error, 'Too Many Requests');
  assert.type(res.body.message, 'string');
  assert.ok(res.body.message.includes(`"${policy}"`), `the message names "${policy}": ${res.body.message}`);
  const retryAfter = header(res, 'retry-after');
  assert.match(retryAfter ?? '', /^\d+$/, `Retry-After ${retryAfter} is not whole seconds`);
  assert.ok(Number(retryAfter) >= 1 && Number(retryAfter) <= Math.ceil(windowSeconds), `Retry-After ${retryAfter} outside 1..${windowSeconds}`);
  assert.match(header(res, 'content-type') ?? '', /^application\/json/);
  // The refusal still reports the limits, the used-up one among them.
  assert.is(header(res, 'x-ratelimit-remaining'), '0');
  assertResetWithin(res, windowSeconds);
  assert.is(policiesOf(res).get(policy)?.w, windowSeconds, `RateLimit-Policy lists "${policy}" with its window`);
  assert.is(countsOf(res).get(policy)?.r, 0, `RateLimit shows "${policy}" used up`);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
