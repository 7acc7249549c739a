// `npm run bench:export`: the export's memory stays flat whatever the row count. The real server
// runs in its own process (on a fresh embedded database, or with DATABASE_URL in a fresh
// PostgreSQL schema); one tenant gets BENCH_EXPORT_ROWS tags (1,000,000 by default) from one
// INSERT … SELECT generate_series, then this process downloads GET /api/export/tag as CSV and as
// JSON and the whole zip, reading as fast as it can, while it samples the server's resident
// memory (VmRSS in /proc/<pid>/status) every 50 ms. Prints rows, bytes, seconds, and RSS before,
// at its peak and the growth, per download. A measurement, not a test: nothing is asserted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knex, { type Knex } from 'knex';
import { openDatabase } from '../engine/db/database.js';
import { startServer, type ServerProcess } from '../test/helpers/server-process.js';
import { measureExport } from './export-memory.js';
import { signIn, signUp } from './seed.js';

const ROWS = Number(process.env.BENCH_EXPORT_ROWS ?? 1_000_000);

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

async function measure(server: ServerProcess, label: string, url: string, token: string, record?: string, headerRecords = 0) {
  const figures = await measureExport(server.url, server.child.pid!, url, token, record, headerRecords);
  const rows = record === undefined ? '' : `${figures.rows.toLocaleString('en')} rows, `;
  console.log(`${label.padEnd(30)} ${rows}${figures.megabytes} MB in ${figures.seconds} s   RSS before ${figures.beforeMB} MB, peak ${figures.peakMB} MB, growth ${figures.growthMB} MB`);
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'bench-export-'));
const schema = `bench_export_${Date.now()}`;
const url = process.env.DATABASE_URL;
const database = url ? { DATABASE_URL: url, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir };
// Three downloads in a row: more than the five-minute export limit would let one caller ask in a test run.
const env = { ...database, RATE_LIMITS: 'off' };

let server = await startServer(env);
try {
  const { tenantId, organizationId, email } = await signUp(server.url, schema);
  const token = await signIn(server.url, email);
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
  console.log(`${url ? 'PostgreSQL' : 'embedded PGlite'}: ${ROWS.toLocaleString('en')} tags seeded in ${((performance.now() - seeding) / 1000).toFixed(1)} s; RSS sampled every 50 ms`);
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
