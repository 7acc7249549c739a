// `npm run bench`: the service against the fastest a Node server could be, side by side, in one
// run, on PostgreSQL (DATABASE_URL), at 10k and 1M employees.
//
// Per size: the schema bench_<size> is seeded once (reused while its marker matches; BENCH_RESEED=1
// forces a new one). The service runs behind a proxy that captures the SQL of each scenario; then
// the service (as `npm start` runs it) and the raw server (node:http + pg, replaying that SQL; see
// raw-server.ts) both run, with the same number of processes, and autocannon drives each scenario
// on both, in halves ordered service, raw, raw, service (see load.ts). At the largest size the CSV export of every employee is
// downloaded while the service's memory is sampled. Prints a table and the target checks, and
// writes bench/results.json and bench/results.svg.
//
// Settings: BENCH_SIZES (10k,1m), BENCH_DURATION (s, 10), BENCH_WARMUP (s, 2), BENCH_CONNECTIONS
// (32), BENCH_SCENARIOS (keys, all by default), BENCH_SHOW_SQL=1, BENCH_RESEED=1, BENCH_CPU_PROF,
// WEB_CONCURRENCY and REDIS_URL (passed to the service), BENCH_POOLER (below), BENCH_PEER (below).
//
// BENCH_POOLER measures the service as it runs behind a transaction pooler (DATABASE_POOLER=
// transaction), on the same direct connection, so the difference is the service's own cost:
// `statements`: no named prepared statements (the schema given as a connection option, as a
// role's default search_path would); `schema`: that, and DATABASE_SCHEMA set in every transaction.
// BENCH_POOLER_URL (a pooler in front of DATABASE_URL's database) adds the pooler's own hop.
//
// BENCH_PEER=directus measures Directus 11 too, on its counterpart of each scenario it has one of,
// as the last side of the same alternation: Directus installed, started and given its schema by
// the peer bench's setup.sh beforehand (DIRECTUS_HOME says where, as there); each size seeds it
// with as many employees in one organization (bench/peer/directus.ts).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureScenarios, type Capture } from './capture/capture.js';
import { describeReplay } from './capture/plan.js';
import { startCaptureProxy } from './capture/proxy.js';
import { measureEmbeddedDurability, printEmbeddedDurability } from './embedded-durability.js';
import { measureExport } from './export-memory.js';
import { startChild, type Child } from './lib/children.js';
import { namedConnection, settled } from './lib/pg-activity.js';
import { processTree, rssOf, toMB } from './lib/processes.js';
import { call } from './lib/http.js';
import { measureSides, type LoadFigures, type LoadSettings, type Side } from './load.js';
import { directusPeer, type Peer } from './peer/directus.js';
import { printResults, writeChart, type Results, type SizeResult } from './report.js';
import { deepCursorPath, deepSkipPath, scenarios, type DeepPage, type Scenario } from './scenarios.js';
import { disagreement } from './best-sql/agreement.js';
import { connect, dropSchema, rotationIds, seededTenant, seedPeople, signIn, signUp } from './seed.js';
import { distProblem, ENTRY } from '../scripts/dist.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  console.error('npm run bench measures on PostgreSQL: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/test). It seeds and uses the schemas bench_10k and bench_1m there.');
  process.exit(1);
}

// The service is measured compiled, as `npm start` runs it (dist/, plain node).
const distNotReady = distProblem();
if (distNotReady) {
  console.error(`npm run bench measures the compiled service, as npm start runs it: ${distNotReady}`);
  process.exit(1);
}

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SIZES: Record<string, number> = { '10k': 10_000, '100k': 100_000, '1m': 1_000_000 };
const sizes = (process.env.BENCH_SIZES ?? '10k,1m').split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
for (const size of sizes) if (!SIZES[size]) throw new Error(`BENCH_SIZES: unknown size "${size}" (use ${Object.keys(SIZES).join(', ')})`);
const settings: LoadSettings = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 32),
  durationSeconds: Number(process.env.BENCH_DURATION ?? 10),
  warmupSeconds: Number(process.env.BENCH_WARMUP ?? 2),
  rssSampleMs: 100,
};
/** BENCH_SCENARIOS: the keys of the scenarios to measure (all by default), e.g. get-by-id,patch. */
const only = process.env.BENCH_SCENARIOS?.split(',').map((s) => s.trim()).filter(Boolean);
const known = scenarios('', '').map((s) => s.key);
const unknown = (only ?? []).filter((key) => !known.includes(key));
if (unknown.length) {
  console.error(`BENCH_SCENARIOS: unknown scenario(s) ${unknown.join(', ')} (use ${known.join(', ')})`);
  process.exit(1);
}
/**
 * A run of some scenarios only writes its results to a temporary folder: bench/results.json and
 * the chart (quoted by bench/README.md) are those of a run of every scenario.
 */
const RESULTS_DIR = only ? mkdtempSync(path.join(tmpdir(), 'bench-results-')) : HERE;
// Made per run: the service runs as in production, which refuses placeholder secrets.
const JWT_SECRET = randomBytes(32).toString('hex');
const JWT_REFRESH_SECRET = randomBytes(32).toString('hex');
const RATE_LIMIT_SCALE = '100000';

/** BENCH_BEST_SQL=0 leaves the best-SQL yardstick out (a run a third shorter). */
const BEST_SQL = process.env.BENCH_BEST_SQL !== '0';
/** BENCH_PEER: the peer measured beside the service (only `directus` is known). */
const PEER = process.env.BENCH_PEER;
if (PEER && PEER !== 'directus') {
  console.error(`BENCH_PEER: unknown peer ${PEER} (use directus)`);
  process.exit(1);
}

const POOLER = process.env.BENCH_POOLER;
if (POOLER !== undefined && POOLER !== 'statements' && POOLER !== 'schema') {
  console.error(`BENCH_POOLER must be statements or schema, got "${POOLER}"`);
  process.exit(1);
}

/** DATABASE_URL, DATABASE_SCHEMA and DATABASE_POOLER of the measured service (BENCH_POOLER above). */
function measuredDatabase(url: string, schema: string): Record<string, string> {
  if (!POOLER) return { DATABASE_URL: url, DATABASE_SCHEMA: schema };
  const pooled = new URL(process.env.BENCH_POOLER_URL ? namedConnection(process.env.BENCH_POOLER_URL, 'service') : url);
  if (POOLER === 'schema') return { DATABASE_URL: pooled.toString(), DATABASE_SCHEMA: schema, DATABASE_POOLER: 'transaction' };
  pooled.searchParams.set('options', `-c search_path=${schema}`);
  return { DATABASE_URL: pooled.toString(), DATABASE_POOLER: 'transaction' };
}

/** The service as `npm start` runs it (compiled), rate limits on and scaled up so they never refuse the load. */
function startService(url: string, schema: string, database: Record<string, string> = { DATABASE_URL: url, DATABASE_SCHEMA: schema }): Promise<Child> {
  return startChild(ENTRY, {
    NODE_ENV: 'production',
    ...database,
    JWT_SECRET,
    JWT_REFRESH_SECRET,
    RATE_LIMITS: 'on',
    RATE_LIMIT_SCALE,
    RATE_LIMIT_PREFIX: `bench-${Date.now()}`,
    REDIS_URL: process.env.REDIS_URL,
    WEB_CONCURRENCY: process.env.WEB_CONCURRENCY,
    LOG_LEVEL: process.env.LOG_LEVEL,
  }, '/api/health');
}

/** Waits until a server's process count has not changed for a second (cluster workers starting). */
async function settledProcesses(pid: number): Promise<number[]> {
  let last = processTree(pid);
  let stableSince = Date.now();
  const deadline = Date.now() + 30_000;
  while (Date.now() - stableSince < 1000 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = processTree(pid);
    if (now.join() !== last.join()) stableSince = Date.now();
    last = now;
  }
  return last;
}

/** RSS per process; the first is the root (a cluster's primary when there are several). */
const idleMemory = (pids: number[]) => pids.map((pid, i) => ({ pid, role: pids.length === 1 ? 'single' : i === 0 ? 'primary' : 'worker', rssMB: toMB(rssOf(pid)) }));

interface Prepared {
  seeding: SizeResult['seeding'];
  organizationId: string;
  token: string;
  ids: string[];
  capture: Capture;
  deep: DeepPage;
}

/**
 * The cursor of the page halfway down the default list, as a client walking there would hold it:
 * the nextCursor of the page that ends at that position.
 */
async function deepPage(base: string, token: string, employees: number): Promise<DeepPage> {
  const position = Math.floor(employees / 2);
  const reply = await call(base, 'GET', deepSkipPath(position - 1, 1), undefined, token);
  const cursor = reply.json().nextCursor;
  if (reply.status !== 200 || typeof cursor !== 'string') throw new Error(`no cursor at position ${position}: ${reply.status} ${reply.text.slice(0, 300)}`);
  return { position, cursor };
}

/**
 * The capture phase: the service behind the SQL-reading proxy (its first start on a schema also
 * migrates it), the schema seeded unless a matching one is there, then each scenario captured.
 */
async function prepare(schema: string, employees: number): Promise<Prepared> {
  const target = new URL(databaseUrl!);
  const admin = await connect(databaseUrl!);
  const proxy = await startCaptureProxy(target.hostname, Number(target.port || 5432));
  let capturing: Child | undefined;
  try {
    let marker = process.env.BENCH_RESEED === '1' ? undefined : await seededTenant(admin, schema, employees);
    if (!marker) await dropSchema(admin, schema);
    try {
      capturing = await startService(namedConnection(proxy.url(databaseUrl!), 'capture'), schema);
    } catch (err) {
      if (!marker) throw err;
      // A seeded schema the current code cannot start on (e.g. a migration renamed since): seed anew.
      console.log(`the service does not start on the seeded schema, seeding it anew: ${(err as Error).message.split('\n').slice(0, 3).join(' ')}`);
      marker = undefined;
      await dropSchema(admin, schema);
      capturing = await startService(namedConnection(proxy.url(databaseUrl!), 'capture'), schema);
    }
    const db = await connect(databaseUrl!, schema);
    try {
      let seeding: SizeResult['seeding'];
      if (marker) {
        seeding = { reused: true, seconds: marker.seconds };
        console.log(`seeded data reused (seeding took ${marker.seconds.toFixed(0)} s when it was made; BENCH_RESEED=1 to redo it)`);
      } else {
        console.log('seeding:');
        const tenant = await signUp(capturing.url, schema);
        const seconds = await seedPeople(db, schema, tenant, employees);
        marker = { ...tenant, seconds };
        seeding = { reused: false, seconds };
        console.log(`seeded in ${seconds.toFixed(1)} s`);
      }
      const token = await signIn(capturing.url, marker.email);
      const ids = await rotationIds(db, marker.organizationId);
      const deep = await deepPage(capturing.url, token, employees);
      // Writes first: a list's statement holds its table's change mark as the capture saw it, and
      // the reads are measured before any write, so the raw server replays the mark the service
      // holds then (a write captured after a list would leave the replay counting on every request
      // while the service answers its kept total).
      const writesFirst = scenarios(marker.organizationId, ids[0], deep).sort((a, b) => Number(a.kind !== 'write') - Number(b.kind !== 'write'));
      const capture = await captureScenarios(proxy, capturing.url, writesFirst, token, ids);
      return { seeding, organizationId: marker.organizationId, token, ids, capture, deep };
    } finally {
      await db.end();
    }
  } finally {
    await capturing?.stop();
    await proxy.close();
    await admin.end();
  }
}

async function runSize(label: string, employees: number): Promise<SizeResult> {
  const schema = `bench_${label}`;
  console.log(`\n== ${label}: ${employees.toLocaleString('en')} employees in schema ${schema}`);
  const { seeding, organizationId, token, ids, capture, deep } = await prepare(schema, employees);
  for (const replay of capture.replays) {
    if (process.env.BENCH_SHOW_SQL === '1') console.log(`SQL of ${replay.key} (${replay.method} ${replay.path}):\n${describeReplay(replay)}`);
  }
  for (const [key, statements] of capture.late) console.log(`note: ${key}: the service ran ${statements.length} statement(s) after answering (not replayed): ${statements.map((s) => s.text).join(' | ')}`);
  const workDir = mkdtempSync(path.join(tmpdir(), 'bench-'));
  const replayFile = path.join(workDir, 'replay.json');
  writeFileSync(replayFile, JSON.stringify(capture.replays));
  const children: Child[] = [];
  const closers: Array<() => Promise<unknown>> = [];
  const monitor = await connect(databaseUrl!);
  let peer: Peer | undefined;
  const settle = async () => {
    // The peer's statements first: cancelled, not waited for (at 1M its lists run for seconds each).
    const cancelled = (await peer?.quiesce()) ?? 0;
    if (cancelled) console.log(`  (cancelled ${cancelled} statement(s) the peer still ran after its load)`);
    const seconds = await settled(monitor);
    if (seconds > 1) console.log(`  (waited ${seconds.toFixed(1)} s for PostgreSQL to finish the statements of the previous run)`);
  };
  try {
    // Measurement phase: both servers side by side, the raw one with as many processes as the service's workers.
    const service = await startService(namedConnection(databaseUrl!, 'service'), schema, measuredDatabase(namedConnection(databaseUrl!, 'service'), schema));
    children.push(service);
    const servicePids = await settledProcesses(service.pid);
    const raw = await startChild(path.join(HERE, 'raw-server.ts'), {
      DATABASE_URL: namedConnection(databaseUrl!, 'raw'),
      DATABASE_SCHEMA: schema,
      JWT_SECRET,
      RAW_PROCESSES: String(Math.max(1, servicePids.length - 1)),
      BENCH_REPLAY_FILE: replayFile,
    }, '/health');
    children.push(raw);
    const rawPids = await settledProcesses(raw.pid);
    let best: Child | undefined;
    let bestPids: number[] = [];
    if (BEST_SQL) {
      best = await startChild(path.join(HERE, 'best-sql', 'server.ts'), {
        DATABASE_URL: namedConnection(databaseUrl!, 'best'),
        DATABASE_SCHEMA: schema,
        JWT_SECRET,
        BEST_PROCESSES: String(Math.max(1, servicePids.length - 1)),
      }, '/health');
      children.push(best);
      bestPids = await settledProcesses(best.pid);
    }
    const memoryIdle = { service: idleMemory(servicePids), raw: idleMemory(rawPids), ...(best ? { bestSql: idleMemory(bestPids) } : {}) };
    console.log(`service:  ${servicePids.length} process(es), idle RSS ${memoryIdle.service.map((p) => `${p.role} ${p.rssMB} MB`).join(', ')}`);
    console.log(`raw:      ${rawPids.length} process(es), idle RSS ${memoryIdle.raw.map((p) => `${p.role} ${p.rssMB} MB`).join(', ')}`);
    if (memoryIdle.bestSql) console.log(`best SQL: ${bestPids.length} process(es), idle RSS ${memoryIdle.bestSql.map((p) => `${p.role} ${p.rssMB} MB`).join(', ')}`);
    // The scenario as the best-SQL server is asked it: its own cursor for the deep page (each server signs its own).
    const bestDeep = best ? await deepPage(best.url, token, employees) : undefined;
    if (PEER) {
      const opened = await directusPeer(employees);
      closers.push(() => opened.close());
      peer = opened;
    }
    const asBest = (scenario: Scenario): Scenario => (scenario.key === 'deep-cursor' && bestDeep ? { ...scenario, path: deepCursorPath(bestDeep.cursor) } : scenario);

    const results: SizeResult['scenarios'] = [];
    const all = scenarios(organizationId, ids[0], deep);
    for (const scenario of all.filter((s) => !only || only.includes(s.key))) {
      if (scenario.against) {
        // A feature's cost: the same service answering the request without the feature is the yardstick.
        const baseline = all.find((s) => s.key === scenario.against)!;
        const [withFeature, without] = await measureSides([{ server: service, scenario }, { server: service, scenario: baseline }], token, ids, settings, settle);
        const ratio = without.requestsPerSecond ? Math.round((withFeature.requestsPerSecond / without.requestsPerSecond) * 100) / 100 : 0;
        results.push({ key: scenario.key, label: scenario.label, kind: scenario.kind, against: baseline.key, service: withFeature, raw: without, ratio });
        console.log(`${scenario.label.padEnd(46)} service ${String(withFeature.requestsPerSecond).padStart(6)} req/s p99 ${withFeature.p99Ms} ms | without ${String(without.requestsPerSecond).padStart(6)} req/s p99 ${without.p99Ms} ms | ratio ${ratio.toFixed(2)}`);
        continue;
      }
      const failure = capture.failures.get(scenario.key);
      if (failure) {
        console.log(`${scenario.label}: NOT MEASURED: ${failure}`);
        results.push({ key: scenario.key, label: scenario.label, kind: scenario.kind, failure });
        continue;
      }
      // The best-SQL server is measured when it answers what the service answers (checked once, on an id outside the rotation's start).
      const bestFailure = best ? await disagreement(service.url, best.url, scenario, asBest(scenario), token, ids[ids.length - 1]).catch((err) => `no answer: ${err?.message ?? err}`) : undefined;
      if (bestFailure) console.log(`${scenario.label}: best-SQL server NOT MEASURED, its answer differs from the service's: ${bestFailure}`);
      const sides: Side[] = [{ server: service, scenario }, { server: raw, scenario }];
      if (best && !bestFailure) sides.push({ server: best, scenario: asBest(scenario) });
      const peerScenario = peer?.scenarioFor(scenario, deep);
      if (peer && peerScenario) sides.push({ server: peer.server, scenario: peerScenario, token: peer.token, ids: peer.ids });
      const figures = await measureSides(sides, token, ids, settings, settle);
      const [onService, onRaw] = figures;
      const onBest = best && !bestFailure ? figures[2] : undefined;
      const onPeer = peerScenario ? figures[figures.length - 1] : undefined;
      if (peer && scenario.kind === 'write') await peer.tidy();
      const ratioOf = (yardstick: LoadFigures) => (yardstick.requestsPerSecond ? Math.round((onService.requestsPerSecond / yardstick.requestsPerSecond) * 100) / 100 : 0);
      const ratio = ratioOf(onRaw);
      const replay = capture.replays.find((r) => r.key === scenario.key)!;
      results.push({
        key: scenario.key,
        label: scenario.label,
        kind: scenario.kind,
        reported: scenario.reported,
        service: onService,
        raw: onRaw,
        ratio,
        ...(onBest ? { bestSql: onBest, bestSqlRatio: ratioOf(onBest) } : {}),
        ...(bestFailure ? { bestSqlFailure: bestFailure } : {}),
        ...(onPeer ? { peer: onPeer, peerRatio: ratioOf(onPeer) } : {}),
        sql: replay.waves.flat().flatMap((u) => u.statements.map((s) => s.text)),
      });
      const failures = (name: string, f: LoadFigures) =>
        f.requests === 0 ? `  ${name}: NO REQUEST COMPLETED in ${settings.durationSeconds} s` : f.non2xx || f.errors ? `  ${name} FAILURES: ${f.non2xx} non-2xx ${JSON.stringify(f.unexpected)}, ${f.errors} errors` : '';
      console.log(
        `${scenario.label.padEnd(46)} service ${String(onService.requestsPerSecond).padStart(6)} req/s p99 ${onService.p99Ms} ms | raw ${String(onRaw.requestsPerSecond).padStart(6)} req/s p99 ${onRaw.p99Ms} ms | ratio ${ratio.toFixed(2)}` +
          (onBest ? ` | best SQL ${String(onBest.requestsPerSecond).padStart(6)} req/s p99 ${onBest.p99Ms} ms | ratio ${ratioOf(onBest).toFixed(2)}` : '') +
          (onPeer ? ` | ${peer!.name} ${String(onPeer.requestsPerSecond).padStart(6)} req/s p99 ${onPeer.p99Ms} ms | ${ratioOf(onPeer).toFixed(1)} times` : '') +
          ` | CPU µs/req ${onService.cpuUsPerRequest} / ${onRaw.cpuUsPerRequest}${onBest ? ` / ${onBest.cpuUsPerRequest}` : ''}` +
          failures('SERVICE', onService) + failures('RAW', onRaw) + (onBest ? failures('BEST SQL', onBest) : '') + (onPeer ? failures(peer!.name.toUpperCase(), onPeer) : ''),
      );
    }
    const largest = Math.max(...sizes.map((s) => SIZES[s]));
    let exported: SizeResult['export'];
    if (employees === largest && process.env.BENCH_EXPORT !== '0') {
      await settle();
      exported = await measureExport(service.url, service.pid, '/api/export/employee', token).catch((err) => ({ path: '/api/export/employee', failure: String(err?.message ?? err) }));
    }
    if (exported && 'failure' in exported) console.log(`export: FAILED: ${exported.failure}`);
    else if (exported) console.log(`export: ${exported.rows.toLocaleString('en')} rows, ${exported.megabytes} MB in ${exported.seconds} s; RSS of the process that grew most: ${exported.beforeMB} → ${exported.peakMB} MB (+${exported.growthMB} MB)`);
    return { label, employees, schema, seeding, serviceProcesses: servicePids.length, rawProcesses: rawPids.length, ...(best ? { bestSqlProcesses: bestPids.length } : {}), memoryIdle, scenarios: results, export: exported };
  } finally {
    for (const close of closers) await close();
    for (const child of children.reverse()) await child.stop();
    await monitor.end();
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** The sides of a scenario, there and back: the service first and last. */
function orderOfSides(): string {
  const sides = ['service', 'raw', ...(BEST_SQL ? ['best SQL'] : []), ...(PEER ? ['Directus'] : [])];
  return [...sides, ...[...sides].reverse()].join(', ');
}

const started = performance.now();
const admin = await connect(databaseUrl);
const postgres = (await admin.query('show server_version')).rows[0].server_version as string;
await admin.end();
const sizeResults: SizeResult[] = [];
for (const size of sizes) sizeResults.push(await runSize(size, SIZES[size]));
const results: Results = {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? '', node: process.version, postgres, platform: `${process.platform} ${process.arch}` },
  settings: {
    ...settings,
    order: `per scenario: each server warmed up, then halves of the duration in the order ${orderOfSides()}`,
    peer: PEER ? 'Directus' : undefined,
    webConcurrency: process.env.WEB_CONCURRENCY ?? 'service default',
    rateLimits: `on, scale ${RATE_LIMIT_SCALE}, ${process.env.REDIS_URL ? 'Redis store' : 'memory store'}`,
    pooler: POOLER ? `${POOLER}${process.env.BENCH_POOLER_URL ? ', through BENCH_POOLER_URL' : ', direct'}` : undefined,
  },
  sizes: sizeResults,
  // The cost of a durable commit on the embedded database (a whole run only).
  embeddedDurability: only ? undefined : await measureEmbeddedDurability(),
  seconds: Math.round((performance.now() - started) / 1000),
};
printResults(results);
if (results.embeddedDurability) printEmbeddedDurability(results.embeddedDurability);
writeFileSync(path.join(RESULTS_DIR, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
writeChart(path.join(RESULTS_DIR, 'results.svg'), results);
const where = RESULTS_DIR === HERE ? 'bench/' : `${RESULTS_DIR}/ (some scenarios only)`;
console.log(`\nwrote ${where}results.json and results.svg; the whole run took ${results.seconds} s`);
