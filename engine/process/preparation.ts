// A preparation, run in a child before anything serves (prepare-in-child.ts): a cluster's, before
// any worker is forked (check what a serving process would: definitions, limits, the database; and
// migrate once, so that the workers never race each other to migrate), and a new embedded data
// folder's (first-start.ts: create the database and migrate it). A single process migrates the
// same way before it serves (migrateDatabase).
import type { Config } from '../config/config.js';
import { configuredDatabase, ensureSchema, openDatabase, type Database } from '../db/database.js';
import { DatabaseTimeoutError } from '../db/errors.js';
import { usesTransactionPooler } from '../db/pooler.js';
import { migrate } from '../db/migrations.js';
import { logEvent as log, rssMiB } from '../log/log.js';
import { within } from '../time-limit.js';
import type { Project } from './project.js';
import { closeAfterFailure, databaseProblem, fail, openApp, shownDatabaseUrl, StartupError, type OpenApp } from './open-app.js';

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

export async function migrateDatabase(database: Database, config: Config, project: Project): Promise<void> {
  await databaseAnswers(database, config);
  // A migration may take longer than a request may wait for the database (an index on a large
  // table): on PostgreSQL it runs on connections of its own, without DATABASE_TIMEOUT_MS.
  const pooler = usesTransactionPooler(database.knex) ? 'transaction' : 'none';
  const untimed = database.kind === 'postgres' ? await openDatabase({ databaseUrl: config.databaseUrl, schema: config.databaseSchema, pooler }) : database;
  try {
    await ensureSchema(untimed.knex, config.databaseSchema);
    const began = performance.now();
    const applied = await migrate(untimed.knex, project.migrationFolders(config));
    if (applied.length) log('info', 'migrations applied', { migrations: applied, pid: process.pid, durationMs: Math.round(performance.now() - began) });
  } finally {
    if (untimed !== database) await untimed.close();
  }
}

/**
 * The preparation, in a process of its own. A cluster's, before its workers are forked: checks
 * what start() would (definitions, limits, the database) and migrates, once, so that the workers
 * start on a migrated database without racing each other to migrate it; its rate limits stay off
 * (they count in the workers). A new embedded data folder's: opening the database creates it, then
 * it is migrated; the app is not built, since the one process that serves builds it right after
 * and says then what is wrong with a definition (building it twice made a first start half a
 * second longer). Exits 0 when done, else 1 with the message.
 */
export async function prepareCluster(config: Config, project: Project): Promise<never> {
  let opened: Pick<OpenApp, 'database' | 'close'> | undefined;
  try {
    if (config.databaseUrl) opened = await openApp({ ...config, rateLimits: { ...config.rateLimits, enabled: false } }, project);
    else {
      const database = await openDatabase(configuredDatabase(config));
      opened = { database, close: () => database.close() };
    }
    await migrateDatabase(opened.database, config, project);
  } catch (err) {
    await closeAfterFailure(opened);
    return fail(databaseProblem(err, config) ?? err);
  }
  await opened.close();
  log('info', 'database prepared', { pid: process.pid, startedInMs: Math.round(performance.now()), rssMiB: rssMiB() });
  process.exit(0);
}
