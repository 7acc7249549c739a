// `npm start`: read the configuration, open the database (embedded PGlite under DATA_DIR unless
// DATABASE_URL is set), migrate, listen, and close everything on SIGTERM/SIGINT.
import type { Server } from 'node:http';
import { modules } from '../resources/modules.js';
import { createApp } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { DataDirLockedError, openDatabase, type Database } from './db.js';
import { migrate } from './migrations.js';
import { MIGRATIONS_DIR } from './paths.js';
import { DefinitionError } from './resource/load.js';

const log = (level: string, msg: string, extra: Record<string, unknown> = {}) =>
  console.log(JSON.stringify({ level, time: new Date().toISOString(), msg, ...extra }));

export async function start(config: Config): Promise<{ server: Server; database: Database; stop(): Promise<void> }> {
  if (config.jwt.generated) log('warn', 'JWT_SECRET / JWT_REFRESH_SECRET not set: using secrets generated for this process (tokens die with it)');
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.databaseUrl ? undefined : config.dataDir });
  try {
    const applied = await migrate(database.knex, [MIGRATIONS_DIR]);
    if (applied.length) log('info', 'migrations applied', { migrations: applied });
    const { koa } = createApp({ config, db: database.knex, modules, logError: (err) => log('error', 'request failed', { error: String((err as Error)?.stack ?? err) }) });
    const server = koa.listen(config.port, config.host);
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
    const address = server.address();
    log('info', 'listening', {
      port: typeof address === 'object' && address ? address.port : config.port,
      database: database.kind === 'pglite' ? `embedded (${config.dataDir})` : 'postgresql',
    });
    const stop = async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await database.close();
    };
    return { server, database, stop };
  } catch (err) {
    await database.close();
    throw err;
  }
}

async function main() {
  let running: Awaited<ReturnType<typeof start>>;
  try {
    running = await start(loadConfig());
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DataDirLockedError || err instanceof DefinitionError) {
      console.error(err.message);
    } else {
      console.error(err);
    }
    process.exit(1);
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log('info', 'shutting down', { signal });
    await running.stop();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
