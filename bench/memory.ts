// `npm run bench:memory`: the resident memory of the service's processes, run from the sources
// through tsx (`npm run dev`) and compiled (dist/, what `npm start` runs), side by side. Each is
// started on a fresh embedded database (or, with DATABASE_URL, a fresh schema of it, as a cluster
// of WEB_CONCURRENCY workers), left idle for BENCH_IDLE_S seconds (15: a quiet process gives its
// start-up heap back after 6, engine/process/quiet-heap.ts), then sent
// BENCH_REQUESTS (2000) GET /api/health and as many authenticated lists, 10 at a time, while
// every process's RSS is sampled every 100 ms. Prints per process: idle, peak under load, after.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild } from './lib/children.js';
import { call } from './lib/http.js';
import { cpuSecondsOf, processTree, rssOf, RssSampler, toMB } from './lib/processes.js';
import { connect, dropSchema, signIn, signUp } from './seed.js';
import { distProblem, ENTRY } from '../scripts/dist.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const IDLE_MS = Number(process.env.BENCH_IDLE_S ?? 15) * 1000;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000);
const CONCURRENCY = 10;
/** BENCH_NODE_FLAGS: node options given to both servers, to compare (V8's heap settings, say). */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);
const secret = () => randomBytes(32).toString('hex');

interface Row {
  how: string;
  role: string;
  idleMB: number;
  peakMB: number;
  afterMB: number;
  /** CPU time of all the server's processes during the load, per request. */
  cpuUsPerRequest: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function load(url: string, path: string, token?: string) {
  let sent = 0;
  const worker = async () => {
    while (sent < REQUESTS) {
      sent++;
      const { status } = await call(url, 'GET', path, undefined, token);
      if (status !== 200) throw new Error(`GET ${path}: ${status}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function measure(how: string, script: string): Promise<Row[]> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-memory-'));
  const schema = `bench_memory_${Date.now()}`;
  const database = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir };
  const child = await startChild(script, {
    NODE_ENV: 'production',
    JWT_SECRET: secret(),
    JWT_REFRESH_SECRET: secret(),
    RATE_LIMITS: 'off',
    LOG_LEVEL: 'warn',
    WEB_CONCURRENCY: process.env.WEB_CONCURRENCY,
    ...database,
  }, '/api/health', NODE_FLAGS);
  try {
    // Idle: started and left alone, before any request (a sign-in's argon2 hash alone keeps
    // about 20 MB of native memory in the worker that ran it; that shows in the later columns).
    await sleep(IDLE_MS);
    const pids = processTree(child.pid);
    const idle = new Map(pids.map((pid) => [pid, rssOf(pid)]));
    const tenant = await signUp(child.url, 'memory');
    const token = await signIn(child.url, tenant.email);
    const sampler = new RssSampler(child.pid, 100);
    const cpuBefore = cpuSecondsOf(child.pid);
    await load(child.url, '/api/health');
    await load(child.url, `/api/organization?take=10`, token);
    const cpuUsPerRequest = Math.round(((cpuSecondsOf(child.pid) - cpuBefore) * 1e6) / (2 * REQUESTS));
    sampler.stop();
    await sleep(1000);
    const peak = new Map(sampler.report().map((p) => [p.pid, p.peakMB]));
    return pids.map((pid, i) => ({
      how,
      role: pids.length === 1 ? 'single' : i === 0 ? 'primary' : 'worker',
      idleMB: toMB(idle.get(pid)!),
      peakMB: peak.get(pid) ?? 0,
      afterMB: toMB(rssOf(pid)),
      cpuUsPerRequest,
    }));
  } finally {
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
    if (process.env.DATABASE_URL) {
      const db = await connect(process.env.DATABASE_URL);
      await dropSchema(db, schema).finally(() => db.end());
    }
  }
}

/** BENCH_RUN: which servers, `source,compiled` by default. */
const RUN = (process.env.BENCH_RUN ?? 'source,compiled').split(',');
const rows: Row[] = [];
if (RUN.includes('source')) rows.push(...(await measure('source (tsx)', path.join(ROOT, 'app/start.ts'))));
const problem = distProblem();
if (!RUN.includes('compiled')) {
  // not asked for
} else if (problem) console.log(`compiled: not measured. ${problem}`);
else rows.push(...(await measure('compiled (dist)', ENTRY)));

console.log(`${process.env.DATABASE_URL ? 'PostgreSQL' : 'embedded database'}; idle ${IDLE_MS / 1000} s, then ${REQUESTS} GET /api/health and ${REQUESTS} GET /api/organization, ${CONCURRENCY} at a time; RSS in MB`);
console.log(`node flags: ${NODE_FLAGS.join(' ') || 'none'}; CPU µs per request: of all the processes together`);
console.log('| how | process | idle | peak under load | after load | CPU µs per request |');
console.log('|---|---|---|---|---|---|');
for (const r of rows) console.log(`| ${r.how} | ${r.role} | ${r.idleMB} | ${r.peakMB} | ${r.afterMB} | ${r.cpuUsPerRequest} |`);
