// `npm start`: read the configuration, open the database (embedded PGlite under DATA_DIR unless
// DATABASE_URL is set), migrate, listen, and close everything on SIGTERM/SIGINT. On PostgreSQL this
// process becomes a cluster's primary: it migrates once, then forks WEB_CONCURRENCY workers (one
// per core by default) that each do the rest and share the port.
// Every start-up failure a person can fix (configuration, a locked data folder, a bad definition,
// a busy port, an unreachable database) ends the process with exit code 1 and one clear message.
import cluster from 'node:cluster';
import { createServer, type Server } from 'node:http';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { inspect } from 'node:util';
import { modules } from '../resources/modules.js';
import { createApp, type App } from './app.js';
import { runPrimary } from './cluster/primary.js';
import { reportServing, reportStartupFailure } from './cluster/worker.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DataDirLockedError, ensureSchema, openDatabase, type Database } from './db.js';
import { migrate, migrationFolders, MissingMigrationsError } from './migrations.js';
import { RESOURCES_DIR } from './paths.js';
import { DefinitionError } from './resource/load.js';
import { logEvent } from './log.js';

/** How long open requests may take to finish after SIGTERM before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;
/** How long a cluster's primary waits beyond that grace for its workers to close their databases and exit. */
const STOP_MARGIN_MS = 5_000;

const log = logEvent;

/** A start-up failure whose message says all there is to say (no stack needed). */
class StartupError extends Error {}

/** Connection failures name the setting to check; the URL is shown without its password. */
function databaseProblem(err: any, config: Config): StartupError | undefined {
  const code = err?.code;
  if (!config.databaseUrl || typeof code !== 'string') return undefined;
  const url = new URL(config.databaseUrl);
  if (url.password) url.password = '***';
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'nothing accepts connections there',
    ENOTFOUND: 'the host name does not resolve',
    ETIMEDOUT: 'the connection timed out',
    '28P01': 'the password was refused',
    '28000': 'the user may not connect',
    '3D000': 'the database does not exist',
  };
  const reason = reasons[code];
  return reason ? new StartupError(`Cannot use the PostgreSQL database of DATABASE_URL (${url.href}): ${reason}.`) : undefined;
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

/** What start() and the cluster's primary do before serving: open the database and build the app once. */
async function openApp(config: Config): Promise<OpenApp> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
  });
  try {
    // Definitions first: a mistake in one is reported before anything touches the database.
    const app = createApp({
      config,
      db: database.knex,
      resourceDirs: [RESOURCES_DIR, ...config.extraResourceDirs],
      modules,
      logError: (err) => log('error', 'request failed', { error: String((err as Error)?.stack ?? err) }),
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
  await ensureSchema(database.knex, config.databaseSchema);
  const applied = await migrate(database.knex, migrationFolders(config.extraResourceDirs));
  if (applied.length) log('info', 'migrations applied', { migrations: applied });
}

/** Resident memory of this process in MiB, for the log lines a reader compares processes by. */
const rssMiB = () => Math.round(process.memoryUsage.rss() / 104_857.6) / 10;

export interface StartOptions {
  /** False in a cluster's workers: their primary migrated once before forking them. */
  migrate?: boolean;
}

export async function start(config: Config, options: StartOptions = {}): Promise<{ server: Server; database: Database; stop(): Promise<void> }> {
  let opened: OpenApp | undefined;
  try {
    opened = await openApp(config);
    const { database, app, close } = opened;
    const { koa, rateLimiting } = app;
    if (options.migrate !== false) await migrateDatabase(database, config);
    await app.ready();
    const server = createServer(koa.callback());
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
    if (cluster.isWorker) reportServing(port);
    const stop = async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections would hold close() open; requests in flight get a grace period.
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(cut);
      // After the last request: a response may still have been sending its mail.
      await close();
    };
    return { server, database, stop };
  } catch (err) {
    await opened?.close();
    throw databaseProblem(err, config) ?? err;
  }
}

/**
 * The cluster's primary, before it forks: checks what start() would (definitions, limits, the
 * database) and migrates, once, so that its workers start on a migrated database, without racing
 * each other to migrate it. Its rate limits stay off: they count in the workers.
 */
async function prepareCluster(config: Config): Promise<void> {
  let opened: OpenApp | undefined;
  try {
    opened = await openApp({ ...config, rateLimits: { ...config.rateLimits, enabled: false } });
    await migrateDatabase(opened.database, config);
  } catch (err) {
    throw databaseProblem(err, config) ?? err;
  } finally {
    await opened?.close();
  }
}

/** A start-up failure as a person reads it: the message of one a person can fix, else everything known. */
function describeFailure(err: unknown): string {
  const explained = [ConfigError, DataDirLockedError, DefinitionError, StartupError, MissingMigrationsError].some((kind) => err instanceof kind);
  return explained ? (err as Error).message : inspect(err);
}

function fail(err: unknown): never {
  console.error(describeFailure(err));
  process.exit(1);
}

/** How many processes serve: one on the embedded database, whatever WEB_CONCURRENCY says. */
function processCount(config: Config): number {
  if (!config.databaseUrl) {
    if ((config.webConcurrency ?? 1) > 1) log('warn', 'WEB_CONCURRENCY is ignored with the embedded database: one process serves it (set DATABASE_URL to use several)');
    return 1;
  }
  return config.webConcurrency ?? availableParallelism();
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
      console.error(err);
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function main() {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    return fail(err);
  }
  // A worker reports a failed start to its primary, which says it once for all of them.
  if (cluster.isWorker) return serve(config, { migrate: false }, (err) => reportStartupFailure(describeFailure(err)));
  if (config.jwt.generated) log('warn', 'JWT_SECRET / JWT_REFRESH_SECRET not set: using secrets generated for this process (tokens die with it)');
  const workers = processCount(config);
  if (workers === 1) return serve(config, {}, fail);
  try {
    await prepareCluster(config);
  } catch (err) {
    return fail(err);
  }
  runPrimary({
    workers,
    // Generated secrets are made once, here: every worker must accept the tokens of the others.
    env: { JWT_SECRET: config.jwt.secret, JWT_REFRESH_SECRET: config.jwt.refreshSecret },
    stopWithinMs: SHUTDOWN_GRACE_MS + STOP_MARGIN_MS,
    rateLimitMaxKeys: config.rateLimits.maxKeys,
    log,
    rssMiB,
  });
}

// Run only as the entry point (`npm start`), not when a test imports start().
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
