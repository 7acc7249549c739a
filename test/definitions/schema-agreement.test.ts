// The migration check of `npm test`: a freshly migrated database has
// every table, column, type, nullability, default, foreign key, unique constraint, check and index
// that the definitions of resources/ (and of the modules) need. A definition changed without its
// migration fails here with one sentence per difference; `npm run db:migration -- <name>` writes
// the migration for them. The check itself is proven able to fail in schema-diff.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MIGRATIONS_DIR, PROJECT_ROOT } from '../../app/paths.js';
import { readSchema } from '../../engine/schema/actual.js';
import { diffSchema } from '../../engine/schema/diff.js';
import { expectedSchema } from '../../engine/schema/expected.js';
import { createTestApp, TEST_ENV, type TestApp } from '../helpers/app.js';
import { lockDataDir } from '../../engine/db/database.js';

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
 * What `npm start` would use, made unusable for anyone else: the embedded data folder locked by
 * this process (as a running server holds it), or a PostgreSQL URL where nothing answers. The
 * CLI must work anyway, and leave both alone: it migrates a database of its own, in memory.
 */
async function heldDatabase() {
  const folder = mkdtempSync(path.join(tmpdir(), 'db-migration-'));
  const release = await lockDataDir(folder);
  return {
    folder,
    env: (process.env.DATABASE_URL ? { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' } : { DATA_DIR: folder }) as Record<string, string>,
    async drop() {
      await release();
      rmSync(folder, { recursive: true, force: true });
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

test('npm run db:migration while the server holds its database: the definitions agree, nothing is written or touched', async () => {
  const database = await heldDatabase();
  try {
    const run = runCli(['--', 'nothing_to_do'], database.env);
    assert.is(run.status, 0, run.stderr);
    assert.is(run.stdout, 'No difference between the definitions and the migrations: no migration written.\n');
    assert.equal(run.written, []);
    // The held folder is as the lock left it: no database was made in it.
    assert.not.ok(existsSync(path.join(database.folder, 'PG_VERSION')), 'no database in the held folder');
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

test('a new definition: db:migration writes its migration, the next run finds nothing left', async () => {
  const database = await heldDatabase();
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
    assert.is(second.stdout, 'No difference between the definitions and the migrations: no migration written.\n');
    assert.equal(second.written, []);
    assert.equal(readdirSync(path.join(folder, 'migrations')), files);
  } finally {
    rmSync(folder, { recursive: true, force: true });
    await database.drop();
  }
});

test.run();
