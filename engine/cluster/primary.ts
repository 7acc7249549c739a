// The primary of `npm start` on PostgreSQL: it holds no HTTP server of its own. It forks the
// workers (they share the port through node:cluster), replaces one that dies, keeps the rate-limit
// counts they share when there is no Redis, and on SIGTERM/SIGINT stops them all gracefully: it
// tells the workers when none of them accepts connections any more (node:cluster has then closed
// the port), the moment from which their answers may close connections (see http/server.ts).
//
// A worker that fails to start is a configuration or environment problem (a bad setting, an
// unreachable database) that forking again would only repeat: on the first start the cluster
// stops at once, saying why; a replacement is retried a few times, ever later, then the same.
import cluster, { type Worker } from 'node:cluster';
import type { LogEvent } from '../log.js';
import { isCountsAsked, PrimaryCounts } from '../ratelimit/primary-counts.js';
import { isServing, isStartupFailed, isStoppedAccepting, type PortClosed } from './messages.js';

export interface PrimaryOptions {
  workers: number;
  /** Added to every worker's environment. */
  env: Record<string, string>;
  /** How long the workers may take to stop after SIGTERM before they are killed. */
  stopWithinMs: number;
  /** RATE_LIMIT_MAX_KEYS, for the counts kept here. */
  rateLimitMaxKeys: number;
  log: LogEvent;
  rssMiB(): number;
}

/** Replacements that fail to start in a row before the primary gives up. */
const MAX_FAILED_STARTS = 5;
/** The wait before the first retry of a failed replacement; doubled after each further failure. */
const FIRST_RETRY_MS = 1000;

interface Tracked {
  worker: Worker;
  listening: boolean;
  /** Why it could not start, when it said so. */
  failure?: string;
}

export function runPrimary(options: PrimaryOptions): void {
  const { log } = options;
  const tracked = new Map<number, Tracked>();
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  let failedStarts = 0;
  let retry: NodeJS.Timeout | undefined;
  let exitCode = 0;
  /** Counts for workers without Redis, made on the first question (none come with Redis or limits off). */
  let counts: PrimaryCounts | undefined;
  /** While stopping: the workers that have closed their listeners. */
  const stoppedAccepting = new Set<number>();
  let portClosed = false;

  const tellPortClosed = (worker: Worker) => {
    if (worker.isConnected()) worker.send({ portClosed: true } satisfies PortClosed);
  };
  /** Once every worker left has closed its listener, node:cluster has closed the port: the workers are told. */
  const portClosedWhenAllStopped = () => {
    if (phase !== 'stopping' || portClosed) return;
    if (![...tracked.keys()].every((id) => stoppedAccepting.has(id))) return;
    portClosed = true;
    for (const { worker } of tracked.values()) tellPortClosed(worker);
  };

  const fork = () => {
    const worker = cluster.fork(options.env);
    // A send to a worker that just died fails; its end is handled by ended().
    worker.on('error', () => {});
    tracked.set(worker.id, { worker, listening: false });
    // Its last words (why it could not start) are read before its channel closes: decide after both.
    let exit: [code: number, signal: string] | undefined;
    let disconnected = false;
    worker.once('exit', (code: number, signal: string) => {
      exit = [code, signal];
      if (disconnected) ended(worker, ...exit);
    });
    worker.once('disconnect', () => {
      disconnected = true;
      if (exit) ended(worker, ...exit);
    });
  };

  const exitWhenEmpty = () => {
    if (tracked.size > 0) return;
    counts?.close();
    process.exit(exitCode);
  };

  /** Stops every worker (SIGTERM or the signal received), and exits once they are all gone. */
  const stop = (signal: NodeJS.Signals) => {
    phase = 'stopping';
    clearTimeout(retry);
    for (const { worker } of tracked.values()) worker.process.kill(signal);
    setTimeout(() => {
      exitCode = 1;
      for (const { worker } of tracked.values()) {
        log('warn', 'a worker did not stop in time: killed', { pid: worker.process.pid });
        worker.process.kill('SIGKILL');
      }
    }, options.stopWithinMs).unref();
    exitWhenEmpty();
  };

  const giveUp = (message: string) => {
    console.error(message);
    exitCode = 1;
    stop('SIGTERM');
  };

  cluster.on('message', (worker, message) => {
    if (isCountsAsked(message)) {
      counts ??= new PrimaryCounts(options.rateLimitMaxKeys, log);
      if (worker.isConnected()) worker.send(counts.answer(message));
    } else if (isStartupFailed(message)) {
      const entry = tracked.get(worker.id);
      if (entry) entry.failure = message.startupFailed;
    } else if (isServing(message)) {
      serving(worker, message.serving.port);
    } else if (isStoppedAccepting(message)) {
      // One worker stopping alone (a signal sent to it): the others keep the port and take its clients.
      if (phase !== 'stopping') return tellPortClosed(worker);
      stoppedAccepting.add(worker.id);
      portClosedWhenAllStopped();
    }
  });

  const serving = (worker: Worker, port: number) => {
    const entry = tracked.get(worker.id);
    if (!entry) return;
    entry.listening = true;
    if (phase === 'running') failedStarts = 0;
    if (phase !== 'starting' || [...tracked.values()].some((t) => !t.listening)) return;
    phase = 'running';
    log('info', 'cluster started', {
      port,
      workers: tracked.size,
      workerPids: [...tracked.values()].map((t) => t.worker.process.pid),
      pid: process.pid,
      rssMiB: options.rssMiB(),
    });
  };

  function ended(worker: Worker, code: number, signal: string) {
    const entry = tracked.get(worker.id);
    if (!entry) return;
    tracked.delete(worker.id);
    if (phase === 'stopping') {
      // Stopped by the signal forwarded to it before its own handler was set: as clean as exit 0.
      if (code !== 0 && signal !== 'SIGTERM' && signal !== 'SIGINT') exitCode = 1;
      portClosedWhenAllStopped();
      return exitWhenEmpty();
    }
    // exitCode, not code: log lines redact a key named code (a verification code's).
    const why = { pid: worker.process.pid, exitCode: code, signal };
    if (entry.listening) {
      log('warn', 'a worker died: replacing it', why);
      return fork();
    }
    const failure = entry.failure ?? `A worker (pid ${worker.process.pid}) stopped before listening (exit code ${code}${signal ? `, signal ${signal}` : ''}).`;
    if (phase === 'starting' || ++failedStarts >= MAX_FAILED_STARTS) return giveUp(failure);
    const waitMs = FIRST_RETRY_MS * 2 ** (failedStarts - 1);
    log('warn', `a worker failed to start: another is forked in ${waitMs / 1000} s`, { ...why, failedStarts, error: failure });
    retry = setTimeout(fork, waitMs);
  }

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (phase === 'stopping') return;
      log('info', 'shutting down', { signal, pid: process.pid, workers: tracked.size });
      stop(signal);
    });
  }

  for (let i = 0; i < options.workers; i++) fork();
}
