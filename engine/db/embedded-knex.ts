// The knex side of the embedded database, apart from database.ts: a service on PostgreSQL never
// loads PGlite and its knex client (about 15 MB of each worker's memory), only what asks for it does.
import { PGlite } from '@electric-sql/pglite';
import knex, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import type { DatabaseOptions } from './database.js';
import { EMBEDDED_EXTENSIONS, embeddedPGlite } from './embedded.js';

/** In memory, from an image, or on a data folder (which the caller has locked). */
export function embeddedKnexConfig(options: DatabaseOptions, pglite?: PGlite): Knex.Config {
  return {
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection: pglite
      ? { pglite }
      : options.image
        ? { pglite: new PGlite({ loadDataDir: options.image, extensions: EMBEDDED_EXTENSIONS }) }
        : options.dataDir
          ? { pglite: embeddedPGlite(options.dataDir, options.embedded) }
          : { pglite: new PGlite({ extensions: EMBEDDED_EXTENSIONS }) },
  } as Knex.Config;
}

/**
 * An image of an in-memory embedded database after `prepare` ran on it (migrations, say), for
 * `openDatabase({ image })`: opening a copy of it takes a fraction of a fresh cluster's start.
 */
export async function embeddedImage(prepare: (db: Knex) => Promise<unknown>): Promise<Blob> {
  const pglite = new PGlite({ extensions: EMBEDDED_EXTENSIONS });
  const db = knex(embeddedKnexConfig({}, pglite));
  try {
    await prepare(db);
    return await pglite.dumpDataDir('none');
  } finally {
    await db.destroy();
  }
}
