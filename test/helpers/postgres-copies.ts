// On PostgreSQL, each test app's database is a copy of one migrated once per test process
// (CREATE DATABASE … TEMPLATE): a copy takes about a tenth of the time the migrations take on a
// new schema, and a dropped database takes its catalog with it at once. Where copies cannot be
// made (a role without CREATEDB, a transaction pooler, which keeps connections to the template
// open), `postgresCopy` answers undefined and the caller works in a new schema instead.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { ensureSchema, openDatabase, resolvePooler, type Database } from '../../engine/db/database.js';
import type { PoolerSetting } from '../../engine/db/pooler.js';
import { migrate } from '../../engine/db/migrations.js';
import { MIGRATIONS_DIR } from '../../app/paths.js';

/** The schema every copy works in: not `public`, so the suites keep testing a named schema. */
const SCHEMA = 'suite';
/** Names of this helper's databases: `test_template_` or `test_copy_`, the epoch second, a random part. */
const OURS = /^test_(template|copy)_(\d+)_[0-9a-f]+$/;
/** A database of ours older than this was left by a test process that was killed: dropped. */
const STALE_SECONDS = 12 * 3600;

const newName = (kind: 'template' | 'copy') => `test_${kind}_${Math.floor(Date.now() / 1000)}_${randomBytes(5).toString('hex')}`;

/** The URL with another database in its path. */
function urlOf(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

interface Template {
  name: string;
  /** DATABASE_POOLER as probed once (`auto` resolved), for every copy. */
  pooler: PoolerSetting;
}

let template: Promise<Template | undefined> | undefined;

/**
 * One statement on a connection of its own to the URL's database (CREATE and DROP DATABASE run
 * outside transactions); the connection ends with it, so none keeps the test process alive.
 */
async function admin<Row>(url: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Dropped even if a test left a connection to it open; PostgreSQL 12 has no FORCE, so waits for them. */
async function dropDatabase(url: string, name: string): Promise<void> {
  const drop = `drop database if exists ${pg.escapeIdentifier(name)}`;
  await admin(url, `${drop} with (force)`).catch((err) => {
    if ((err as { code?: string }).code !== '42601') throw err;
    return admin(url, drop);
  });
}

/** Databases of ours that a killed test process left behind, long ago. */
async function dropStale(url: string): Promise<void> {
  const rows = await admin<{ datname: string }>(url, 'select datname from pg_database');
  const now = Date.now() / 1000;
  for (const { datname } of rows) {
    const match = OURS.exec(datname);
    if (match && now - Number(match[2]) > STALE_SECONDS) await dropDatabase(url, datname).catch(() => {});
  }
}

/** This process's migrated template, or undefined when this role and server cannot copy one. */
async function makeTemplate(url: string, setting: PoolerSetting): Promise<Template | undefined> {
  const { pooler = setting } = await resolvePooler({ databaseUrl: url, pooler: setting });
  if (pooler === 'transaction') return undefined;
  const name = newName('template');
  try {
    await admin(url, `create database ${pg.escapeIdentifier(name)}`);
  } catch (err) {
    if ((err as { code?: string }).code === '42501') return undefined; // no CREATEDB: the schemas it is
    throw err;
  }
  try {
    await dropStale(url);
    const database = await openDatabase({ databaseUrl: urlOf(url, name), schema: SCHEMA, poolMax: 1, pooler });
    try {
      await ensureSchema(database.knex, SCHEMA);
      await migrate(database.knex, [MIGRATIONS_DIR]);
    } finally {
      await database.close();
    }
  } catch (err) {
    await dropDatabase(url, name).catch(() => {});
    throw err;
  }
  // Dropped when the process has nothing left to do; a killed one's is swept by a later run.
  let dropping = false;
  process.on('beforeExit', () => {
    if (dropping) return;
    dropping = true;
    void dropDatabase(url, name).catch((err) => console.error(`could not drop the test template database ${name}: ${err.message}`));
  });
  return { name, pooler };
}

/**
 * A new database for one test app, copied from this process's migrated template, with a function
 * that drops it; undefined when copies cannot be made here (see the top of this file).
 */
export async function postgresCopy(url: string, pooler: PoolerSetting): Promise<{ database: Database; drop: () => Promise<void> } | undefined> {
  template ??= makeTemplate(url, pooler);
  const source = await template;
  if (!source) return undefined;
  const name = newName('copy');
  await admin(url, `create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(source.name)}`);
  try {
    const database = await openDatabase({ databaseUrl: urlOf(url, name), schema: SCHEMA, poolMax: 5, pooler: source.pooler });
    return { database, drop: () => dropDatabase(url, name) };
  } catch (err) {
    await dropDatabase(url, name);
    throw err;
  }
}
