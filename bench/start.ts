// `npm run bench:start`: how long the compiled service takes to start and how much memory it holds
// once it listens, as `npm start` runs it (`node scripts/start.js`). Each run starts it on a new
// data folder (a first start: the embedded database created and migrated), stops it, and starts it
// again on that folder (a later start). Measured: the time from the spawn to the `listening` line,
// the CPU time its processes used until then (a busy machine moves it far less than the time),
// that line's rssMiB (the serving process at listen), and the largest RSS of any one process of
// the start and of all of them together (read from /proc every 20 ms). The log lines' timing
// fields say where a first start's time went. Then, in this process, the migrations are applied
// one by one to a new data folder with the service's PGlite settings, to show which of them cost.
// Temporary folders only, removed after.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrationsOneByOne } from './lib/migration-times.js';
import { cpuSecondsWithEndedChildren, processTree, rssOf, toMB } from './lib/processes.js';
import { call } from './lib/http.js';
import { distProblem } from '../scripts/dist.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Number(process.env.BENCH_START_RUNS ?? 5);
/** `0` leaves out the migrations one by one (an initdb and the migrations per pass). */
const MIGRATION_RUNS = Number(process.env.BENCH_START_MIGRATION_RUNS ?? 3);
/** A guard against a hung start, not a measure. */
const START_LIMIT_MS = 120_000;

type Line = Record<string, any>;

interface Start {
  /** Spawn to the `listening` line, ms. */
  ms: number;
  lines: Line[];
  listening: Line;
  /** The largest RSS one process of the start reached before listening, MiB. */
  peakMiB: number;
  /** The largest RSS of all its processes together, MiB. */
  peakTotalMiB: number;
  /** CPU time its processes used until it listened (a prepared child's included), s: a machine busy with other work moves it far less than the time. */
  cpuSeconds: number;
}

const secret = () => randomBytes(32).toString('hex');

/**
 * The service running now and the temporary folder of this run: never left behind, Ctrl-C
 * included. The service runs in a process group of its own, killed whole: its preparing child too.
 */
let running: ChildProcess | undefined;
let work: string | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    try {
      if (running?.pid) process.kill(-running.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    if (work) rmSync(work, { recursive: true, force: true });
    process.exit(130);
  });
}

/** Starts the compiled service on `dataDir`, reads its log until `listening`, checks it answers, and stops it (exit code 0). */
async function startOnce(dataDir: string): Promise<Start> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    NODE_ENV: 'production',
    JWT_SECRET: secret(),
    JWT_REFRESH_SECRET: secret(),
    LOG_LEVEL: 'info',
  };
  const began = performance.now();
  const child = spawn(process.execPath, ['scripts/start.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running = child;
  let peak = 0;
  let peakTotal = 0;
  const sampler = setInterval(() => {
    const sizes = processTree(child.pid!).map(rssOf);
    peak = Math.max(peak, ...sizes);
    peakTotal = Math.max(peakTotal, sizes.reduce((a, b) => a + b, 0));
  }, 20);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines: Line[] = [];
  let cpu = NaN;
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    const listening = await new Promise<{ line: Line; at: number }>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`no listening line within ${START_LIMIT_MS} ms\n${stderr}`)), START_LIMIT_MS);
      let pending = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        const at = performance.now();
        const parts = (pending + chunk.toString()).split('\n');
        pending = parts.pop()!;
        for (const text of parts) {
          let line: Line;
          try {
            line = JSON.parse(text);
          } catch {
            continue;
          }
          lines.push(line);
          if (line.msg === 'listening') {
            clearTimeout(guard);
            // Its own CPU and its ended children's: the preparing child has ended by now.
            cpu = cpuSecondsWithEndedChildren(child.pid!);
            resolve({ line, at });
          }
        }
      });
      child.once('exit', (code) => {
        clearTimeout(guard);
        reject(new Error(`the service exited with code ${code} before listening\n${stderr}`));
      });
    });
    clearInterval(sampler);
    const health = await call(`http://127.0.0.1:${listening.line.port}`, 'GET', '/api/health');
    if (health.status !== 200) throw new Error(`GET /api/health: ${health.status} ${health.text}`);
    return { ms: listening.at - began, lines, listening: listening.line, peakMiB: toMB(peak), peakTotalMiB: toMB(peakTotal), cpuSeconds: cpu };
  } finally {
    clearInterval(sampler);
    child.kill('SIGTERM');
    const code = await exited;
    running = undefined;
    if (code !== 0) throw new Error(`the service exited with code ${code} on SIGTERM\n${stderr}`);
  }
}

/** median [min–max] of the values, rounded to `digits` decimals. */
function spread(values: number[], digits = 0): string {
  const known = values.filter((v) => Number.isFinite(v));
  if (!known.length) return '–';
  const sorted = [...known].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const median = sorted.length % 2 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
  const f = (v: number) => v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return `${f(median)} [${f(sorted[0])}–${f(sorted[sorted.length - 1])}]`;
}

const lineOf = (start: Start, msg: string) => start.lines.find((l) => l.msg === msg);
const num = (value: unknown) => (typeof value === 'number' ? value : NaN);

const problem = distProblem();
if (problem) {
  console.error(`bench:start: ${problem}`);
  process.exit(1);
}

const firsts: Start[] = [];
const laters: Start[] = [];
for (let run = 1; run <= RUNS; run++) {
  work = mkdtempSync(path.join(tmpdir(), 'bench-start-'));
  try {
    const dataDir = path.join(work, 'data');
    const first = await startOnce(dataDir);
    const later = await startOnce(dataDir);
    firsts.push(first);
    laters.push(later);
    const said = (s: Start) => `${Math.round(s.ms)} ms (CPU ${s.cpuSeconds.toFixed(2)} s), ${s.listening.rssMiB} MiB at listen (peak ${s.peakMiB}, together ${s.peakTotalMiB})`;
    console.log(`run ${run}: first start ${said(first)}; later start ${said(later)}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    work = undefined;
  }
}

const [load1, load5] = loadavg();
console.log(`\n${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), Node ${process.version}, load average ${load1.toFixed(2)} / ${load5.toFixed(2)}; ${RUNS} runs, median [min–max]`);
console.log('| start | to `listening`, s | CPU until then, s | RSS at listen, MiB | largest RSS of a process, MiB | of all together, MiB |');
console.log('|---|---|---|---|---|---|');
for (const [name, starts] of [['first (new data folder)', firsts], ['later (same folder)', laters]] as const) {
  console.log(`| ${name} | ${spread(starts.map((s) => s.ms / 1000), 2)} | ${spread(starts.map((s) => s.cpuSeconds), 2)} | ${spread(starts.map((s) => num(s.listening.rssMiB)))} | ${spread(starts.map((s) => s.peakMiB))} | ${spread(starts.map((s) => s.peakTotalMiB))} |`);
}

// Where a first start's time goes, from its log lines' timing fields (ms).
const created = (s: Start) => lineOf(s, 'embedded database created');
const prepared = (s: Start) => lineOf(s, 'database prepared');
const serving = (s: Start) => s.listening.startupMs ?? {};
const rows: Array<[string, (s: Start) => number]> = [
  ['embedded database created (PGlite initdb), in the process that created it', (s) => num(created(s)?.durationMs)],
  ['migrations applied', (s) => num(lineOf(s, 'migrations applied')?.durationMs)],
  ['preparing child, from its start to its end (`database prepared`)', (s) => num(prepared(s)?.startedInMs)],
  ['preparing child, RSS at its end (MiB)', (s) => num(prepared(s)?.rssMiB)],
  ['serving process: from its start to opening the database (`startupMs.load`: Node, the code, and on a first start the wait for the child)', (s) => num(serving(s).load)],
  ['serving process: opening the database (`startupMs.database`)', (s) => num(serving(s).database)],
  ['serving process: building the app (`startupMs.app`)', (s) => num(serving(s).app)],
  ['serving process: migrations (`startupMs.migrations`)', (s) => num(serving(s).migrations)],
  ['serving process: ready and listening (`startupMs.listen`)', (s) => num(serving(s).listen)],
  ['serving process: its start to `listening` (`startedInMs`)', (s) => num(s.listening.startedInMs)],
  ['spawn to `listening`, seen by this process', (s) => s.ms],
];
console.log('\n| first start, ms | median [min–max] |\n|---|---|');
for (const [name, read] of rows) console.log(`| ${name} | ${spread(firsts.map(read))} |`);
console.log('\n| later start, ms | median [min–max] |\n|---|---|');
for (const [name, read] of rows.slice(4)) console.log(`| ${name} | ${spread(laters.map(read))} |`);

if (MIGRATION_RUNS > 0) {
  const passes: Array<Map<string, number>> = [];
  for (let pass = 0; pass < MIGRATION_RUNS; pass++) passes.push(await migrationsOneByOne());
  const names = [...passes[0].keys()];
  const totals = passes.map((p) => [...p.values()].reduce((a, b) => a + b, 0));
  console.log(`\nMigrations one by one on a new data folder (this process, the service's PGlite settings), ${MIGRATION_RUNS} passes, ms`);
  console.log('| migration | median [min–max] |\n|---|---|');
  for (const name of names) console.log(`| ${name} | ${spread(passes.map((p) => p.get(name)!))} |`);
  console.log(`| all | ${spread(totals)} |`);
}
