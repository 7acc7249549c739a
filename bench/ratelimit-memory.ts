// `npm run bench:ratelimit`: does the rate limiter's memory stay flat when callers never come back?
// Rounds of distinct callers (a new set of client addresses every round, given by X-Forwarded-For
// from a trusted loopback proxy) over keep-alive HTTP, the store's key count, heap and RSS (after
// a forced GC) printed after each round. Three cases, each in a process of its own so that one's
// memory does not weigh on the next:
//   expiring  the app's limiter (its default memory store) with windows of about 2 s; after each
//             round it waits out a window and a sweep, so idle callers should be gone
//   plain-map koa-ratelimit as documented, `db: new Map()`, the same two policies and windows: the
//             contrast, a Map that never forgets a caller (it waits out a window after each round)
//   flood     the app's limiter with windows longer than the whole run: nothing expires, so the
//             store's key cap (RATE_LIMIT_MAX_KEYS, default) is what holds
// A measurement, not a test: nothing is asserted, nothing is written into the project (the app runs
// on in-memory PGlite, or on a schema of its own dropped at the end when DATABASE_URL is set).
import { spawn } from 'node:child_process';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import ratelimit from 'koa-ratelimit';
import { createTestApp } from '../test/helpers/app.js';

const CALLERS = Number(process.env.BENCH_CALLERS ?? 100_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/** limits.yaml's windows are 60 s; this makes them 2.04 s. */
const SHORT_WINDOW_SCALE = 0.034;
/** 60 s × 20: twenty minutes, longer than the whole flood. */
const LONG_WINDOW_SCALE = 20;
/** ExpiringCounts' sweep interval as the app sets it up (memoryStore's default). */
const SWEEP_MS = 10_000;
/** Counted by the anonymous tier and by GET /api/*, answered without touching the database. */
const ROUTE = '/api/does-not-exist';

const CASES = ['expiring', 'plain-map', 'flood'] as const;
type Case = (typeof CASES)[number];

interface Target {
  server: Server;
  keys(): number;
  /** How long to wait after a round for idle callers to be forgotten (0: measure only after the round). */
  waitMs: number;
  close(): Promise<void>;
}

/** Caller n's address: 10.0.0.0 + n, distinct for up to 16.7 million callers. */
const address = (n: number) => `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;

function listen(callback: Parameters<typeof createServer>[1]): Promise<Server> {
  const server = createServer(callback);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function engineTarget(windowScale: number, waitMs: number): Promise<Target> {
  const app = await createTestApp({ env: { RATE_LIMITS: 'on', TRUST_PROXY: 'loopback', RATE_LIMIT_WINDOW_SCALE: String(windowScale) } });
  const store = app.rateLimiting.store!.db as Map<string, unknown>;
  const server = await listen(app.koa.callback());
  return { server, keys: () => store.size, waitMs, close: () => app.close() };
}

/** koa-ratelimit as its README shows it, with the two limits the app counts ROUTE against (limits.yaml). */
async function plainMapTarget(): Promise<Target> {
  const db = new Map();
  const koa = new Koa({ proxy: true });
  const policies = [
    { namespace: 'anonymous', max: 100 },
    { namespace: 'GET /api/*', max: 1000 },
  ];
  for (const { namespace, max } of policies) {
    koa.use(ratelimit({ driver: 'memory', db, namespace, max, duration: Math.round(60_000 * SHORT_WINDOW_SCALE), id: (ctx) => ctx.ip }));
  }
  koa.use((ctx) => {
    ctx.status = 404;
  });
  const server = await listen(koa.callback());
  // A window is enough to show it: every count's window has ended, and every count is still there.
  return { server, keys: () => db.size, waitMs: Math.round(60_000 * SHORT_WINDOW_SCALE) + 500, close: async () => db.clear() };
}

function target(which: Case): Promise<Target> {
  if (which === 'expiring') return engineTarget(SHORT_WINDOW_SCALE, Math.round(60_000 * SHORT_WINDOW_SCALE) + SWEEP_MS + 500);
  if (which === 'plain-map') return plainMapTarget();
  return engineTarget(LONG_WINDOW_SCALE, 0);
}

function get(agent: Agent, port: number, forwardedFor: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: ROUTE, agent, headers: { 'x-forwarded-for': forwardedFor } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

/** CALLERS requests, one per caller, callers first … first + CALLERS - 1; the number refused (429). */
async function round(agent: Agent, port: number, first: number): Promise<number> {
  let next = 0;
  let refused = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLERS) {
        const status = await get(agent, port, address(first + next++));
        if (status === 429) refused++;
      }
    }),
  );
  return refused;
}

const gc = (globalThis as { gc?: () => void }).gc;

function memory() {
  gc!();
  gc!();
  const { heapUsed, rss } = process.memoryUsage();
  return { heap: heapUsed / 2 ** 20, rss: rss / 2 ** 20 };
}

const columns = (cells: Array<string | number>, widths = [10, 6, 9, 10, 9, 10, 9, 8]) =>
  cells.map((cell, i) => (i < 2 ? String(cell).padEnd(widths[i]) : String(cell).padStart(widths[i]))).join(' ');

function row(which: Case, label: string, callers: number, keys: number, rate: string, refused: string) {
  const { heap, rss } = memory();
  console.log(columns([which, label, callers, keys, heap.toFixed(1), rss.toFixed(1), rate, refused]));
}

async function runCase(which: Case) {
  const t = await target(which);
  const { port } = t.server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  try {
    row(which, 'start', 0, t.keys(), '', '');
    for (let r = 0; r < ROUNDS; r++) {
      const started = performance.now();
      const refused = await round(agent, port, r * CALLERS);
      const rate = (CALLERS / ((performance.now() - started) / 1000)).toFixed(0);
      row(which, `${r + 1}`, (r + 1) * CALLERS, t.keys(), rate, String(refused));
      if (t.waitMs) {
        await new Promise((resolve) => setTimeout(resolve, t.waitMs));
        row(which, `${r + 1} idle`, (r + 1) * CALLERS, t.keys(), '', '');
      }
    }
  } finally {
    agent.destroy();
    await new Promise((resolve) => t.server.close(resolve));
    await t.close();
  }
}

/** Runs one case in a child process with this process's flags (--expose-gc, tsx). */
function runChild(which: Case): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), which], { stdio: 'inherit' });
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${which}: exit code ${code}`)))));
}

if (!gc) throw new Error('run with node --expose-gc (npm run bench:ratelimit does)');
const only = process.argv[2] as Case | undefined;
if (only) {
  if (!CASES.includes(only)) throw new Error(`unknown case ${only}; one of ${CASES.join(', ')}`);
  await runCase(only);
} else {
  const started = performance.now();
  console.log(`${CALLERS} new callers per round, ${ROUNDS} rounds, concurrency ${CONCURRENCY}; each request counted by 2 limits (anonymous tier, GET /api/*)`);
  console.log(`expiring, plain-map: windows ${(60 * SHORT_WINDOW_SCALE).toFixed(2)} s; "idle" = after the round's windows ended (expiring: and a ${SWEEP_MS / 1000} s sweep ran)`);
  console.log(`flood: windows ${60 * LONG_WINDOW_SCALE} s (nothing expires), RATE_LIMIT_MAX_KEYS default; heap and RSS after a forced GC`);
  console.log(columns(['case', 'round', 'callers', 'keys', 'heap MB', 'RSS MB', 'req/s', '429s']));
  for (const which of CASES) await runChild(which);
  console.log(`total ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
