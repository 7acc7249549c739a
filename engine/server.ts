// `npm start`: read the configuration, open the database (embedded PGlite under DATA_DIR unless
// DATABASE_URL is set), migrate, listen, and close everything on SIGTERM/SIGINT.
// Every start-up failure a person can fix (configuration, a locked data folder, a bad definition,
// a busy port, an unreachable database) ends the process with exit code 1 and one clear message.
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { modules } from '../resources/modules.js';
import { createApp, type App } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DataDirLockedError, ensureSchema, openDatabase, type Database } from './db.js';
import { migrate, migrationFolders, MissingMigrationsError } from './migrations.js';
import { RESOURCES_DIR } from './paths.js';
import { DefinitionError } from './resource/load.js';
import { logEvent } from './log.js';

/** How long open requests may take to finish after SIGTERM before their connections are cut. */
const SHUTDOWN_GRACE_MS = 10_000;

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

export async function start(config: Config): Promise<{ server: Server; database: Database; stop(): Promise<void> }> {
  if (config.jwt.generated) log('warn', 'JWT_SECRET / JWT_REFRESH_SECRET not set: using secrets generated for this process (tokens die with it)');
  const resourceDirs = [RESOURCES_DIR, ...config.extraResourceDirs];
  const migrationDirs = migrationFolders(config.extraResourceDirs);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    schema: config.databaseSchema,
    dataDir: config.databaseUrl ? undefined : config.dataDir,
  });
  let app: App | undefined;
  try {
    // Definitions first: a mistake in one is reported before anything touches the database.
    app = createApp({
      config,
      db: database.knex,
      resourceDirs,
      modules,
      logError: (err) => log('error', 'request failed', { error: String((err as Error)?.stack ?? err) }),
      log,
    });
    const { koa, engine, rateLimiting } = app;
    await ensureSchema(database.knex, config.databaseSchema);
    const applied = await migrate(database.knex, migrationDirs);
    if (applied.length) log('info', 'migrations applied', { migrations: applied });
    await app.ready();
    const server = createServer(koa.callback());
    await listen(server, config);
    const address = server.address();
    log('info', 'listening', {
      port: typeof address === 'object' && address ? address.port : config.port,
      database: database.kind === 'pglite' ? `embedded (${config.dataDir})` : `postgresql${config.databaseSchema ? ` (schema ${config.databaseSchema})` : ''}`,
      rateLimits: rateLimiting.store?.driver ?? 'off',
    });
    const stop = async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Idle keep-alive connections would hold close() open; requests in flight get a grace period.
      server.closeIdleConnections();
      const cut = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
      await closed;
      clearTimeout(cut);
      // After the last request: a response may still have been sending its mail.
      await engine.mailer.close();
      await app!.close();
      await database.close();
    };
    return { server, database, stop };
  } catch (err) {
    await app?.close();
    await database.close();
    throw databaseProblem(err, config) ?? err;
  }
}

async function main() {
  let running: Awaited<ReturnType<typeof start>>;
  try {
    running = await start(loadConfig());
  } catch (err) {
    const explained = [ConfigError, DataDirLockedError, DefinitionError, StartupError, MissingMigrationsError].some((kind) => err instanceof kind);
    console.error(explained ? (err as Error).message : err);
    process.exit(1);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', 'shutting down', { signal });
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

// Run only as the entry point (`npm start`), not when a test imports start().
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
