// `npm run bench:middleware`: what each Koa middleware of the service costs a request. One
// process of the compiled service per variant (WEB_CONCURRENCY, 1 by default), each with one middleware
// replaced by a pass-through (middleware-cost-server.ts), measured beside the whole service in
// alternating halves (load.ts); then one with every optional middleware out at once. A variant
// whose answers change status is reported as needed, not measured. Prints req/s and the server
// process's CPU per request, and each variant's CPU saved against the whole service of its group.
//
// Uses the schema bench_10k of `npm run bench` (seeded here when absent). Settings: DATABASE_URL
// (required), BENCH_SCENARIO (get-by-id; a key of scenarios.ts), BENCH_DURATION (s, 6),
// BENCH_WARMUP (s, 2), BENCH_CONNECTIONS (16), BENCH_GROUP (variants per group, 4).
import { mkdtempSync, readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, type Child } from './lib/children.js';
import { call } from './lib/http.js';
import { namedConnection, settled } from './lib/pg-activity.js';
import { measureSides, type LoadSettings } from './load.js';
import { scenarios, type Scenario } from './scenarios.js';
import { connect, dropSchema, rotationIds, seededTenant, seedPeople, signIn, signUp } from './seed.js';
import { distProblem } from '../scripts/dist.js';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) throw new Error('DATABASE_URL is required (PostgreSQL)');
const distNotReady = distProblem();
if (distNotReady) throw new Error(`the compiled service is measured: ${distNotReady}`);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SCHEMA = 'bench_10k';
const EMPLOYEES = 10_000;
/** The router and what makes the answer: without them there is no answer to measure. */
const ALWAYS = new Set(['dispatch', 'methodNotAllowed']);
const settings: LoadSettings = {
  connections: Number(process.env.BENCH_CONNECTIONS ?? 16),
  durationSeconds: Number(process.env.BENCH_DURATION ?? 6),
  warmupSeconds: Number(process.env.BENCH_WARMUP ?? 2),
  rssSampleMs: 500,
};
const GROUP = Number(process.env.BENCH_GROUP ?? 4);
const secrets = { JWT_SECRET: randomBytes(32).toString('hex'), JWT_REFRESH_SECRET: randomBytes(32).toString('hex') };

/** A variant that does not answer its health check within this never will (its routing is out). */
const VARIANT_START_MS = 30_000;

function startVariant(skip: number[], namesFile?: string): Promise<Child> {
  return startChild(path.join(HERE, 'middleware-cost-server.ts'), {
    NODE_ENV: 'production',
    DATABASE_URL: namedConnection(databaseUrl!, 'middleware'),
    DATABASE_SCHEMA: SCHEMA,
    ...secrets,
    WEB_CONCURRENCY: process.env.WEB_CONCURRENCY ?? '1',
    RATE_LIMITS: 'on',
    RATE_LIMIT_SCALE: '100000',
    REDIS_URL: process.env.REDIS_URL,
    MIDDLEWARE_SKIP: skip.join(','),
    MIDDLEWARE_NAMES_FILE: namesFile,
  }, '/api/health', [], VARIANT_START_MS);
}

interface Variant {
  label: string;
  skip: number[];
}

async function main() {
  const scenarioKey = process.env.BENCH_SCENARIO ?? 'get-by-id';
  const namesFile = path.join(mkdtempSync(path.join(tmpdir(), 'middleware-')), 'names.json');
  const admin = await connect(databaseUrl!);
  let marker = await seededTenant(admin, SCHEMA, EMPLOYEES);
  if (!marker) await dropSchema(admin, SCHEMA);
  // The whole service: it migrates the schema, seeds it when needed, and names the stack.
  const whole = await startVariant([], namesFile);
  const children: Child[] = [whole];
  const monitor = await connect(databaseUrl!);
  try {
    if (!marker) {
      const db = await connect(databaseUrl!, SCHEMA);
      const tenant = await signUp(whole.url, SCHEMA);
      marker = { ...tenant, seconds: await seedPeople(db, SCHEMA, tenant, EMPLOYEES) };
      await db.end();
    }
    const token = await signIn(whole.url, marker.email);
    const db = await connect(databaseUrl!, SCHEMA);
    const ids = await rotationIds(db, marker.organizationId);
    await db.end();
    const scenario = scenarios(marker.organizationId, ids[0], { position: 1, cursor: '' }).find((s) => s.key === scenarioKey);
    if (!scenario || scenario.key.startsWith('deep')) throw new Error(`BENCH_SCENARIO: ${scenarioKey} is not measured here`);
    const names: string[] = JSON.parse(readFileSync(namesFile, 'utf8'));
    console.log(`${scenario.label}: ${names.length} middleware, outermost first: ${names.join(', ')}`);

    // One variant per middleware the answer does not need, checked by one request each.
    const variants: Variant[] = [];
    const needed: string[] = [];
    for (const [position, name] of names.entries()) {
      if (ALWAYS.has(name)) continue;
      const child = await startVariant([position]).catch(() => undefined);
      const status = child ? await answerStatus(child.url, scenario, token, ids[0]) : 'no health answer';
      await child?.stop();
      if (status === scenario.status) variants.push({ label: `without ${name}`, skip: [position] });
      else needed.push(`${name} (${status} without it)`);
    }
    if (needed.length) console.log(`needed by the answer, not measured: ${needed.join(', ')}`);
    variants.push({ label: 'without all of the above', skip: variants.flatMap((v) => v.skip) });

    const settle = () => settled(monitor);
    const rows: string[] = [];
    for (let i = 0; i < variants.length; i += GROUP) {
      const group = variants.slice(i, i + GROUP);
      const servers = await Promise.all(group.map((v) => startVariant(v.skip)));
      children.push(...servers);
      const sides = [whole, ...servers].map((server) => ({ server, scenario }));
      const figures = await measureSides(sides, token, ids, settings, settle);
      const base = figures[0];
      rows.push(`| whole service (group ${i / GROUP + 1}) | ${base.requestsPerSecond} | ${base.cpuUsPerRequest} | |`);
      for (const [j, variant] of group.entries()) {
        const f = figures[j + 1];
        const bad = f.errors || Object.keys(f.unexpected).length ? ` (errors ${f.errors}, unexpected ${JSON.stringify(f.unexpected)})` : '';
        rows.push(`| ${variant.label}${bad} | ${f.requestsPerSecond} | ${f.cpuUsPerRequest} | ${base.cpuUsPerRequest - f.cpuUsPerRequest} |`);
      }
      for (const server of servers) await server.stop();
      children.splice(1);
    }
    console.log(`\n| variant | req/s | CPU µs / request | CPU saved |\n|---|---|---|---|\n${rows.join('\n')}`);
  } finally {
    for (const child of children) await child.stop();
    await monitor.end();
    await admin.end();
  }
}

async function answerStatus(url: string, scenario: Scenario, token: string, id: string): Promise<number> {
  const reply = await call(url, scenario.method, scenario.path.replace('{id}', id), scenario.body, token);
  return reply.status;
}

await main();
