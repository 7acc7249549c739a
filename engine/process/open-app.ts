// What a serving process and a cluster's preparation both do first: open the database (embedded
// PGlite under DATA_DIR unless DATABASE_URL is set) and build the app. Every start-up failure a
// person can fix (configuration, a locked data folder, a bad definition, a busy port, an
// unreachable or silent database) ends the process with exit code 1 and one clear message: one
// JSON log line and the same text on stderr (startup-failure.ts).
import type { App } from '../app.js';
import { ConfigError, type Config } from '../config/config.js';
import { configuredDatabase, DataDirLockedError, EmbeddedDatabaseError, openDatabase, type Database } from '../db/database.js';
import { MissingMigrationsError } from '../db/migrations.js';
import { logEvent as log } from '../log/log.js';
import { DefinitionError } from '../resource/load.js';
import { StorageFullError } from '../storage-full.js';
import { CLOSE_LIMIT_MS } from './shutdown.js';
import type { Project } from './project.js';
import { exitWithStartupFailure, unexpectedFailure } from './startup-failure.js';
import { within } from '../time-limit.js';

/** A start-up failure whose message says all there is to say (no stack needed). */
export class StartupError extends Error {}

/** DATABASE_URL as a message may show it: without its password. */
export function shownDatabaseUrl(config: Config): string {
  const url = new URL(config.databaseUrl!);
  if (url.password) url.password = '***';
  return url.href;
}

/** Connection failures name the setting to check; the URL is shown without its password. */
export function databaseProblem(err: any, config: Config): StartupError | undefined {
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

export interface OpenApp {
  database: Database;
  app: App;
  /** How long opening the database and building the app took, in ms (the `listening` line's `startupMs`). */
  tookMs: { database: number; app: number };
  /** Closes what openApp opened: the mail transport, the app's own connections, the database. */
  close(): Promise<void>;
}

/** What start() and a cluster's preparation do first: open the database and build the app once. */
export async function openApp(config: Config, project: Project): Promise<OpenApp> {
  const began = performance.now();
  const database = await openDatabase({ ...configuredDatabase(config), timeoutMs: config.databaseTimeoutMs });
  const opened = performance.now();
  try {
    // Definitions first: a mistake in one is reported before anything is written to the database.
    const app = project.createApp(config, database.knex, log);
    const close = async () => {
      await app.engine.mailer.close();
      await app.close();
      await database.close();
    };
    return { database, app, close, tookMs: { database: Math.round(opened - began), app: Math.round(performance.now() - opened) } };
  } catch (err) {
    await database.close();
    throw err;
  }
}

/** What a failed start opened is closed, for as long as that takes within CLOSE_LIMIT_MS (a silent database may never let go). */
export async function closeAfterFailure(opened: Pick<OpenApp, 'close'> | undefined): Promise<void> {
  if (opened) await within(opened.close(), CLOSE_LIMIT_MS, 'Closing after a failed start').catch(() => {});
}

/** Whether the error's message says all a person needs (no stack). */
export const isExplained = (err: unknown) =>
  [ConfigError, DataDirLockedError, EmbeddedDatabaseError, DefinitionError, StartupError, MissingMigrationsError, StorageFullError].some((kind) => err instanceof kind);

/** A start-up failure as a person reads it: the message of one a person can fix, else the first line of what is known. */
export function describeFailure(err: unknown): string {
  // Migrations write (their lock row at least): a start on a full disk says so.
  if (err instanceof StorageFullError) return err.detail;
  return isExplained(err) ? (err as Error).message : unexpectedFailure(err);
}

/** Exits 1 saying why; a failure nobody foresaw keeps its stack, inside the log line. */
export function fail(err: unknown): never {
  return exitWithStartupFailure(describeFailure(err), isExplained(err) ? undefined : err);
}
