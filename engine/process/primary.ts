// The primary of `npm start` on PostgreSQL: it holds no HTTP server of its own. It forks the
// workers (they share the port through node:cluster), replaces one that dies, keeps the rate-limit
// counts they share when there is no Redis, and on SIGTERM/SIGINT stops them all gracefully: it
// tells the workers when none of them accepts connections any more (node:cluster has then closed
// the port), the moment from which their answers may close connections (see http/stoppable-server.ts).
//
// Each worker has a slot. A worker that dies is replaced in its slot: at once when it had served
// for a while, else after a back-off that doubles with each quick death in a row (1 s up to 30 s),
// for as long as the cluster runs: one slot failing over and over never stops the others from
// serving. The cluster gives up (exit code 1, with the worker's message) only when no worker can
// start: nothing serves, and since anything last served every slot has failed to start.
import cluster, { type Worker } from 'node:cluster';
import type { LogEvent } from '../log/log.js';
import { isCountsAsked, PrimaryCounts } from '../ratelimit/primary-counts.js';
import { sayStartupFailure } from './startup-failure.js';
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

/** The wait before replacing a worker that died soon after it was forked; doubled after each further such death in its slot. */
const FIRST_RETRY_MS = 1000;
/** The longest wait before a replacement; also how long a worker must serve for its death to be replaced at once. */
const MAX_RETRY_MS = 30_000;

interface Tracked {
  worker: Worker;
  slot: Slot;
  /** Date.now() when it said it serves; undefined until then. */
  listeningSince?: number;
  /** Why it could not start, when it said so. */
  failure?: string;
}

/** One of the WEB_CONCURRENCY places a worker serves in, kept across its replacements. */
interface Slot {
  /** Quick deaths in a row (see FIRST_RETRY_MS), reset by a worker of the slot that served MAX_RETRY_MS. */
  quickDeaths: number;
  /** Whether its last worker failed to start (never listened) since any worker of the cluster last began to serve. */
  failedStart: boolean;
  retry?: NodeJS.Timeout;
}

/** The wait before a slot's next worker: none after a long-serving one, else the back-off. */
function replacementDelayMs(quickDeaths: number): number {
  return quickDeaths === 0 ? 0 : Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** (quickDeaths - 1));
}

export function runPrimary(options: PrimaryOptions): void {
  const { log } = options;
  const tracked = new Map<number, Tracked>();
  let phase: 'starting' | 'running' | 'stopping' = 'starting';
  const slots: Slot[] = Array.from({ length: options.workers }, () => ({ quickDeaths: 0, failedStart: false }));
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

  const fork = (slot: Slot) => {
    slot.retry = undefined;
    const worker = cluster.fork(options.env);
    // A send to a worker that just died fails; its end is handled by ended().
    worker.on('error', () => {});
    tracked.set(worker.id, { worker, slot });
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
    for (const slot of slots) clearTimeout(slot.retry);
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
    sayStartupFailure(message);
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

  const listening = () => [...tracked.values()].filter((t) => t.listeningSince !== undefined);

  let port: number | undefined;
  const serving = (worker: Worker, workerPort: number) => {
    const entry = tracked.get(worker.id);
    if (!entry) return;
    entry.listeningSince = Date.now();
    port = workerPort;
    // A worker serves: the slots that failed to start before may yet (see ended()).
    for (const slot of slots) slot.failedStart = false;
    startedWhenNoneStarting();
  };

  /** The cluster has started once a worker serves and none is still starting (a slot that failed to start is retried meanwhile). */
  const startedWhenNoneStarting = () => {
    if (phase !== 'starting' || listening().length === 0 || [...tracked.values()].some((t) => t.listeningSince === undefined)) return;
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
    const { slot } = entry;
    if (entry.listeningSince !== undefined) {
      // It served: replaced at once if it served long enough, else after the slot's back-off.
      slot.quickDeaths = Date.now() - entry.listeningSince >= MAX_RETRY_MS ? 0 : slot.quickDeaths + 1;
      const inMs = replacementDelayMs(slot.quickDeaths);
      log('warn', 'a worker died: replacing it', { ...why, inMs });
      return replaceIn(slot, inMs);
    }
    const failure = entry.failure ?? `A worker (pid ${worker.process.pid}) stopped before listening (exit code ${code}${signal ? `, signal ${signal}` : ''}).`;
    slot.quickDeaths += 1;
    slot.failedStart = true;
    // No worker can start: none serves, and every slot has failed since one last did.
    if (listening().length === 0 && slots.every((s) => s.failedStart)) return giveUp(failure);
    const inMs = replacementDelayMs(slot.quickDeaths);
    log('warn', `a worker failed to start: another is forked in ${inMs / 1000} s`, { ...why, failedStarts: slot.quickDeaths, inMs, error: failure });
    replaceIn(slot, inMs);
    startedWhenNoneStarting();
  }

  const replaceIn = (slot: Slot, inMs: number) => {
    if (inMs === 0) return fork(slot);
    slot.retry = setTimeout(() => fork(slot), inMs);
  };

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (phase === 'stopping') return;
      log('info', 'shutting down', { signal, pid: process.pid, workers: tracked.size });
      stop(signal);
    });
  }

  for (const slot of slots) fork(slot);
}
