// The migration that gives the lists their indexes (resources/migrations/*_list_indexes.ts) on a
// database migrated to the latest: its down() brings back the old default-list indexes and the
// migration check names every list index as missing again; its up() once more puts the schema in
// agreement with the definitions, leaves none of the indexes it replaces, and gives the planner
// its statistics of organizationId → tenantId again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FolderMigrationSource } from '../../engine/db/migrations.js';
import { MIGRATIONS_DIR } from '../../app/paths.js';
import { readSchema } from '../../engine/schema/actual.js';
import { diffSchema } from '../../engine/schema/diff.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const MIGRATION = '20261123200000_list_indexes';
const migrationSource = new FolderMigrationSource([MIGRATIONS_DIR]);

let app: TestApp;

test.before(async () => {
  app = await createTestApp();
});

test.after(async () => {
  await app?.close();
});

const differences = async () => (await diffSchema(app.db, app.engine.registry, { tenantTable: 'tenant' })).map((d) => d.message);

async function indexesOf(table: string): Promise<string[]> {
  const schema = await readSchema(app.db, [table]);
  return schema.get(table)!.indexes.map((i) => i.columns.join(', '));
}

/** Extended statistics of a table (the planner's knowledge that organizationId implies tenantId). */
async function statisticsOf(table: string): Promise<string[]> {
  const result: any = await app.db.raw('select stxname from pg_statistic_ext where stxrelid = ?::regclass order by 1', [table]);
  return (result.rows ?? result).map((r: any) => r.stxname);
}

test('down() restores the old default-list indexes; up() again leaves no difference and none of them', async () => {
  assert.equal(await differences(), []);
  const migrated = await indexesOf('employee');
  assert.ok(migrated.includes('tenantId, organizationId, createdAt, id'), migrated.join(' | '));
  assert.ok(migrated.includes('tenantId, lastName, id'), migrated.join(' | '));
  assert.not.ok(migrated.includes('tenantId, organizationId, createdAt'), migrated.join(' | '));

  await app.db.migrate.down({ migrationSource, name: MIGRATION });
  const undone = await indexesOf('employee');
  assert.ok(undone.includes('tenantId, organizationId, createdAt'), undone.join(' | '));
  assert.not.ok(undone.includes('tenantId, lastName, id'), undone.join(' | '));
  assert.equal((await indexesOf('user')).filter((i) => i.startsWith('tenantId')), ['tenantId, createdAt']);
  const missing = await differences();
  assert.ok(missing.includes('employee has no index starting with (tenantId, createdAt, id); the default list (newest first) needs one'), missing.join('\n'));
  assert.ok(missing.includes('time_log has no index starting with (tenantId, startedAt, id); sort: startedAt (an ordered page of the tenant) needs one'), missing.join('\n'));
  assert.ok(missing.every((m) => / has no index starting with \(tenantId, /.test(m)), missing.join('\n'));

  assert.equal(await statisticsOf('employee'), []);

  await app.db.migrate.up({ migrationSource, name: MIGRATION });
  assert.equal(await differences(), []);
  assert.equal(await indexesOf('employee'), migrated);
  assert.equal(await statisticsOf('employee'), ['employee_tenantid_organizationid_stats']);
});

test.run();
