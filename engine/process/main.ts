// The process model's one entry (`npm start` calls runProcess with the application's Project). On
// the embedded database, or with WEB_CONCURRENCY=1, this process serves (serving.ts; a new
// embedded data folder is first made by a child: first-start.ts). On PostgreSQL it is otherwise a
// node:cluster's primary (primary.ts): a child prepares the cluster (preparation.ts: checks the
// definitions and migrates, once), then WEB_CONCURRENCY workers (worker.ts, serving.ts; one per
// core by default) serve and share the port. The primary loads only what it needs for that (the
// configuration, the log, the workers' shared rate-limit counts), never the app: its memory stays
// small.
import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { keepGeneratedSecrets, type KeptSecrets } from '../config/kept-secrets.js';
import { logEvent as log, rssMiB, setLogLevel } from '../log/log.js';
import { handOverSignals, PREPARE_ENV, prepareInChild } from './prepare-in-child.js';
import type { Project } from './project.js';
import { STOP_MARGIN_MS } from './shutdown.js';
import { exitWithStartupFailure, unexpectedFailure } from './startup-failure.js';

/** The configuration, with generated JWT secrets kept in the data folder where they may be (kept-secrets.ts). */
function readConfig(): KeptSecrets {
  try {
    return keepGeneratedSecrets(loadConfig());
  } catch (err) {
    if (err instanceof ConfigError) exitWithStartupFailure(err.message);
    exitWithStartupFailure(unexpectedFailure(err), err);
  }
}

/** How many processes serve: one on the embedded database, whatever WEB_CONCURRENCY says. */
function processCount(config: Config): number {
  if (!config.databaseUrl) {
    if ((config.webConcurrency ?? 1) > 1) log('warn', 'WEB_CONCURRENCY is ignored with the embedded database: one process serves it (set DATABASE_URL to use several)');
    return 1;
  }
  return config.webConcurrency ?? availableParallelism();
}

/**
 * Runs this process as what it is: a single serving process, a cluster's primary, its preparation
 * or one of its workers. The application is loaded (loadProject) only by a process that builds
 * the app: a primary never does, and its memory stays small.
 */
export async function runProcess(loadProject: () => Promise<Project>): Promise<void> {
  const { config, kept, file } = readConfig();
  setLogLevel(config.logLevel);
  if (process.env[PREPARE_ENV]) return (await import('./preparation.js')).prepareCluster(config, await loadProject());
  if (cluster.isWorker) return (await import('./serving.js')).serveWorker(config, await loadProject());
  if (kept) log('info', `JWT_SECRET / JWT_REFRESH_SECRET not set: tokens are signed with secrets ${kept === 'made' ? 'generated now and kept' : 'kept'} in the data folder (owner-only), so they stay valid across restarts`, { file });
  else if (config.jwt.generated) log('warn', 'JWT_SECRET / JWT_REFRESH_SECRET not set: using secrets generated for this process (tokens die with it)');
  if (config.env === 'production' && !config.mail.smtpUrl) log('warn', 'SMTP_URL not set: mail is not delivered, and its log lines leave out the codes and links it carries');
  const workers = processCount(config);
  if (workers === 1) return (await import('./first-start.js')).serveAloneFirstPrepared(config, loadProject);
  if ((await prepareInChild({ subject: 'the cluster', next: 'starting the workers' })) !== 0) process.exit(1);
  // The primary serves the cluster's metrics (its workers' added up) before forking them, so that a
  // metrics port in use stops the start before anything serves.
  if (config.metrics) {
    const { serveClusterMetrics } = await import('../metrics/cluster.js');
    const { MetricsPortError } = await import('../metrics/server.js');
    await serveClusterMetrics(config.metrics, log).catch((err) =>
      err instanceof MetricsPortError ? exitWithStartupFailure(err.message) : exitWithStartupFailure(unexpectedFailure(err), err),
    );
  }
  const { runPrimary } = await import('./primary.js');
  handOverSignals();
  runPrimary({
    workers,
    // Generated secrets are made once, here: every worker must accept the tokens of the others.
    env: { JWT_SECRET: config.jwt.secret, JWT_REFRESH_SECRET: config.jwt.refreshSecret },
    stopWithinMs: config.shutdownDelayMs + config.shutdownGraceMs + STOP_MARGIN_MS,
    rateLimitMaxKeys: config.rateLimits.maxKeys,
    log,
    rssMiB,
  });
}

