// On PostgreSQL, each test app's database is a copy of one migrated once per test process
// (CREATE DATABASE … TEMPLATE): a copy takes about a tenth of the time the migrations take on a
// new schema, and a dropped database takes its catalog with it at once. Where copies cannot be
// made or used (a role without CREATEDB, a pooler that keeps connections to the template open or
// knows no new database, pg_hba.conf rules naming the databases), `postgresCopy` answers
// undefined and the caller works in a new schema instead.
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
/** A database of ours older than this, with nothing connected to it, was left by a killed test process: dropped. */
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
export async function admin<Row>(url: string, sql: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

/** Drops a PostgreSQL schema (a test app's where copies cannot be made, a server process's), if it is there. */
export async function dropSchema(url: string, schema: string): Promise<void> {
  await admin(url, `drop schema if exists ${pg.escapeIdentifier(schema)} cascade`);
}

/**
 * Dropped even if a test left a connection to it open (FORCE ends them; before PostgreSQL 13 there
 * is none, and the drop fails after 5 s if one is still open).
 */
async function dropDatabase(url: string, name: string): Promise<void> {
  const drop = `drop database if exists ${pg.escapeIdentifier(name)}`;
  await admin(url, `${drop} with (force)`).catch((err) => {
    if ((err as { code?: string }).code !== '42601') throw err;
    return admin(url, drop);
  });
}

/**
 * Databases of ours that a killed test process left behind long ago, and that nothing is connected
 * to (a fuzz campaign may run for longer): dropped without FORCE.
 */
async function dropStale(url: string): Promise<void> {
  const rows = await admin<{ datname: string }>(
    url,
    'select datname from pg_database d where not exists (select 1 from pg_stat_activity a where a.datname = d.datname)',
  );
  const now = Date.now() / 1000;
  for (const { datname } of rows) {
    const match = OURS.exec(datname);
    if (match && now - Number(match[2]) > STALE_SECONDS) await admin(url, `drop database if exists ${pg.escapeIdentifier(datname)}`).catch(() => {});
  }
}

/** The copies alive in this process, and its template: what `dropTestDatabases` drops. */
const alive = new Set<string>();
let adminUrl: string | undefined;

/**
 * Drops this process's template and the copies still alive: at its end (`beforeExit`, which an
 * explicit `process.exit` skips, so test/run.ts and `npm run fuzz` call it themselves), and on
 * Ctrl-C or SIGTERM. A process killed outright leaves them to the stale sweep of a later run.
 */
export async function dropTestDatabases(): Promise<void> {
  const url = adminUrl;
  if (!url) return;
  const names = [...alive];
  alive.clear();
  for (const name of names) {
    await dropDatabase(url, name).catch((err) => console.error(`could not drop the test database ${name}: ${err.message}`));
  }
}

let hooked = false;
function dropAtExit() {
  if (hooked) return;
  hooked = true;
  process.once('beforeExit', () => void dropTestDatabases());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      void dropTestDatabases().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}

/** The errors that say this server will not let a test copy the template, or use a copy. */
const CANNOT_COPY = new Set([
  '42501', // no CREATEDB
  '55006', // the template in use: a pooler (in session mode too) keeps connections to it open
  '28000', // pg_hba.conf lets this role into named databases only
  '3D000', // a pooler that does not know the new database
  '08P01', // a pooler refusing it at the protocol level
]);

/** Tries to make the template, and one copy of it opened once; undefined (and why) when this server cannot. */
async function makeTemplate(url: string, setting: PoolerSetting): Promise<Template | undefined> {
  const { pooler = setting } = await resolvePooler({ databaseUrl: url, pooler: setting });
  if (pooler === 'transaction') return undefined;
  const name = newName('template');
  const refused = (err: unknown) => CANNOT_COPY.has((err as { code?: string }).code ?? '');
  try {
    await admin(url, `create database ${pg.escapeIdentifier(name)}`);
  } catch (err) {
    if (refused(err)) return undefined;
    throw err;
  }
  adminUrl = url;
  alive.add(name);
  dropAtExit();
  try {
    await dropStale(url);
    const database = await openDatabase({ databaseUrl: urlOf(url, name), schema: SCHEMA, poolMax: 1, pooler });
    try {
      await ensureSchema(database.knex, SCHEMA);
      await migrate(database.knex, [MIGRATIONS_DIR]);
    } finally {
      await database.close();
    }
    const trial = newName('copy');
    alive.add(trial);
    await admin(url, `create database ${pg.escapeIdentifier(trial)} template ${pg.escapeIdentifier(name)}`);
    await admin(urlOf(url, trial), 'select 1');
    await dropDatabase(url, trial);
    alive.delete(trial);
  } catch (err) {
    await dropTestDatabases();
    if (!refused(err)) throw err;
    console.error(`test databases: cannot copy a template database here (${(err as Error).message}); each test app migrates a new schema instead`);
    return undefined;
  }
  return { name, pooler };
}

/**
 * A new database for one test app, copied from this process's migrated template, with a function
 * that drops it; undefined when copies cannot be made here (see the top of this file).
 */
export async function postgresCopy(url: string, pooler: PoolerSetting): Promise<{ database: Database; drop: () => Promise<void> } | undefined> {
  // A template that failed to be made is tried again by the next app, not kept as a failure.
  template ??= makeTemplate(url, pooler).catch((err) => {
    template = undefined;
    throw err;
  });
  const source = await template;
  if (!source) return undefined;
  const name = newName('copy');
  alive.add(name);
  const drop = async () => {
    await dropDatabase(url, name);
    alive.delete(name);
  };
  await admin(url, `create database ${pg.escapeIdentifier(name)} template ${pg.escapeIdentifier(source.name)}`);
  try {
    const database = await openDatabase({ databaseUrl: urlOf(url, name), schema: SCHEMA, poolMax: 5, pooler: source.pooler });
    return { database, drop };
  } catch (err) {
    await drop();
    throw err;
  }
}
