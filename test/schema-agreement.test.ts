// The migration check of `npm test` (README "Adding a resource"): a freshly migrated database has
// every table, column, type, nullability, default, foreign key, unique constraint, check and index
// that the definitions of resources/ (and of the modules) need. A definition changed without its
// migration fails here with one sentence per difference; `npm run db:migration -- <name>` writes
// the migration for them. The check itself is proven able to fail in schema-diff.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MIGRATIONS_DIR, PROJECT_ROOT } from '../engine/paths.js';
import { readSchema } from '../engine/schema/actual.js';
import { diffSchema } from '../engine/schema/diff.js';
import { expectedSchema } from '../engine/schema/expected.js';
import { createTestApp, TEST_ENV, type TestApp } from './helpers/app.js';

const CLI = fileURLToPath(new URL('../scripts/db-migration.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

let app: TestApp;

test.before(async () => {
  app = await createTestApp();
});

test.after(async () => {
  await app?.close();
});

test('the migrated schema agrees with every definition', async () => {
  const differences = await diffSchema(app.db, app.engine.registry, { tenantTable: 'tenant' });
  const list = differences.map((d) => `  - ${d.message}`).join('\n');
  assert.equal(
    differences.map((d) => d.message),
    [],
    `The migrations and the definitions disagree:\n${list}\nWrite the migration for them with: npm run db:migration -- <name>`,
  );
});

test('the check covers every resource: each one\'s table and join tables are expected, and exist', async () => {
  const expected = expectedSchema(app.engine.registry, { tenantTable: 'tenant' });
  const names = expected.map((t) => t.name);
  for (const resource of app.engine.registry.values()) {
    assert.ok(names.includes(resource.table), `${resource.name}'s table ${resource.table}`);
    for (const relation of resource.relations.values()) {
      if (relation.through) assert.ok(names.includes(relation.through.table), `${resource.name}.${relation.name}'s ${relation.through.table}`);
    }
  }
  const actual = await readSchema(app.db, names);
  assert.equal(names.filter((n) => !actual.has(n)), []);
  // Each record table has the default list's index, whatever else it has.
  for (const table of expected.filter((t) => t.kind === 'record')) {
    const columns = table.scope === 'organization' ? ['tenantId', 'organizationId', 'createdAt'] : ['tenantId', 'createdAt'];
    assert.ok(table.indexes.some((i) => i.columns.join() === columns.join()), `${table.name}: ${JSON.stringify(table.indexes)}`);
  }
});

/** `npm run db:migration -- …` on a database of its own (a PGlite folder, or a new PostgreSQL schema). */
async function runCli(args: string[]) {
  const url = process.env.DATABASE_URL;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'db-migration-'));
  const schema = `test_${randomBytes(6).toString('hex')}`;
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, ...TEST_ENV, ...(url ? { DATABASE_URL: url, DATABASE_SCHEMA: schema } : { DATA_DIR: dataDir }) };
  try {
    const before = readdirSync(MIGRATIONS_DIR);
    const run = spawnSync(process.execPath, ['--import', TSX, CLI, ...args], { cwd: PROJECT_ROOT, env, encoding: 'utf8' });
    const written = readdirSync(MIGRATIONS_DIR).filter((f) => !before.includes(f));
    // A test must not leave a migration behind (the first test says what it would have held).
    for (const file of written) rmSync(path.join(MIGRATIONS_DIR, file));
    return { ...run, written };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    if (url) {
      const admin = knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
      await admin.raw('drop schema if exists ?? cascade', [schema]).finally(() => admin.destroy());
    }
  }
}

test('npm run db:migration on a database that agrees says so and writes nothing', async () => {
  const run = await runCli(['--', 'nothing_to_do']);
  assert.is(run.status, 0, run.stderr);
  assert.match(run.stdout, 'No difference between the definitions and the migrated schema: no migration written.');
  assert.equal(run.written, []);
});

test('npm run db:migration without a name says how to call it', async () => {
  const run = await runCli([]);
  assert.is(run.status, 1);
  assert.match(run.stderr, 'Name the migration: npm run db:migration -- <name>');
  assert.equal(run.written, []);
});

test.run();
