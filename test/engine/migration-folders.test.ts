// The migrations of several folders (engine/db/migrations.ts): applied in name order, a name twice
// an error. The compiled service's own folder is a pair (app/paths.ts): dist's compiled migrations,
// and the repository's sources of those the build did not compile (written since), applied from there.
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
  const source = new FolderMigrationSource(migrationFolders({ compiled, sources }, [extra, path.join(scratch, 'no-migrations')]));
  const found = (await source.getMigrations()).map((m) => [m.name, path.relative(scratch, m.file)]);
  assert.equal(found, [
    ['20260101000000_initial', path.join('dist', 'migrations', '20260101000000_initial.js')],
    ['20260102000000_work', path.join('dist', 'migrations', '20260102000000_work.js')],
    ['20260102120000_locker', path.join('extra', 'migrations', '20260102120000_locker.ts')],
    ['20260103000000_device', path.join('migrations', '20260103000000_device.ts')],
  ]);
});

test('one folder, as the sources run: every migration of it', async () => {
  const names = (await new FolderMigrationSource(migrationFolders(sources, [])).getMigrations()).map((m) => m.name);
  assert.equal(names, ['20260101000000_initial', '20260102000000_work', '20260103000000_device']);
});

test('a name in two folders (not a compiled migration and its source) is an error naming both; so is a missing folder', async () => {
  const clash = new FolderMigrationSource([compiled, sources]);
  try {
    await clash.getMigrations();
    assert.unreachable('a name twice');
  } catch (err) {
    assert.match((err as Error).message, `Two migrations are named 20260101000000_initial: ${path.join(compiled, '20260101000000_initial.js')} and ${path.join(sources, '20260101000000_initial.ts')}`);
  }
  try {
    await new FolderMigrationSource([path.join(scratch, 'missing')]).getMigrations();
    assert.unreachable('a missing folder');
  } catch (err) {
    assert.match((err as Error).message, 'ENOENT');
  }
});

test.run();
