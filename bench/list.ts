// `npm run bench`: the real server in its own process (embedded database, or PostgreSQL when
// DATABASE_URL is set), seeded over HTTP, then a fixed number of keep-alive requests from this
// process at a fixed concurrency for each request shape. Prints requests per second and latency
// percentiles per shape. A measurement to compare commits with, not a test: nothing is asserted.
// Rate limits are on, so the figures include the limiter's cost (Redis when REDIS_URL is set),
// scaled up so that they never refuse the load; BENCH_RATE_LIMITS=off measures without them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Agent, request } from 'node:http';
import knex from 'knex';
import { startServer } from '../test/helpers/server-process.js';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 10);
const EMPLOYEES = 200;
const PASSWORD = 'Str0ng!Passw0rd';
/** Every limit × 10,000 (register: 30,000 per 5 min for the seeding; GET /api/*: 10 million per minute). */
const RATE_LIMIT_SCALE = '10000';

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

function call(base: string, method: string, url: string, body?: unknown, token?: string): Promise<{ status: number; body: any }> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${base}${url}`, {
      method,
      agent,
      headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

async function seed(base: string) {
  const email = `bench-${Date.now()}@example.com`;
  await call(base, 'POST', '/api/auth/register', { user: { firstName: 'Bench', lastName: 'Owner', email }, password: PASSWORD });
  const { token } = (await call(base, 'POST', '/api/auth/login', { email, password: PASSWORD })).body;
  const org = (await call(base, 'POST', '/api/organization', { name: 'Bench', currency: 'EUR' }, token)).body;
  const tag = (await call(base, 'POST', '/api/tags', { name: 'bench', color: 'red' }, token)).body;
  let firstId = '';
  for (let i = 0; i < EMPLOYEES; i++) {
    const userEmail = `bench-${i}-${Date.now()}@example.com`;
    const user = (await call(base, 'POST', '/api/auth/register', { user: { email: userEmail, role: 'EMPLOYEE' }, password: PASSWORD }, token)).body;
    const employee = await call(base, 'POST', '/api/employee', { firstName: `First${i}`, lastName: `Last${i}`, userId: user.id, organizationId: org.id, tagIds: [tag.id] }, token);
    if (employee.status !== 201) throw new Error(`seed failed: ${JSON.stringify(employee.body)}`);
    firstId ||= employee.body.id;
  }
  return { token, firstId };
}

async function measure(base: string, label: string, method: string, url: string, token: string, body?: unknown, expected = 200) {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next++ < REQUESTS) {
      const t0 = performance.now();
      const res = await call(base, method, url, body, token);
      latencies.push(performance.now() - t0);
      if (res.status >= 400 && res.status !== expected) failures++;
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))].toFixed(1);
  console.log(`${label.padEnd(44)} ${(REQUESTS / seconds).toFixed(0).padStart(6)} req/s   p50 ${pct(50)} ms   p99 ${pct(99)} ms${failures ? `   ${failures} failed` : ''}`);
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-'));
const schema = `bench_${Date.now()}`;
const database = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir };
const limitsOn = process.env.BENCH_RATE_LIMITS !== 'off';
const limits = limitsOn
  ? { RATE_LIMITS: 'on', RATE_LIMIT_SCALE, REDIS_URL: process.env.REDIS_URL, RATE_LIMIT_PREFIX: `bench-${Date.now()}` }
  : { RATE_LIMITS: 'off' };
const server = await startServer({ ...database, ...limits });
try {
  const { token, firstId } = await seed(server.url);
  const store = !limitsOn ? 'off' : process.env.REDIS_URL ? 'on, Redis store' : 'on, memory store';
  console.log(`${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded PGlite'}, rate limits ${store}, ${EMPLOYEES} employees, ${REQUESTS} requests per shape, concurrency ${CONCURRENCY}`);
  // Health is exempt from the limits and reads the database; the unknown route is counted (tier and
  // GET /api/*) and answered 404 without a query: the limiter's cost next to the bare stack's.
  await measure(server.url, 'GET /api/health (exempt)', 'GET', '/api/health', token);
  await measure(server.url, `GET /api/no-such-route (${limitsOn ? 'counted, ' : ''}404)`, 'GET', '/api/no-such-route', token, undefined, 404);
  await measure(server.url, 'GET /api/employee/{id}', 'GET', `/api/employee/${firstId}`, token);
  await measure(server.url, 'GET /api/employee (page of 10 + count)', 'GET', '/api/employee', token);
  await measure(server.url, 'GET /api/employee?take=50&relations=user,tags', 'GET', '/api/employee?take=50&relations=user,tags', token);
  await measure(server.url, 'POST /api/employee/search (where + order)', 'POST', '/api/employee/search', token, { where: { isActive: true }, order: { lastName: 'ASC' }, take: 20 });
} finally {
  await server.stop();
  agent.destroy();
  rmSync(dataDir, { recursive: true, force: true });
  if (process.env.DATABASE_URL) {
    const db = knex({ client: 'pg', connection: process.env.DATABASE_URL });
    await db.raw('drop schema if exists ?? cascade', [schema]).finally(() => db.destroy());
  }
}
