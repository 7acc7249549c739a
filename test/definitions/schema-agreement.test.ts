// The migration check of `npm test`: a freshly migrated database has
// every table, column, type, nullability, default, foreign key, unique constraint, check and index
// that the definitions of resources/ (and of the modules) need. A definition changed without its
// migration fails here with one sentence per difference; `npm run db:migration -- <name>` writes
// the migration for them. The check itself is proven able to fail in schema-diff.test.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MIGRATIONS_DIR, PROJECT_ROOT } from '../../app/paths.js';
import { readSchema } from '../../engine/schema/actual.js';
import { diffSchema } from '../../engine/schema/diff.js';
import { expectedSchema } from '../../engine/schema/expected.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { migratedDataFolder } from '../helpers/migrated-folder.js';

const CLI = fileURLToPath(new URL('../../scripts/db-migration.ts', import.meta.url));
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
  // Each record table has the lists' indexes, whatever else it has: the default order with its id
  // tie-break (tenant-wide, and per organization), and (tenantId, field, id) for each sort field.
  for (const table of expected.filter((t) => t.kind === 'record')) {
    const resource = [...app.engine.registry.values()].find((r) => r.table === table.name)!;
    const lists = [['tenantId', 'createdAt', 'id'], ['tenantId', 'id'], ...(resource.definition.sort ?? []).map((f) => ['tenantId', f, 'id'])];
    if (table.scope === 'organization') lists.push(['tenantId', 'organizationId', 'createdAt', 'id']);
    for (const columns of lists) {
      assert.ok(table.indexes.some((i) => i.columns.join() === columns.join()), `${table.name} (${columns}): ${JSON.stringify(table.indexes)}`);
    }
  }
});

/**
 * A database of the CLI's own, kept across its runs: a new PostgreSQL schema, or a PGlite folder,
 * empty (the CLI's run migrates it) or already migrated (a copy of the test image: no initdb and
 * migrations to wait for, where the test is about what comes after them).
 */
async function cliDatabase(start: 'empty' | 'migrated') {
  const url = process.env.DATABASE_URL;
  const folder = mkdtempSync(path.join(tmpdir(), 'db-migration-'));
  const schema = `test_${randomBytes(6).toString('hex')}`;
  return {
    env: (url ? { DATABASE_URL: url, DATABASE_SCHEMA: schema } : { DATA_DIR: start === 'empty' ? folder : await migratedDataFolder(path.join(folder, 'data')) }) as Record<string, string>,
    async drop() {
      rmSync(folder, { recursive: true, force: true });
      if (!url) return;
      const admin = knex({ client: 'pg', connection: url, pool: { min: 0, max: 1 } });
      await admin.raw('drop schema if exists ?? cascade', [schema]).finally(() => admin.destroy());
    },
  };
}

/** `npm run db:migration -- …`; any file it leaves in resources/migrations is removed (and reported). */
function runCli(args: string[], env: Record<string, string>) {
  const before = readdirSync(MIGRATIONS_DIR);
  const run = spawnSync(process.execPath, ['--import', TSX, CLI, ...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH, ...TEST_ENV, ...env },
    encoding: 'utf8',
  });
  const written = readdirSync(MIGRATIONS_DIR).filter((f) => !before.includes(f));
  for (const file of written) rmSync(path.join(MIGRATIONS_DIR, file));
  return { ...run, written };
}

test('npm run db:migration on a database that agrees says so and writes nothing', async () => {
  const database = await cliDatabase('empty');
  try {
    const run = runCli(['--', 'nothing_to_do'], database.env);
    assert.is(run.status, 0, run.stderr);
    assert.match(run.stdout, 'No difference between the definitions and the migrated schema: no migration written.');
    assert.equal(run.written, []);
  } finally {
    await database.drop();
  }
});

test('npm run db:migration without a name says how to call it', () => {
  const run = runCli([], {});
  assert.is(run.status, 1);
  assert.match(run.stderr, 'Name the migration: npm run db:migration -- <name>');
  assert.equal(run.written, []);
});

// The steps of adding a resource (a definition, `npm run db:migration -- <name>`, the next run
// applies it), in a folder of its own (EXTRA_RESOURCES_DIR): the definition alone; the migration
// written for it; applied on the next run, nothing left to do. A definition of this test's own
// (test/docs/readme-example.test.ts follows the README's), named so that a reader who adds the
// README's example to resources/ meets no clash here.
const LOCKER = `
name: locker
aliases: [lockers]
scope: organization
permissions: { read: authenticated, write: ORG_EMPLOYEES_EDIT }
owner: employeeId
fields:
  name:       { type: string, required: true, maxLength: 255 }
  serial:     { type: string, maxLength: 64 }
  kind:       { type: string, enum: [LAPTOP, PHONE, OTHER], default: OTHER }
  value:      { type: number, minimum: 0 }
  lentOn:     { type: date }
  employeeId: { type: uuid, references: employee }
relations:
  employee: { belongsTo: employee, via: employeeId }
  tags:     { manyToMany: tag, through: { table: tag_locker, from: lockerId, to: tagId }, writable: true }
filters: [kind, employeeId]
unique:
  - fields: [organizationId, serial]
`;

test('a new definition: db:migration writes its migration, the next run applies it and finds nothing left', async () => {
  const database = await cliDatabase('migrated');
  const folder = mkdtempSync(path.join(tmpdir(), 'db-migration-resources-'));
  try {
    writeFileSync(path.join(folder, 'locker.yaml'), LOCKER);
    const env = { ...database.env, EXTRA_RESOURCES_DIR: folder };
    const first = runCli(['--', 'locker', '--into', path.join(folder, 'migrations')], env);
    assert.is(first.status, 0, first.stderr);
    assert.equal(first.written, []);
    assert.match(first.stdout, 'table locker is missing; locker (');
    assert.match(first.stdout, 'table tag_locker is missing; relations.tags of locker');
    const files = readdirSync(path.join(folder, 'migrations'));
    assert.is(files.length, 1);
    assert.match(files[0], /^\d{14}_locker\.ts$/);
    const source = readFileSync(path.join(folder, 'migrations', files[0]), 'utf8');
    assert.match(source, "recordColumns(knex, t, 'organization');");
    assert.match(source, "t.string('kind', 255).notNullable().defaultTo('OTHER');");
    assert.match(source, "t.uuid('employeeId').references('id').inTable('employee').onDelete('SET NULL');");
    assert.match(source, "t.index(['employeeId']);");
    assert.match(source, "t.unique(['organizationId', 'serial']);");

    const second = runCli(['--', 'again'], env);
    assert.is(second.status, 0, second.stderr);
    assert.match(second.stdout, `Applied first: ${files[0].replace(/\.ts$/, '')}`);
    assert.match(second.stdout, 'No difference between the definitions and the migrated schema: no migration written.');
    assert.equal(second.written, []);
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await database.drop();
  }
});

test.run();
