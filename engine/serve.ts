// What a serving process does (a single process, or a cluster's worker), and a cluster's
// preparation (check definitions, migrate once) run in a child of the primary: open the
// database (embedded PGlite under DATA_DIR unless DATABASE_URL is set), build the app, migrate,
// listen, and close everything on SIGTERM/SIGINT. Loaded only by processes that do this: a
// cluster's primary never loads the app.
// Every start-up failure a person can fix (configuration, a locked data folder, a bad definition,
// a busy port, an unreachable or silent database) ends the process with exit code 1 and one clear
// message: one JSON log line and the same text on stderr (startup-failure.ts).
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { inspect } from 'node:util';
import { modules } from '../resources/modules.js';
import { createApp, type App } from './app.js';
import { portClosed, reportServing, reportStartupFailure } from './cluster/worker.js';
import { ConfigError, type Config } from './config.js';
import { DataDirLockedError, ensureSchema, openDatabase, type Database } from './db.js';
import { DatabaseTimeoutError } from './db-errors.js';
import { usesTransactionPooler } from './db-pooler.js';
import { logEvent, rootLogger, rssMiB } from './log.js';
import { exitWithStartupFailure, unexpectedFailure } from './startup-failure.js';
import { within } from './time-limit.js';
import { migrate, migrationFolders, MissingMigrationsError } from './migrations.js';
import { RESOURCES_DIR } from './paths.js';
import { createStoppableServer } from './http/server.js';
import { CLOSE_LIMIT_MS } from './shutdown.js';
import { DefinitionError } from './resource/load.js';
import { StorageFullError } from './storage-full.js';

const log = logEvent;

/** A start-up failure whose message says all there is to say (no stack needed). */
class StartupError extends Error {}

/** DATABASE_URL as a message may show it: without its password. */
function shownDatabaseUrl(config: Config): string {
  const url = new URL(config.databaseUrl!);
  if (url.password) url.password = '***';
  return url.href;
}

/** Connection failures name the setting to check; the URL is shown without its password. */
function databaseProblem(err: any, config: Config): StartupError | undefined {
  const code = err?.code;
  if (!config.databaseUrl || typeof code !== 'string') return undefined;
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'nothing accepts connections there',
    ENOTFOUND: 'the host name does not resolve',
    ETIMEDOUT: 'the connection timed out',
    '28P01': 'the password was refused',
    '28000': 'the user may not connect',
    '3D000': 'the database does not exist',
  };
  const reason = reasons[code];
  return reason ? new StartupError(`Cannot use the PostgreSQL database of DATABASE_URL (${shownDatabaseUrl(config)}): ${reason}.`) : undefined;
}

/** Whether an error says the database (or the wait for a connection to it) ran out of time. */
const isTimeout = (err: any) =>
  err instanceof DatabaseTimeoutError || err?.name === 'KnexTimeoutError' || /time(d)? ?out/i.test(String(err?.message ?? ''));

/**
 * The first thing start-up asks of PostgreSQL, within DATABASE_TIMEOUT_MS: a database that
 * accepts connections but never answers (hung, or behind a network that drops packets) stops
 * start-up with a message saying so, instead of a migration waiting on it without a limit.
 */
async function databaseAnswers(database: Database, config: Config): Promise<void> {
  if (database.kind !== 'postgres') return;
  const limitMs = config.databaseTimeoutMs;
  try {
    // The pool's own limits end the wait at limitMs; the extra second only guards against a wait they miss.
    await within(database.knex.raw('select 1'), limitMs + 1000, 'the first query');
  } catch (err) {
    const known = databaseProblem(err, config);
    if (known) throw known;
    const shown = shownDatabaseUrl(config);
    if (isTimeout(err)) {
      throw new StartupError(
        `The PostgreSQL database of DATABASE_URL (${shown}) did not answer within ${limitMs} ms at start-up (DATABASE_TIMEOUT_MS): check that it is running and reachable.`,
      );
    }
    throw new StartupError(`Cannot use the PostgreSQL database of DATABASE_URL (${shown}): ${String((err as Error)?.message ?? err).split('\n')[0]}.`);
  }
}

async function listen(server: Server, config: Config): Promise<void> {
  try {
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject).listen(config.port, config.host));
  } catch (err: any) {
    if (err?.code === 'EADDRINUSE') throw new StartupError(`Port ${config.port} on ${config.host} is already in use: stop what uses it or set PORT to another port.`);
    if (err?.code === 'EACCES') throw new StartupError(`Not allowed to listen on port ${config.port}: set PORT to a port above 1023.`);
    if (err?.code === 'EADDRNOTAVAIL') throw new StartupError(`HOST ${config.host} is not an address of this machine.`);
    throw err;
  }
}

interface OpenApp {
  database: Database;
  app: App;
  /** Closes what openApp opened: the mail transport, the app's own connections, the database. */
  close(): Promise<void>;
}

/** What start() and a cluster's preparation do first: open the database and build the app once. */
async function openApp(config: Config): Promise<OpenApp> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
    embedded: config.embedded,
    timeoutMs: config.databaseTimeoutMs,
    pooler: config.databasePooler,
  });
  try {
    // Definitions first: a mistake in one is reported before anything touches the database.
    const app = createApp({
      config,
      db: database.knex,
      resourceDirs: [RESOURCES_DIR, ...config.extraResourceDirs],
      modules,
      log,
    });
    const close = async () => {
      await app.engine.mailer.close();
      await app.close();
      await database.close();
    };
    return { database, app, close };
  } catch (err) {
    await database.close();
    throw err;
  }
}

async function migrateDatabase(database: Database, config: Config): Promise<void> {
  await databaseAnswers(database, config);
  // A migration may take longer than a request may wait for the database (an index on a large
  // table): on PostgreSQL it runs on connections of its own, without DATABASE_TIMEOUT_MS.
  const pooler = usesTransactionPooler(database.knex) ? 'transaction' : 'none';
  const untimed = database.kind === 'postgres' ? await openDatabase({ databaseUrl: config.databaseUrl, schema: config.databaseSchema, pooler }) : database;
  try {
    await ensureSchema(untimed.knex, config.databaseSchema);
    const applied = await migrate(untimed.knex, migrationFolders(config.extraResourceDirs));
    if (applied.length) log('info', 'migrations applied', { migrations: applied });
  } finally {
    if (untimed !== database) await untimed.close();
  }
}

interface StartOptions {
  /** False in a cluster's workers: the cluster was prepared (migrated) once before they were forked. */
  migrate?: boolean;
}

async function start(config: Config, options: StartOptions = {}): Promise<{ server: Server; database: Database; stop(): Promise<void> }> {
  let opened: OpenApp | undefined;
  try {
    opened = await openApp(config);
    const { database, app, close } = opened;
    const { koa, rateLimiting } = app;
    if (options.migrate !== false) await migrateDatabase(database, config);
    await app.ready();
    const { server, stop: stopServing } = createStoppableServer(koa.callback(), config);
    await listen(server, config);
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    log('info', 'listening', {
      port,
      database: database.kind === 'pglite' ? `embedded (${config.dataDir})` : `postgresql${config.databaseSchema ? ` (schema ${config.databaseSchema})` : ''}`,
      rateLimits: rateLimiting.store?.kind ?? 'off',
      pid: process.pid,
      ...(cluster.isWorker ? { worker: cluster.worker!.id } : {}),
      rssMiB: rssMiB(),
    });
    // The primary logs `cluster started` once every worker has said it serves: this worker's
    // `listening` line goes out first (lines are otherwise held to the end of the turn).
    if (cluster.isWorker) {
      rootLogger.flush();
      reportServing(port);
    }
    const stop = async () => {
      const began = Date.now();
      // Requests in flight get SHUTDOWN_GRACE_MS to finish (see http/server.ts); the rest are cut.
      const { cut } = await stopServing(config.shutdownGraceMs, cluster.isWorker ? portClosed : undefined);
      if (cut) log('warn', 'requests still running at the end of the grace period were cut', { requests: cut, graceMs: config.shutdownGraceMs, pid: process.pid });
      // After the last request: a response may still have been sending its mail. A database or
      // Redis that hangs must not keep the process from ending.
      await within(close(), CLOSE_LIMIT_MS, 'Closing the database, the rate-limit store and the mail transport');
      log('info', 'stopped', { pid: process.pid, ms: Date.now() - began, cutRequests: cut });
    };
    return { server, database, stop };
  } catch (err) {
    await closeAfterFailure(opened);
    throw databaseProblem(err, config) ?? err;
  }
}

/** What a failed start opened is closed, for as long as that takes within CLOSE_LIMIT_MS (a silent database may never let go). */
async function closeAfterFailure(opened: OpenApp | undefined): Promise<void> {
  if (opened) await within(opened.close(), CLOSE_LIMIT_MS, 'Closing after a failed start').catch(() => {});
}

/**
 * A cluster's preparation, before its workers are forked, in a process of its own: checks what
 * start() would (definitions, limits, the database) and migrates, once, so that the workers start
 * on a migrated database without racing each other to migrate it. Its rate limits stay off: they
 * count in the workers. Exits 0 when done, else 1 with the message.
 */
export async function prepareCluster(config: Config): Promise<never> {
  let opened: OpenApp | undefined;
  try {
    opened = await openApp({ ...config, rateLimits: { ...config.rateLimits, enabled: false } });
    await migrateDatabase(opened.database, config);
  } catch (err) {
    await closeAfterFailure(opened);
    return fail(databaseProblem(err, config) ?? err);
  }
  await opened.close();
  process.exit(0);
}

/** Whether the error's message says all a person needs (no stack). */
const isExplained = (err: unknown) =>
  [ConfigError, DataDirLockedError, DefinitionError, StartupError, MissingMigrationsError, StorageFullError].some((kind) => err instanceof kind);

/** A start-up failure as a person reads it: the message of one a person can fix, else the first line of what is known. */
function describeFailure(err: unknown): string {
  // Migrations write (their lock row at least): a start on a full disk says so.
  if (err instanceof StorageFullError) return err.detail;
  return isExplained(err) ? (err as Error).message : unexpectedFailure(err);
}

/** Exits 1 saying why; a failure nobody foresaw keeps its stack, inside the log line. */
function fail(err: unknown): never {
  return exitWithStartupFailure(describeFailure(err), isExplained(err) ? undefined : err);
}

/** Serves until SIGTERM/SIGINT, then stops gracefully (a worker's primary forwards them). */
async function serve(config: Config, options: StartOptions, onFailure: (err: unknown) => never | void) {
  let running: Awaited<ReturnType<typeof start>>;
  try {
    running = await start(config, options);
  } catch (err) {
    return onFailure(err);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', 'shutting down', { signal, pid: process.pid });
    try {
      await running.stop();
      process.exit(0);
    } catch (err) {
      log('error', 'could not stop cleanly', { error: err instanceof Error ? err.message : inspect(err), pid: process.pid });
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** The only process: it migrates, then serves. */
export const serveAlone = (config: Config) => serve(config, {}, fail);

/** A cluster's worker: the cluster was migrated before it; a failure to start is told to the primary, which says it once for all. */
export const serveWorker = (config: Config) =>
  serve(config, { migrate: false }, (err) => {
    // The primary prints the message; the stack of a failure nobody foresaw is this worker's to log.
    if (!isExplained(err)) log('error', describeFailure(err), { err });
    reportStartupFailure(describeFailure(err));
  });
