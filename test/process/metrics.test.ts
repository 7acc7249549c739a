// Prometheus metrics (METRICS_PORT), through the real server process: the metrics port answers
// Prometheus text; requests are counted by method, route template (never the raw path) and
// status; the in-flight gauge, the database pool gauges and query durations, rate-limit refusals
// by policy and the process metrics are there; METRICS_TOKEN guards the port; the API port never
// serves metrics; with METRICS_PORT unset nothing more listens. On PostgreSQL (DATABASE_URL) the
// single process runs there, and a cluster of two workers reports the sum of both.
import { randomBytes, randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync, mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knex from 'knex';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError, loadConfig } from '../../engine/config/config.js';
import { createTestApp, TEST_ENV } from '../helpers/app.js';
import { head, RawConnection } from '../helpers/raw-connection.js';
import { migratedDataFolder } from '../helpers/migrated-folder.js';
import { killServers, runServerToExit, startServer, startupFailure, type ServerProcess } from '../helpers/server-process.js';

const DATABASE_URL = process.env.DATABASE_URL;
const pgTest = DATABASE_URL ? test : test.skip;
if (!DATABASE_URL) console.log('metrics.test.ts: the cluster test is SKIPPED, DATABASE_URL is not set (the embedded database runs one process)');

const TOKEN = 'metrics-token-0123456789abcdef';
const cwd = mkdtempSync(path.join(tmpdir(), 'metrics-test-'));
const schema = `metrics_test_${randomBytes(4).toString('hex')}`;
/** PostgreSQL when the run has it (one process), else the embedded database in a folder of its own. */
const database = DATABASE_URL ? { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' } : { DATA_DIR: path.join(cwd, 'data') };
let server: ServerProcess;
let metricsPort: number;

test.before(async () => {
  if (!DATABASE_URL) await migratedDataFolder(path.join(cwd, 'data'));
  server = await startServer({ ...database, RATE_LIMITS: 'on', METRICS_PORT: '0', METRICS_TOKEN: TOKEN }, cwd);
  metricsPort = (await server.waitForLog((l) => l.msg === 'metrics listening')).port;
});

test.after(async () => {
  killServers();
  rmSync(cwd, { recursive: true, force: true });
  if (!DATABASE_URL) return;
  const admin = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
  for (const name of [schema, `${schema}_cluster`]) await admin.raw('drop schema if exists ?? cascade', [name]);
  await admin.destroy();
});

type Labels = Record<string, string>;

/** The samples of `name` in Prometheus text whose labels include `labels`. */
function samples(text: string, name: string, labels: Labels = {}): Array<{ labels: Labels; value: number }> {
  const found = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const own: Labels = {};
    for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) own[key] = value;
    if (Object.entries(labels).every(([key, value]) => own[key] === value)) found.push({ labels: own, value: Number(match[3]) });
  }
  return found;
}

/** The one sample of `name` with `labels` (0 when there is none: a counter not yet counted). */
function value(text: string, name: string, labels: Labels = {}): number {
  const found = samples(text, name, labels);
  assert.ok(found.length <= 1, `one ${name} ${JSON.stringify(labels)}, got ${JSON.stringify(found)}`);
  return found[0]?.value ?? 0;
}

async function scrape(port = metricsPort, token: string | undefined = TOKEN): Promise<string> {
  const req = request(`http://127.0.0.1:${port}`).get('/metrics');
  const res = token ? await req.set('Authorization', `Bearer ${token}`) : await req;
  assert.is(res.status, 200, res.text);
  assert.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/);
  return res.text;
}

/** The TCP ports process `pid` listens on (Linux: its socket descriptors matched in /proc/net/tcp*). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) inodes.add(inode);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let lines: string[];
    try {
      lines = readFileSync(table, 'utf8').trim().split('\n').slice(1);
    } catch {
      continue;
    }
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      // fields: sl, local address, remote address, state (0A: LISTEN), …, inode (the tenth).
      if (fields[3] === '0A' && inodes.has(fields[9])) ports.add(parseInt(fields[1].split(':')[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

test('requests are counted by method, route template and status: never the raw path', async () => {
  const id = randomUUID();
  const api = request(server.url);
  assert.is((await api.get(`/api/employee/${id}`)).status, 401);
  assert.is((await api.get('/api/health')).status, 200);
  assert.is((await api.get(`/no-such-thing/${id}`)).status, 404);
  const text = await scrape();
  assert.not.match(text, id, 'the uuid is no label');
  assert.not.match(text, 'no-such-thing', 'an unknown path is no label');
  assert.is(value(text, 'http_requests_total', { method: 'GET', route: '/api/employee/:id', status: '401' }), 1);
  assert.is(value(text, 'http_requests_total', { method: 'GET', route: '/api/health', status: '200' }), 1);
  assert.ok(value(text, 'http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1);
  assert.is(value(text, 'http_request_duration_seconds_count', { method: 'GET', route: '/api/employee/:id', status: '401' }), 1);
  assert.is(value(text, 'http_request_duration_seconds_bucket', { method: 'GET', route: '/api/health', status: '200', le: '+Inf' }), 1);
  assert.match(text, '# TYPE http_request_duration_seconds histogram');
});

test('the in-flight gauge counts a request being handled (here: its body still arriving)', async () => {
  assert.is(value(await scrape(), 'http_requests_in_flight'), 0);
  const body = Buffer.from(JSON.stringify({ email: 'nobody@example.com', password: 'not the password' }));
  const connection = new RawConnection(server.port);
  try {
    await connection.write(Buffer.concat([head('POST', '/api/auth/login', { 'Content-Type': 'application/json', 'Content-Length': body.length }), body.subarray(0, 5)]));
    let inFlight = 0;
    for (let i = 0; i < 50 && inFlight === 0; i++) {
      inFlight = value(await scrape(), 'http_requests_in_flight');
      if (inFlight === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.is(inFlight, 1);
    await connection.write(body.subarray(5));
    assert.is((await connection.response()).status, 401);
  } finally {
    connection.close();
  }
  assert.is(value(await scrape(), 'http_requests_in_flight'), 0);
});

test('the database: pool gauges and query durations', async () => {
  assert.is((await request(server.url).get('/api/health')).status, 200);
  const text = await scrape();
  // Embedded: one connection; PostgreSQL: the pool's default ten.
  assert.is(value(text, 'db_pool_connections_max'), DATABASE_URL ? 10 : 1);
  for (const name of ['db_pool_connections_in_use', 'db_pool_connections_idle', 'db_pool_acquires_waiting']) {
    assert.is(samples(text, name).length, 1, name);
  }
  assert.is(value(text, 'db_pool_acquires_waiting'), 0);
  assert.ok(value(text, 'db_pool_connections_in_use') + value(text, 'db_pool_connections_idle') <= value(text, 'db_pool_connections_max'));
  assert.ok(value(text, 'db_query_duration_seconds_count') >= 1, 'the health probe queried the database');
});

test('rate-limit refusals are counted by the policy that refused', async () => {
  const login = () => request(server.url).post('/api/auth/login').send({ email: 'nobody@example.com', password: 'not the password' });
  let refused = 0;
  for (let i = 0; i < 10 && refused === 0; i++) if ((await login()).status === 429) refused++;
  assert.is(refused, 1, 'POST /api/auth/login allows 5 a minute');
  const text = await scrape();
  assert.is(value(text, 'rate_limit_refusals_total', { policy: 'POST /api/auth/login' }), 1);
  assert.is(value(text, 'http_requests_total', { method: 'POST', route: '/api/auth/login', status: '429' }), 1);
});

test('process metrics are exported', async () => {
  const text = await scrape();
  for (const name of ['process_cpu_user_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
    assert.is(samples(text, name).length, 1, name);
  }
});

test('METRICS_TOKEN: a scrape without it, or with another, is refused', async () => {
  const metrics = request(`http://127.0.0.1:${metricsPort}`);
  const without = await metrics.get('/metrics');
  assert.is(without.status, 401);
  assert.is(without.headers['www-authenticate'], 'Bearer');
  assert.not.match(without.text, 'http_requests_total');
  assert.is((await metrics.get('/metrics').set('Authorization', 'Bearer metrics-token-0123456789abcdeX')).status, 401);
  assert.is((await metrics.get('/metrics').set('Authorization', `Basic ${TOKEN}`)).status, 401);
  assert.is((await metrics.get('/other').set('Authorization', `Bearer ${TOKEN}`)).status, 404);
});

test('the API port serves no metrics', async () => {
  const api = request(server.url);
  for (const path of ['/metrics', '/api/metrics']) {
    const res = await api.get(path).set('Authorization', `Bearer ${TOKEN}`);
    assert.ok(res.status === 404 || res.status === 401, `${path}: ${res.status}`);
    assert.not.match(res.text, 'http_requests_total');
  }
});

test('the server listens on the API port and the metrics port, nothing else', () => {
  assert.equal(listeningPorts(server.child.pid!), [server.port, metricsPort].sort((a, b) => a - b));
});

test('METRICS_PORT unset: no metrics port, nothing counted', async () => {
  server.child.kill('SIGTERM');
  assert.is(await server.exited, 0);
  const plain = await startServer(database, cwd);
  try {
    assert.equal(listeningPorts(plain.child.pid!), [plain.port]);
    assert.not.ok(plain.logs.some((l) => l.msg === 'metrics listening'));
  } finally {
    assert.is(await plain.stop(), 0);
  }
});

test('a metrics port in use stops the start with one message naming METRICS_PORT', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const port = (taken.address() as { port: number }).port;
  try {
    const fatal = startupFailure(await runServerToExit({ ...database, METRICS_PORT: String(port) }, cwd));
    assert.is(fatal.msg, `METRICS_PORT ${port} on 127.0.0.1 is already in use: set METRICS_PORT to another port.`);
  } finally {
    taken.close();
  }
});

test('the OpenAPI document lists no metrics endpoint; an app without METRICS_PORT has no metrics', async () => {
  const withMetrics = await createTestApp({ env: { METRICS_PORT: '0' } });
  const without = await createTestApp();
  try {
    assert.ok(withMetrics.metrics, 'counted when METRICS_PORT is set');
    assert.is(without.metrics, undefined);
    assert.equal(Object.keys(withMetrics.openapi.paths as object).filter((p) => /metric/i.test(p)), []);
    assert.equal(withMetrics.openapi, without.openapi);
  } finally {
    await withMetrics.close();
    await without.close();
  }
});

test('settings: METRICS_PORT other than PORT; METRICS_HOST and METRICS_TOKEN only with it; a token long enough', () => {
  assert.is(loadConfig({ ...TEST_ENV }).metrics, undefined);
  assert.equal(loadConfig({ ...TEST_ENV, METRICS_PORT: '9464' }).metrics, { port: 9464, host: '127.0.0.1', token: undefined });
  assert.equal(loadConfig({ ...TEST_ENV, METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: TOKEN }).metrics, { port: 9464, host: '0.0.0.0', token: TOKEN });
  assert.throws(() => loadConfig({ ...TEST_ENV, PORT: '3000', METRICS_PORT: '3000' }), (err: Error) => err instanceof ConfigError && /METRICS_PORT must differ from PORT/.test(err.message));
  assert.throws(() => loadConfig({ ...TEST_ENV, METRICS_TOKEN: TOKEN }), (err: Error) => err instanceof ConfigError && /set METRICS_PORT too/.test(err.message));
  assert.throws(() => loadConfig({ ...TEST_ENV, METRICS_PORT: '9464', METRICS_TOKEN: 'short' }), (err: Error) => err instanceof ConfigError && /at least 16/.test(err.message));
});

pgTest('a cluster of two workers: the primary serves the sum of both workers', async () => {
  const cluster = await startServer({ DATABASE_URL, DATABASE_SCHEMA: `${schema}_cluster`, WEB_CONCURRENCY: '2', METRICS_PORT: '0' }, cwd);
  try {
    const port = (await cluster.waitForLog((l) => l.msg === 'metrics listening')).port;
    // node:cluster's primary holds the API port for its workers, and serves the metrics port itself.
    assert.equal(listeningPorts(cluster.child.pid!), [cluster.port, port].sort((a, b) => a - b));
    // A new connection each: node:cluster hands connections to the workers in turn.
    const agent = new Agent({ keepAlive: false });
    const id = randomUUID();
    const REQUESTS = 20;
    for (let i = 0; i < REQUESTS; i++) assert.is((await request(cluster.url).get(`/api/employee/${id}`).agent(agent)).status, 401);
    const text = await scrape(port, undefined);
    assert.is(value(text, 'http_requests_total', { method: 'GET', route: '/api/employee/:id', status: '401' }), REQUESTS);
    // Each worker's pool counts its own ten connections: two workers, twenty.
    assert.is(value(text, 'db_pool_connections_max'), 20);
    assert.is(samples(text, 'process_resident_memory_bytes').length, 1);
  } finally {
    assert.is(await cluster.stop(), 0);
  }
});

test.run();
