// What a serving process does (a single process, or a cluster's worker): open the app (open-app.ts),
// migrate unless the cluster was prepared before it (preparation.ts), listen, and close everything
// on SIGTERM/SIGINT. Loaded only by processes that serve: a cluster's primary never loads the app.
import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { inspect } from 'node:util';
import type { Config } from '../config/config.js';
import type { Database } from '../db/database.js';
import { createStoppableServer } from '../http/stoppable-server.js';
import { logEvent, rootLogger, rssMiB } from '../log/log.js';
import { within } from '../time-limit.js';
import { closeAfterFailure, databaseProblem, describeFailure, fail, isExplained, openApp, StartupError, type OpenApp } from './open-app.js';
import { migrateDatabase } from './preparation.js';
import type { Project } from './project.js';
import { CLOSE_LIMIT_MS } from './shutdown.js';
import { shrinkHeapWhenQuiet } from './quiet-heap.js';
import { portClosed, reportServing, reportStartupFailure } from './worker.js';
import { answerMetricsRequests } from '../metrics/cluster.js';
import { closeMetrics, MetricsPortError, portOf, serveMetrics } from '../metrics/server.js';

const log = logEvent;

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

interface StartOptions {
  project: Project;
  /** False in a cluster's workers (the cluster was prepared, migrated, once before they were forked) and after a child prepared a new data folder. */
  migrate?: boolean;
}

async function start(config: Config, options: StartOptions): Promise<{ server: Server; database: Database; stop(): Promise<void> }> {
  let opened: OpenApp | undefined;
  // performance.now() counts from the process's start: before this, Node and the code loaded (and on a
  // first start a child prepared the data folder: first-start.ts).
  const began = performance.now();
  try {
    opened = await openApp(config, options.project);
    const { database, app, close } = opened;
    const { koa, rateLimiting } = app;
    const migrationsBegan = performance.now();
    if (options.migrate !== false) await migrateDatabase(database, config, options.project);
    const listenBegan = performance.now();
    await app.ready();
    const { server, stop: stopServing } = createStoppableServer(koa.callback(), config);
    await listen(server, config);
    // Metrics are served apart from the API: by this process when it serves alone, by the
    // primary in a cluster (which asks each worker for its own: metrics/cluster.ts).
    let metricsServer: Server | undefined;
    const { metrics } = app;
    if (metrics && cluster.isWorker) answerMetricsRequests(metrics.registry);
    else if (metrics && config.metrics) {
      const scrape = async () => ({ contentType: metrics.registry.contentType, text: await metrics.registry.metrics() });
      try {
        metricsServer = await serveMetrics(config.metrics, scrape, (err) => log('error', 'metrics could not be collected', { error: String(err) }));
      } catch (err) {
        server.close();
        throw err instanceof MetricsPortError ? new StartupError(err.message) : err;
      }
      log('info', 'metrics listening', { port: portOf(metricsServer), host: config.metrics.host, pid: process.pid });
    }
    const stopWatchingHeap = shrinkHeapWhenQuiet();
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    log('info', 'listening', {
      port,
      database: database.kind === 'pglite' ? `embedded (${config.dataDir})` : `postgresql${config.databaseSchema ? ` (schema ${config.databaseSchema})` : ''}`,
      rateLimits: rateLimiting.store?.kind ?? 'off',
      pid: process.pid,
      ...(cluster.isWorker ? { worker: cluster.worker!.id } : {}),
      rssMiB: rssMiB(),
      startedInMs: Math.round(performance.now()),
      startupMs: {
        load: Math.round(began),
        ...opened.tookMs,
        migrations: Math.round(listenBegan - migrationsBegan),
        listen: Math.round(performance.now() - listenBegan),
      },
    });
    // The primary logs `cluster started` once every worker has said it serves: this worker's
    // `listening` line goes out first (lines are otherwise held to the end of the turn).
    if (cluster.isWorker) {
      rootLogger.flush();
      reportServing(port);
    }
    const stop = async () => {
      const began = Date.now();
      // Readiness turns 503 at once; the process goes on serving for SHUTDOWN_DELAY_MS, long
      // enough for a load balancer polling it to send new requests elsewhere, then stops.
      app.drain();
      stopWatchingHeap();
      if (config.shutdownDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, config.shutdownDelayMs));
      // Requests in flight get SHUTDOWN_GRACE_MS to finish (see http/stoppable-server.ts); the rest are cut.
      const { cut } = await stopServing(config.shutdownGraceMs, cluster.isWorker ? portClosed : undefined);
      if (cut) log('warn', 'requests still running at the end of the grace period were cut', { requests: cut, graceMs: config.shutdownGraceMs, pid: process.pid });
      // After the last request: a response may still have been sending its mail. A database or
      // Redis that hangs must not keep the process from ending.
      if (metricsServer) await closeMetrics(metricsServer);
      await within(close(), CLOSE_LIMIT_MS, 'Closing the database, the rate-limit store and the mail transport');
      log('info', 'stopped', { pid: process.pid, ms: Date.now() - began, cutRequests: cut });
    };
    return { server, database, stop };
  } catch (err) {
    await closeAfterFailure(opened);
    throw databaseProblem(err, config) ?? err;
  }
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

/** The only process: it migrates (unless `migrated`: a child prepared its new data folder just before), then serves. */
export const serveAlone = (config: Config, project: Project, { migrated = false } = {}) => serve(config, { project, migrate: !migrated }, fail);

/** A cluster's worker: the cluster was migrated before it; a failure to start is told to the primary, which says it once for all. */
export const serveWorker = (config: Config, project: Project) =>
  serve(config, { project, migrate: false }, (err) => {
    // The primary prints the message; the stack of a failure nobody foresaw is this worker's to log.
    if (!isExplained(err)) log('error', describeFailure(err), { err });
    reportStartupFailure(describeFailure(err));
  });
