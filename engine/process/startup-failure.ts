// How a process that cannot start says so: one JSON log line at level fatal on stdout (the last
// line of its log, for whatever reads the log) and the same message as plain text on stderr (for
// the person at the terminal), then exit code 1. Never a bare stack: the stack of a failure
// nobody foresaw travels inside the log line, under `err`.
import { rootLogger } from '../log/log.js';

/** Says why start-up failed, once on each stream; `err` (with its stack) only for a failure without a message of its own. */
export function sayStartupFailure(message: string, err?: unknown): void {
  // Written at once: fatal lines are never held (log/stdout.ts).
  rootLogger.fatal(err === undefined ? {} : { err }, message);
  console.error(message);
}

export function exitWithStartupFailure(message: string, err?: unknown): never {
  sayStartupFailure(message, err);
  process.exit(1);
}

/** The message of a failure nobody foresaw (a bug, say): its own first line. */
export function unexpectedFailure(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return `Start-up failed: ${text.split('\n')[0] || (err instanceof Error ? err.name : 'unknown error')}`;
}
