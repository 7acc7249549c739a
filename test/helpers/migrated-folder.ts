// A data folder whose database is already migrated, for the suites whose servers and CLIs are about
// something other than a first start (PostgreSQL's initdb and the migrations, in WebAssembly, are
// most of a first start's seconds); the suites that test the first start keep an empty folder.
// It is a copy of the in-memory test image (test/helpers/app.ts), so it differs from a folder
// `npm start` makes: WAL segments of 1 MB instead of 16 and no template databases. Not for suites
// about the WAL, disk space or durability.
import { PGlite } from '@electric-sql/pglite';
import { EMBEDDED_EXTENSIONS } from '../../engine/db/embedded.js';
import { migratedEmbeddedImage } from './app.js';

/** Writes a copy of this process's migrated image into `dir`, which must not hold a database yet. */
export async function migratedDataFolder(dir: string): Promise<string> {
  // A small buffer cache: PostgreSQL zeroes all of it at start, for the few pages this start reads.
  const startParams = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB'];
  const pglite = new PGlite({ dataDir: dir, loadDataDir: await migratedEmbeddedImage(), extensions: EMBEDDED_EXTENSIONS, startParams });
  await pglite.close();
  return dir;
}
