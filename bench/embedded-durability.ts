// What a durable commit costs on the embedded database: creates per second through the service
// (`npm start` on a fresh data folder, POST /api/tags) with EMBEDDED_DURABILITY=full (every commit
// synced to disk) and relaxed (PGlite's own: nothing synced). `npm run bench` prints it after the
// PostgreSQL scenarios; `npm run bench:embedded` runs it alone.
//
// Both servers run side by side; the load alternates full, relaxed, relaxed, full (halves of
// BENCH_EMBEDDED_DURATION each), so a machine that gets busier or quieter during the run weighs on
// both alike. BENCH_EMBEDDED_CONNECTIONS requests are kept in flight (the embedded database is
// one connection: more only queue).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, type Child } from './lib/children.js';
import { call, ok } from './lib/http.js';
import { PASSWORD } from './seed.js';

const SERVER = fileURLToPath(new URL('../app/start.ts', import.meta.url));
const DURABILITIES = ['full', 'relaxed'] as const;
type Durability = (typeof DURABILITIES)[number];

export interface EmbeddedDurabilityResult {
  connections: number;
  seconds: number;
  /** Successful creates per second, per EMBEDDED_DURABILITY. */
  createsPerSecond: Record<Durability, number>;
  /** full / relaxed. */
  ratio: number;
}

interface Target {
  child: Child;
  token: string;
  organizationId: string;
}

async function prepare(child: Child): Promise<Target> {
  const email = `owner-${Date.now()}-${child.pid}@bench.example.com`;
  await ok(child.url, 'POST', '/api/auth/register', { user: { firstName: 'Bench', lastName: 'Owner', email }, password: PASSWORD });
  const { token } = await ok(child.url, 'POST', '/api/auth/login', { email, password: PASSWORD });
  const organization = await ok(child.url, 'POST', '/api/organization', { name: 'Bench Corp', currency: 'EUR' }, token);
  return { child, token, organizationId: organization.id };
}

let tagNumber = 0;

/** Creates for `ms`, `connections` at a time; answers how many succeeded. */
async function load(target: Target, ms: number, connections: number): Promise<number> {
  const end = performance.now() + ms;
  let created = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < end) {
        const body = { name: `tag-${target.child.pid}-${(tagNumber += 1)}`, color: '#336699', organizationId: target.organizationId };
        const reply = await call(target.child.url, 'POST', '/api/tags', body, target.token);
        if (reply.status !== 201) throw new Error(`POST /api/tags: ${reply.status} ${reply.text.slice(0, 300)}`);
        created += 1;
      }
    }),
  );
  return created;
}

export async function measureEmbeddedDurability(options: { seconds?: number; connections?: number } = {}): Promise<EmbeddedDurabilityResult> {
  const seconds = options.seconds ?? Number(process.env.BENCH_EMBEDDED_DURATION ?? 10);
  const connections = options.connections ?? Number(process.env.BENCH_EMBEDDED_CONNECTIONS ?? 8);
  const workDir = mkdtempSync(path.join(tmpdir(), 'bench-embedded-'));
  const children: Child[] = [];
  try {
    const targets = {} as Record<Durability, Target>;
    for (const durability of DURABILITIES) {
      const child = await startChild(
        SERVER,
        { DATA_DIR: path.join(workDir, durability), EMBEDDED_DURABILITY: durability, RATE_LIMITS: 'off', LOG_LEVEL: 'warn' },
        '/api/health',
      );
      children.push(child);
      targets[durability] = await prepare(child);
      await load(targets[durability], 1000, connections); // warm-up
    }
    const created: Record<Durability, number> = { full: 0, relaxed: 0 };
    const half = (seconds * 1000) / 2;
    for (const durability of ['full', 'relaxed', 'relaxed', 'full'] as const) created[durability] += await load(targets[durability], half, connections);
    const createsPerSecond = { full: Math.round(created.full / seconds), relaxed: Math.round(created.relaxed / seconds) };
    return { connections, seconds, createsPerSecond, ratio: Math.round((createsPerSecond.full / createsPerSecond.relaxed) * 100) / 100 };
  } finally {
    for (const child of children) await child.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

export function printEmbeddedDurability(result: EmbeddedDurabilityResult) {
  console.log(`\nEmbedded database, POST /api/tags, ${result.connections} in flight, ${result.seconds} s per setting:`);
  console.log(`  EMBEDDED_DURABILITY=full     ${String(result.createsPerSecond.full).padStart(6)} creates/s (every commit synced to disk)`);
  console.log(`  EMBEDDED_DURABILITY=relaxed  ${String(result.createsPerSecond.relaxed).padStart(6)} creates/s (nothing synced: survives a killed process, not an OS crash)`);
  console.log(`  full is ${Math.round(result.ratio * 100)}% of relaxed`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  printEmbeddedDurability(await measureEmbeddedDurability());
}
