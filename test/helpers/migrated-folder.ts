// A data folder where a first start would leave it: the embedded database, migrated. For the suites
// whose servers and CLIs are about something else than that first start (PostgreSQL's initdb and
// the migrations, in WebAssembly, are most of a first start's seconds); the suites that test the
// first start keep an empty folder.
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_EXTENSIONS } from '../../engine/db/embedded.js';
import { migratedEmbeddedImage } from './app.js';

/** Writes a copy of this process's migrated image (test/helpers/app.ts) into `dir`, which must not hold a database yet. */
export async function migratedDataFolder(dir: string): Promise<string> {
  const pglite = new PGlite({ dataDir: dir, loadDataDir: await migratedEmbeddedImage(), extensions: EMBEDDED_EXTENSIONS });
  await pglite.close();
  return dir;
}
