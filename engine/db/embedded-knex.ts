// The knex side of the embedded database, apart from database.ts: a service on PostgreSQL never
// loads PGlite and its knex client (about 15 MB of each worker's memory), only what asks for it does.
import { PGlite } from '@electric-sql/pglite';
import knex, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { logEvent } from '../log/log.js';
import { holdsDatabase } from './data-folder.js';
import type { DatabaseOptions } from './database.js';
import { EMBEDDED_EXTENSIONS, embeddedPGlite } from './embedded.js';

/**
 * A database in memory, new or a copy of an image. Its memory is its disk and it ends with the
 * process, so what guards a disk's files against a crash is work for nothing: no full-page images
 * in the WAL, no zero-filled WAL files, and a small buffer cache in front of files that are memory
 * already (PostgreSQL's 128 MB of it is zeroed at every start: half of a copy's start-up time).
 * A new one's WAL comes in segments of 1 MB instead of 16: every copy of an image holds one.
 */
function inMemoryPGlite(image?: Blob): PGlite {
  const startParams = [...PGlite.defaultStartParams, '-c', 'shared_buffers=16MB', '-c', 'full_page_writes=off', '-c', 'wal_init_zero=off'];
  return new PGlite({ loadDataDir: image, extensions: EMBEDDED_EXTENSIONS, startParams, initDbStartParams: ['--wal-segsize=1'] });
}

/** The data folder the options name, unless they start from an image (in memory). */
const folderOf = (options: DatabaseOptions) => (options.dataDir && !options.image ? options.dataDir : undefined);

/** In memory, from an image, or on a data folder (which the caller has locked). */
function embeddedPGliteFor(options: DatabaseOptions): PGlite {
  const dataDir = folderOf(options);
  return dataDir ? embeddedPGlite(dataDir, options.embedded) : inMemoryPGlite(options.image);
}

export function embeddedKnexConfig(options: DatabaseOptions, pglite = embeddedPGliteFor(options)): Knex.Config {
  return {
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection: { pglite },
  } as Knex.Config;
}

/**
 * knex on an embedded database that has started: a failure to start (a folder PGlite cannot use)
 * is this call's, and the time it took is the opening's. On a data folder that held no database
 * it was PostgreSQL's initdb, the longest part of a first start: logged as `embedded database created`.
 */
export async function openEmbeddedKnex(options: DatabaseOptions): Promise<Knex> {
  const dataDir = folderOf(options);
  const creates = dataDir !== undefined && !holdsDatabase(dataDir);
  const began = performance.now();
  const pglite = embeddedPGliteFor(options);
  const instance = knex(embeddedKnexConfig(options, pglite));
  try {
    await pglite.waitReady;
  } catch (err) {
    await instance.destroy().catch(() => {});
    throw err;
  }
  if (creates) logEvent('info', 'embedded database created', { dataDir, pid: process.pid, durationMs: Math.round(performance.now() - began) });
  return instance;
}

/**
 * An image of an in-memory embedded database after `prepare` ran on it (migrations, say), for
 * `openDatabase({ image })`: opening a copy of it takes a fraction of a fresh cluster's start.
 * The cluster's template databases are dropped from it first: a copy works in its one database,
 * and every open unpacks the whole image (the templates were two fifths of its files).
 */
export async function embeddedImage(prepare: (db: Knex) => Promise<unknown>): Promise<Blob> {
  const pglite = inMemoryPGlite();
  const db = knex(embeddedKnexConfig({}, pglite));
  try {
    await prepare(db);
    await pglite.exec(`update pg_database set datistemplate = false where datname in ('template0', 'template1')`);
    for (const statement of ['drop database template0', 'drop database template1', 'checkpoint']) await pglite.exec(statement);
    return new ReadImage(await (await pglite.dumpDataDir('none')).arrayBuffer());
  } finally {
    await db.destroy();
  }
}

/**
 * An image whose bytes are read once: PGlite reads an image whole at every open, which a plain
 * Blob answers by copying it out chunk by chunk (45 MB, a third of a copy's start-up). PGlite
 * only reads the bytes (it copies each file out of them), so every open may share them.
 */
class ReadImage extends Blob {
  constructor(private readonly content: ArrayBuffer) {
    super([content]);
  }

  override arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.content);
  }
}
