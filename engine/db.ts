// The database: embedded PGlite by default (kept under the data folder, one process at a time),
// PostgreSQL when a connection string is given. Both speak PostgreSQL's SQL and error codes, so
// nothing above this file knows which one it has.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import knex, { type Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import pg from 'pg';
import lockfile from 'proper-lockfile';

// count(*) is int8: a string from pg, a number from PGlite. Read it as a number on both.
pg.types.setTypeParser(20, (value: string) => Number.parseInt(value, 10));

export interface Database {
  knex: Knex;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** Folder for PGlite; omit for an in-memory database (tests). */
  dataDir?: string;
  /**
   * In-memory PGlite only: start from this image of a data folder (PGlite's dumpDataDir) instead
   * of an empty cluster. Tests start every app from one migrated image: no initdb, no migrations.
   */
  image?: Blob;
  /** PostgreSQL schema to work in (tests give each file its own). */
  schema?: string;
  poolMax?: number;
}

export class DataDirLockedError extends Error {}

const LOCK_STALE_MS = 10_000;

/**
 * PGlite has no lock of its own: two processes on one folder silently lose writes. Hold a lock
 * file (refreshed while we run, released on exit) so the second process stops with a clear message.
 */
export async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  mkdirSync(dir, { recursive: true });
  try {
    return await lockfile.lock(dir, {
      lockfilePath: path.join(dir, 'engine.lock'),
      stale: LOCK_STALE_MS,
      retries: 0,
      realpath: false,
      onCompromised: (err) => {
        console.error(JSON.stringify({ level: 'fatal', msg: 'data folder lock lost', error: err.message }));
        process.exit(1);
      },
    });
  } catch (err: any) {
    if (err?.code === 'ELOCKED') {
      throw new DataDirLockedError(
        `The data folder ${dir} is in use by another process of this service. ` +
          `Stop that process, or set DATA_DIR to another folder (or DATABASE_URL to use PostgreSQL). ` +
          `If the other process died, its lock expires within ${LOCK_STALE_MS / 1000} seconds.`,
      );
    }
    throw err;
  }
}

/** The knex configuration of either database kind (shared by the app and the knex CLI's knexfile). */
export function knexConfig(options: DatabaseOptions): Knex.Config {
  if (options.databaseUrl) {
    return {
      client: 'pg',
      connection: options.databaseUrl,
      searchPath: options.schema ? [options.schema] : undefined,
      pool: { min: 0, max: options.poolMax ?? 10 },
      acquireConnectionTimeout: 5000,
    };
  }
  return {
    client: ClientPgLite as unknown as typeof Knex.Client,
    dialect: 'postgres',
    connection: options.image ? { pglite: new PGlite({ loadDataDir: options.image }) } : options.dataDir ? { filename: options.dataDir } : {},
  } as Knex.Config;
}

/** A schema named in the configuration is made on first use, like the embedded database's folder. */
export async function ensureSchema(db: Knex, schema: string | undefined): Promise<void> {
  if (schema) await db.raw('create schema if not exists ??', [schema]);
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const instance = knex(knexConfig(options));
    return { knex: instance, kind: 'postgres', close: () => instance.destroy() };
  }
  const release = options.dataDir ? await lockDataDir(options.dataDir) : undefined;
  const instance = knex(knexConfig(options));
  return {
    knex: instance,
    kind: 'pglite',
    async close() {
      await instance.destroy();
      await release?.();
    },
  };
}

/**
 * An image of an in-memory embedded database after `prepare` ran on it (migrations, say), for
 * `openDatabase({ image })`: opening a copy of it takes a fraction of a fresh cluster's start.
 */
export async function embeddedImage(prepare: (db: Knex) => Promise<unknown>): Promise<Blob> {
  const pglite = new PGlite();
  const db = knex({ ...knexConfig({}), connection: { pglite } } as Knex.Config);
  try {
    await prepare(db);
    return await pglite.dumpDataDir('none');
  } finally {
    await db.destroy();
  }
}
