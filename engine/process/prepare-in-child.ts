// A preparation run in a child process before anything serves (preparation.ts's prepareCluster in
// this same entry point, told so by PREPARE_ENV): a cluster's, whose migrations run once before the
// workers are forked, and a new embedded data folder's (first-start.ts), created and migrated where
// the memory PostgreSQL's initdb leaves behind ends with the child. Nothing serves meanwhile, so a
// SIGTERM or SIGINT stops the child and then this process, exit code 0, as a stopped cluster does.
import { fork } from 'node:child_process';
import { logEvent as log } from '../log/log.js';
import { exitWithStartupFailure } from './startup-failure.js';

/** Set in the environment of the child that prepares (a cluster's or a new data folder's). */
export const PREPARE_ENV = 'CLUSTER_PREPARE';

export interface Preparation {
  /** What the child prepares, as messages name it: `the cluster`. */
  subject: string;
  /** What this process does once the child is done, as the log says it when a signal stops it then. */
  next: string;
}

/** Stops this process between the child's end and its own handlers (handOverSignals). */
let stopBeforeServing: ((signal: NodeJS.Signals) => void) | undefined;

/**
 * Runs the preparation in a child and resolves with its exit code; the child prints its own
 * failure. A SIGTERM or SIGINT meanwhile is passed on to it, and once it has stopped this process
 * stops too (exit code 0): nothing was serving yet, and a migration cut short is rolled back. From
 * the child's end until handOverSignals(), a signal still stops this process with exit code 0.
 */
export function prepareInChild({ subject, next }: Preparation): Promise<number> {
  let stoppedBy: NodeJS.Signals | undefined;
  const forward = (signal: NodeJS.Signals) => {
    if (!stoppedBy) log('info', 'shutting down', { signal, pid: process.pid, while: `preparing ${subject}` });
    stoppedBy = signal;
    child.kill(signal);
  };
  // Listening before the child exists: whoever sees the child may signal this process at once.
  process.on('SIGTERM', forward).on('SIGINT', forward);
  const child = fork(process.argv[1], process.argv.slice(2), { execArgv: process.execArgv, env: { ...process.env, [PREPARE_ENV]: '1' } });
  return new Promise((resolve) => {
    child.once('error', (err) => exitWithStartupFailure(`Could not start the process that prepares ${subject}: ${err.message}`));
    child.once('exit', (code) => {
      process.off('SIGTERM', forward).off('SIGINT', forward);
      if (stoppedBy) process.exit(0);
      // Set at once: the code that serves next (or forks the workers) takes a moment to load.
      stopBeforeServing = (signal) => {
        log('info', 'shutting down', { signal, pid: process.pid, while: next });
        process.exit(0);
      };
      process.once('SIGTERM', stopBeforeServing).once('SIGINT', stopBeforeServing);
      resolve(code ?? 1);
    });
  });
}

/** This process has SIGTERM/SIGINT handlers of its own now (a primary's, a serving process's): the interim ones go. */
export function handOverSignals(): void {
  if (!stopBeforeServing) return;
  process.off('SIGTERM', stopBeforeServing).off('SIGINT', stopBeforeServing);
  stopBeforeServing = undefined;
}
