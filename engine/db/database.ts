// The database: embedded PGlite by default (kept under the data folder, one process at a time),
// PostgreSQL when a connection string is given. Both speak PostgreSQL's SQL and error codes, so
// nothing above this file knows which one it has.
import knex, { type Knex } from 'knex';
import pg from 'pg';
import { DatabaseTimeoutError } from './errors.js';
import type { Config } from '../config/config.js';
import type { EmbeddedOptions } from '../config/embedded.js';
import { lockDataDir } from './data-dir-lock.js';
import { behindTransactionPooler, markTransactionPooler, schemaPerTransaction, type PoolerSetting } from './pooler.js';
import { logEvent } from '../log/log.js';
import { isStorageFull } from '../storage-full.js';

// count(*) is int8: a string from pg, a number from PGlite. Read it as a number on both.
pg.types.setTypeParser(20, (value: string) => Number.parseInt(value, 10));

export interface Database {
  knex: Knex;
  kind: 'pglite' | 'postgres';
  close(): Promise<void>;
}

/**
 * The database the configuration names, as the server, the knex CLI and the migration tool open
 * it (one place, so that a new setting such as the pooler reaches all three). No time limit:
 * the serving process adds DATABASE_TIMEOUT_MS itself; migrations run without one.
 */
export function configuredDatabase(config: Config): DatabaseOptions {
  return {
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    embedded: config.embedded,
    pooler: config.databasePooler,
  };
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
  /**
   * PostgreSQL only (DATABASE_TIMEOUT_MS): the longest a query, opening a connection, or waiting for
   * a pooled one may take. A query past it fails with DatabaseTimeoutError and its connection is
   * destroyed, never reused: its late answer must not become the answer of a later query, and a
   * database that hangs must not keep it. Unset: no limit (migrations, the knex CLI).
   */
  timeoutMs?: number;
  /** Embedded database on a data folder: durability and the free space kept (db/embedded.ts). */
  embedded?: EmbeddedOptions;
  /**
   * PostgreSQL only (DATABASE_POOLER): `transaction` when a transaction-mode pooler stands between
   * (db/pooler.ts); `auto` is resolved by openDatabase (resolvePooler); unset: `none`.
   */
  pooler?: PoolerSetting;
}

export { DataDirLockedError, lockDataDir } from './data-dir-lock.js';

/** A data folder PGlite cannot start on (damaged, or a first start stopped while creating it). */
export class EmbeddedDatabaseError extends Error {}

/**
 * What knex says, without the stack frames it appends to some of it ("Acquire connection error:
 * <stack>"): a log line says what happened; where in knex's code is no use to its reader.
 */
const withoutStack = (message: unknown) =>
  String(message).split('\n').filter((line) => !/^\s+at /.test(line)).join('\n').trim();

/** knex's own warnings (a dropped connection, say) as log lines of ours rather than plain text on stderr. */
const knexLog: Knex.Config['log'] = {
  warn: (message: unknown) => logEvent('warn', 'database', { detail: withoutStack(message) }),
  error: (message: unknown) => logEvent('error', 'database', { detail: withoutStack(message) }),
  deprecate: (method: string, alternative: string) => logEvent('warn', 'database', { detail: `${method} is deprecated: use ${alternative}` }),
  debug: () => {},
};

/**
 * The knex configuration of either database kind (shared by the app and the knex CLI's knexfile).
 * The embedded one is loaded only when asked for (db/embedded-knex.ts).
 */
export async function knexConfig(options: DatabaseOptions): Promise<Knex.Config> {
  if (!options.databaseUrl) return (await import('./embedded-knex.js')).embeddedKnexConfig(options);
  return postgresConfig(options as DatabaseOptions & { databaseUrl: string });
}

function postgresConfig(options: DatabaseOptions & { databaseUrl: string }): Knex.Config {
  const { timeoutMs, schema } = options;
  // Behind a transaction pooler nothing is set on a connection: the schema is set per transaction.
  const pooled = options.pooler === 'transaction';
  const timed = timeoutMs ? queryTimeLimit(timeoutMs, !pooled) : undefined;
  const perTransaction = pooled && schema ? schemaPerTransaction(schema) : undefined;
  const afterCreate = (connection: pg.Client, done: (err: Error | null, connection: pg.Client) => void) => {
    perTransaction?.(connection);
    if (timed) timed.afterCreate(connection, done);
    else done(null, connection);
  };
  const config: Knex.Config = {
    log: knexLog,
    client: 'pg',
    connection: timeoutMs ? { connectionString: options.databaseUrl, connectionTimeoutMillis: timeoutMs, keepAlive: true } : options.databaseUrl,
    searchPath: schema && !pooled ? [schema] : undefined,
    // A new connection gets the limit too: to connect (connectionTimeoutMillis), and for the
    // whole of its set-up (createTimeoutMillis: its first queries run before afterCreate).
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      ...(timed || perTransaction ? { afterCreate } : {}),
      ...(timed ? { validate: timed.validate, createTimeoutMillis: timeoutMs } : {}),
    },
    acquireConnectionTimeout: timeoutMs ?? 5000,
  };
  return pooled ? markTransactionPooler(config) : config;
}

type Callback = (err: Error | null, result?: unknown) => void;

/**
 * A time limit on every query of a pooled pg connection, in both of pg's forms: with a callback
 * (knex's queries) and returning a promise (the engine's compiled statements, sql/runner.ts);
 * streams (a submittable) are left alone. pg's own query_timeout is not used: it leaves the
 * connection in the pool, busy with the query that timed out (every later query on it would wait
 * behind that one), and would end a stream that reads for long. Here the connection is ended (its
 * socket destroyed when a query is under way) and refused by the pool's validation, so it is never
 * handed out again. The server's statement_timeout is set a little below the same limit.
 */
function queryTimeLimit(timeoutMs: number, serverLimit: boolean) {
  const timedOut = new WeakSet<pg.Client>();
  const afterCreate = (connection: pg.Client, done: (err: Error | null, connection: pg.Client) => void) => {
    const query = connection.query as (...args: unknown[]) => unknown;
    const giveUp = () => {
      timedOut.add(connection);
      connection.end().catch(() => {});
      return new DatabaseTimeoutError(timeoutMs);
    };
    (connection as { query: unknown }).query = function limitedQuery(this: pg.Client, ...args: unknown[]) {
      if (typeof (args[0] as { submit?: unknown } | undefined)?.submit === 'function') return query.apply(this, args);
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === 'function') {
        let settled = false;
        const timer = setTimeout(() => {
          settled = true;
          (callback as Callback)(giveUp());
        }, timeoutMs);
        args[last] = (err: Error | null, result?: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          (callback as Callback)(err, result);
        };
        return query.apply(this, args);
      }
      const answer = query.apply(this, args) as Promise<unknown>;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(giveUp()), timeoutMs);
        answer.then(
          (result) => {
            clearTimeout(timer);
            resolve(result);
          },
          (err) => {
            clearTimeout(timer);
            reject(err);
          },
        );
      });
    };
    // The database gives up too, a little before the client does (a tenth of the limit, at most a
    // second): a statement that runs (or waits for a lock) that long is cancelled and rolled back,
    // so a write answered 503 for being slow is not applied later behind the client's back. (One
    // whose answer is lost on the way, in a network outage, may still have been applied)
    // Not behind a transaction pooler: the setting would stay on whichever server connection ran it.
    if (!serverLimit) return done(null, connection);
    const serverLimitMs = Math.max(1, Math.trunc(timeoutMs - Math.min(1000, timeoutMs / 10)));
    connection.query(`set statement_timeout = ${serverLimitMs}`, (err: Error | null) => {
      if (err) connection.end().catch(() => {});
      done(err, connection);
    });
  };
  return { afterCreate, validate: (connection: pg.Client) => !timedOut.has(connection) };
}

/**
 * A schema named in the configuration is made on first use, like the embedded database's folder;
 * under a lock, since "if not exists" does not keep two instances starting at once from colliding.
 */
export async function ensureSchema(db: Knex, schema: string | undefined): Promise<void> {
  if (!schema) return;
  await db.transaction(async (trx) => {
    await trx.raw(`select pg_advisory_xact_lock(hashtext('schema ' || ?))`, [schema]);
    await trx.raw('create schema if not exists ??', [schema]);
  });
}

/**
 * DATABASE_POOLER=auto made `transaction` or `none` by probing the connection (db/pooler.ts).
 * A probe that cannot connect says `none`: the first query then reports why the database is unusable.
 */
export async function resolvePooler(options: DatabaseOptions): Promise<DatabaseOptions> {
  if (options.pooler !== 'auto' || !options.databaseUrl) return options;
  const found = await behindTransactionPooler(options.databaseUrl, options.timeoutMs ?? 5000).catch(() => false);
  if (found) logEvent('info', 'the database is reached through a transaction pooler: no named prepared statements, the schema set in each transaction (DATABASE_POOLER)');
  return { ...options, pooler: found ? 'transaction' : 'none' };
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  if (options.databaseUrl) {
    const instance = knex(await knexConfig(await resolvePooler(options)));
    return { knex: instance, kind: 'postgres', close: () => instance.destroy() };
  }
  const release = options.dataDir ? await lockDataDir(options.dataDir) : undefined;
  let instance: Knex;
  try {
    instance = await (await import('./embedded-knex.js')).openEmbeddedKnex(options);
  } catch (err) {
    await release?.();
    if (!options.dataDir || isStorageFull(err)) throw err;
    throw new EmbeddedDatabaseError(
      `The embedded database in ${options.dataDir} cannot be opened (${(err as Error)?.message ?? err}). ` +
        'A first start stopped while it created the database leaves such a folder: if it holds nothing you need, ' +
        'delete the folder and start again; otherwise restore it from a copy.',
    );
  }
  return {
    knex: instance,
    kind: 'pglite',
    async close() {
      await instance.destroy();
      await release?.();
    },
  };
}

