// `npm run bench:export`: the export's memory stays flat whatever the row count. The real server
// runs in its own process (on a fresh embedded database, or with DATABASE_URL in a fresh
// PostgreSQL schema); one tenant gets BENCH_EXPORT_ROWS tags (1,000,000 by default) from one
// INSERT … SELECT generate_series, then this process downloads GET /api/export/tag as CSV and as
// JSON and the whole zip, reading as fast as it can, while it samples the server's resident
// memory (VmRSS in /proc/<pid>/status) every 50 ms. Prints rows, bytes, seconds, and RSS before,
// at its peak and the growth, per download. A measurement, not a test: nothing is asserted.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knex, { type Knex } from 'knex';
import { openDatabase } from '../engine/db.js';
import { startServer, type ServerProcess } from '../test/helpers/server-process.js';

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);
const PASSWORD = 'Str0ng!Passw0rd';
const SAMPLE_MS = 50;
const MB = 1024 * 1024;

function call(base: string, method: string, url: string, body?: unknown, token?: string): Promise<any> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(`${base}${url}`, {
      method,
      headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => (res.statusCode! < 300 ? resolve(text ? JSON.parse(text) : undefined) : reject(new Error(`${method} ${url}: ${res.statusCode} ${text}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A tenant with its owner's token and one organization, made over HTTP like any client's. */
async function signUp(base: string) {
  const email = `bench-export-${Date.now()}@example.com`;
  const user = await call(base, 'POST', '/api/auth/register', { user: { firstName: 'Bench', lastName: 'Owner', email }, password: PASSWORD });
  const { token } = await call(base, 'POST', '/api/auth/login', { email, password: PASSWORD });
  const organization = await call(base, 'POST', '/api/organization', { name: 'Bench', currency: 'EUR' }, token);
  return { token, tenantId: user.tenantId as string, organizationId: organization.id as string };
}

/** The rows, in one statement: names unique within the organization, as tag.yaml requires. */
async function seedTags(db: Knex, tenantId: string, organizationId: string) {
  await db.raw(
    `insert into tag ("tenantId", "organizationId", name, color, description)
     select ?, ?, 'tag-' || n, 'red', 'Tag number ' || n || ', seeded for the export benchmark' from generate_series(1, ?) as n`,
    [tenantId, organizationId, ROWS],
  );
  // Statistics, as autovacuum would gather them after such a write: without them the planner
  // guesses the tenant has a few rows and sorts all of them for every batch.
  await db.raw('analyze tag');
}

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;

/** Downloads a path, counting bytes and records (a line of CSV, an object of the JSON array). */
function download(base: string, url: string, token: string, record: Buffer | undefined): Promise<{ bytes: number; records: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${url}`, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}`));
      let bytes = 0;
      let records = 0;
      let tail = Buffer.alloc(0);
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        if (!record) return;
        // A marker may straddle two chunks: search the end of the previous one too.
        const window = Buffer.concat([tail, chunk]);
        for (let at = window.indexOf(record); at !== -1; at = window.indexOf(record, at + record.length)) if (at + record.length > tail.length) records++;
        tail = window.subarray(Math.max(0, window.length - record.length + 1));
      });
      res.on('end', () => (res.complete ? resolve({ bytes, records }) : reject(new Error(`GET ${url}: the transfer was cut off`))));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function measure(server: ServerProcess, label: string, url: string, token: string, record?: string, headerRecords = 0) {
  const pid = server.child.pid!;
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), SAMPLE_MS);
  const started = performance.now();
  try {
    const { bytes, records } = await download(server.url, url, token, record === undefined ? undefined : Buffer.from(record));
    const seconds = (performance.now() - started) / 1000;
    peak = Math.max(peak, rssOf(pid));
    const rows = record === undefined ? '' : `${(records - headerRecords).toLocaleString('en')} rows, `;
    console.log(
      `${label.padEnd(30)} ${rows}${(bytes / MB).toFixed(1)} MB in ${seconds.toFixed(1)} s   ` +
        `RSS before ${(before / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB, growth ${((peak - before) / MB).toFixed(0)} MB`,
    );
  } finally {
    clearInterval(sampler);
  }
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-export-'));
const schema = `bench_export_${Date.now()}`;
const url = process.env.DATABASE_URL;
const database = url ? { DATABASE_URL: url, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir };
// Three downloads in a row: more than the five-minute export limit would let one caller ask in a test run.
const env = { ...database, RATE_LIMITS: 'off' };

let server = await startServer(env);
try {
  const { token, tenantId, organizationId } = await signUp(server.url);
  const seeding = performance.now();
  if (url) {
    const db = knex({ client: 'pg', connection: url, searchPath: [schema] });
    await seedTags(db, tenantId, organizationId).finally(() => db.destroy());
  } else {
    // The embedded database is one process's at a time: stop the server to write, then start it again.
    await server.stop();
    const embedded = await openDatabase({ dataDir });
    await seedTags(embedded.knex, tenantId, organizationId).finally(() => embedded.close());
    server = await startServer(env);
  }
  console.log(`${url ? 'PostgreSQL' : 'embedded PGlite'}: ${ROWS.toLocaleString('en')} tags seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s; RSS sampled every ${SAMPLE_MS} ms`);
  await measure(server, 'GET /api/export/tag (csv)', '/api/export/tag', token, '\r\n', 1);
  await measure(server, 'GET /api/export/tag?format=json', '/api/export/tag?format=json', token, '{"id":');
  await measure(server, 'GET /api/export (zip)', '/api/export', token);
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
  if (url) {
    const db = knex({ client: 'pg', connection: url });
    await db.raw('drop schema if exists ?? cascade', [schema]).finally(() => db.destroy());
  }
}
