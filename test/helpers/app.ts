// A fresh app on a fresh database for one test file: in-memory PGlite by default; when
// DATABASE_URL is set, a PostgreSQL database copied from a migrated one (postgres-copies.ts), or a
// new schema where copies cannot be made; either is dropped on close.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import pg from 'pg';
import request from 'supertest';
import { createProjectApp as createApp, type ProjectAppOptions as AppOptions } from '../../app/create-app.js';
import type { App } from '../../engine/app.js';
import { loadConfig, type Config } from '../../engine/config/config.js';
import { openDatabase, type Database } from '../../engine/db/database.js';
import { embeddedImage } from '../../engine/db/embedded-knex.js';
import { setLogLevel } from '../../engine/log/log.js';
import { migrate } from '../../engine/db/migrations.js';
import { admin, dropSchema, postgresCopy } from './postgres-copies.js';
import type { Module } from '../../engine/module.js';
import { MIGRATIONS_DIR, RESOURCES_DIR } from '../../app/paths.js';
import { modules as projectModules } from '../../resources/modules.js';

// The process's own log lines (knex's warnings while a test takes a database away, say) are noise
// between a suite's dots; errors still show. A test that reads log lines gives the app a logger.
setLogLevel('error');

export const TEST_ENV = {
  NODE_ENV: 'test',
  // The suites register and sign in far more often than the limits allow; the rate-limit suites switch them on.
  RATE_LIMITS: 'off',
  JWT_SECRET: 'test-access-secret-0123456789abcdef0123456789',
  JWT_REFRESH_SECRET: 'test-refresh-secret-0123456789abcdef012345678',
};

export interface TestAppOptions {
  resourceDirs?: string[];
  migrationDirs?: string[];
  modules?: Module[];
  env?: Record<string, string>;
  appOptions?: Partial<AppOptions>;
  /** A database of the test's own (the embedded database on a data folder, say), closed with the app. */
  database?: Database;
}

export interface TestApp extends App {
  db: Knex;
  database: Database;
  config: Config;
  http: ReturnType<typeof request>;
  close(): Promise<void>;
}

export const usingPostgres = () => Boolean(process.env.DATABASE_URL);

let migratedImage: Promise<Blob> | undefined;

/**
 * The embedded database: a copy of one image migrated once per test process (a fresh cluster and
 * its migrations cost seconds per app; a copy, a fraction of one). createTestApp still runs
 * migrate(), which then finds nothing left to do but a test's own extra migrations.
 */
function embeddedDatabase(): Promise<Database> {
  return migratedEmbeddedImage().then((image) => openDatabase({ image }));
}

/** The image every embedded test database of this process is a copy of: migrated, made at first use. */
export function migratedEmbeddedImage(): Promise<Blob> {
  migratedImage ??= embeddedImage((db) => migrate(db, [MIGRATIONS_DIR]));
  return migratedImage;
}

async function freshDatabase(): Promise<{ database: Database; drop?: () => Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) return { database: await embeddedDatabase() };
  // DATABASE_POOLER as the service reads it (a run through a transaction pooler sets it).
  const pooler = loadConfig({ DATABASE_URL: url, DATABASE_POOLER: process.env.DATABASE_POOLER }).databasePooler;
  const copy = await postgresCopy(url, pooler);
  if (copy) return { database: copy.database, drop: copy.drop };
  const schema = `test_${randomBytes(6).toString('hex')}`;
  await admin(url, `create schema ${pg.escapeIdentifier(schema)}`);
  const database = await openDatabase({ databaseUrl: url, schema, poolMax: 5, pooler });
  return { database, drop: () => dropSchema(url, schema) };
}

export async function createTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  // Each app uploads into a folder of its own, removed with it (unless a test names one).
  const uploadDir = options.env?.UPLOAD_DIR ? undefined : mkdtempSync(path.join(tmpdir(), 'uploads-'));
  const config = loadConfig({ ...TEST_ENV, ...(uploadDir ? { UPLOAD_DIR: uploadDir } : {}), ...options.env });
  const removeUploads = () => uploadDir && rmSync(uploadDir, { recursive: true, force: true });
  const { database, drop } = options.database ? { database: options.database, drop: undefined } : await freshDatabase();
  try {
    await migrate(database.knex, [MIGRATIONS_DIR, ...(options.migrationDirs ?? [])]);
    const app = createApp({
      config,
      db: database.knex,
      resourceDirs: options.resourceDirs ?? [RESOURCES_DIR],
      modules: options.modules ?? projectModules,
      logError: () => {},
      log: () => {},
      ...options.appOptions,
    });
    await app.ready();
    return {
      ...app,
      db: database.knex,
      database,
      config,
      http: request(app.koa.callback()),
      async close() {
        await app.close();
        await database.close();
        await drop?.();
        removeUploads();
      },
    };
  } catch (err) {
    await database.close();
    await drop?.();
    removeUploads();
    throw err;
  }
}
