// The migrations of several folders (engine/db/migrations.ts): applied in name order, and a name an
// earlier folder provides is not taken again from a later one. The compiled service lists dist's
// compiled migrations before the repository's sources (app/paths.ts), so a migration written since
// the build is applied from its source and every other from its compiled copy.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { FolderMigrationSource, migrationFolders } from '../../engine/db/migrations.js';

const scratch = mkdtempSync(path.join(tmpdir(), 'migration-folders-'));
const compiled = path.join(scratch, 'dist', 'migrations');
const sources = path.join(scratch, 'migrations');
const extra = path.join(scratch, 'extra');

test.before(() => {
  for (const dir of [compiled, sources, path.join(extra, 'migrations')]) mkdirSync(dir, { recursive: true });
  for (const name of ['20260101000000_initial.js', '20260102000000_work.js']) writeFileSync(path.join(compiled, name), 'export async function up() {}\n');
  for (const name of ['20260101000000_initial.ts', '20260102000000_work.ts', '20260103000000_device.ts', 'types.d.ts']) writeFileSync(path.join(sources, name), 'export async function up() {}\n');
  writeFileSync(path.join(extra, 'migrations', '20260102120000_locker.ts'), 'export async function up() {}\n');
});

test.after(() => rmSync(scratch, { recursive: true, force: true }));

test('compiled migrations first, the sources only for names the build did not compile, in name order', async () => {
  const source = new FolderMigrationSource(migrationFolders([compiled, sources], [extra, path.join(scratch, 'no-migrations')]));
  const found = (await source.getMigrations()).map((m) => [m.name, path.relative(scratch, m.file)]);
  assert.equal(found, [
    ['20260101000000_initial', path.join('dist', 'migrations', '20260101000000_initial.js')],
    ['20260102000000_work', path.join('dist', 'migrations', '20260102000000_work.js')],
    ['20260102120000_locker', path.join('extra', 'migrations', '20260102120000_locker.ts')],
    ['20260103000000_device', path.join('migrations', '20260103000000_device.ts')],
  ]);
});

test('one folder, as the sources run: every migration of it; a missing folder provides none', async () => {
  const names = async (folders: string[]) => (await new FolderMigrationSource(folders).getMigrations()).map((m) => m.name);
  assert.equal(await names(migrationFolders(sources, [])), ['20260101000000_initial', '20260102000000_work', '20260103000000_device']);
  assert.equal(await names([path.join(scratch, 'missing')]), []);
});

test.run();
