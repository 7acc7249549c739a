// Structured logs: one JSON line per event on stdout (pino), with an ISO time and the level by
// name. What a line carries is redacted by key in its first levels (passwords, tokens, codes,
// secrets, authorization headers; redaction.ts), its fields, bindings and errors alike, so
// that a careless `extra` cannot put a credential in a log. stdout is written once per turn of
// the event loop (stdout.ts); the request line has a fast path (flat-line.ts).
import pino, { type Logger } from 'pino';
import type { LogLevelSetting } from '../config/config.js';
import { redactedCopy } from './redaction.js';
import { stdoutByTurn } from './stdout.js';

export { flatLineWriter, type FlatFields } from './flat-line.js';
export { REDACTED, REDACTED_KEYS } from './redaction.js';

export type { Logger } from 'pino';
export type LogLevel = 'info' | 'warn' | 'error';
export type LogEvent = (level: LogLevel, msg: string, extra?: Record<string, unknown>) => void;

/** A logger writing to `destination` (stdout by default) from `level` up. */
export function createLogger(level: LogLevelSetting = 'info', destination?: pino.DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => redactedCopy(fields) as Record<string, unknown>,
      },
      // The walk above has serialized (and redacted) an Error under `err` already, as pino's own
      // serializer does: that serializer would take the copy for another error and name its type Object.
      serializers: { err: (serialized) => serialized },
    },
    destination ?? stdoutByTurn(),
  );
  // A child's bindings are written once, when it is made, and pino applies no formatter to them:
  // they are redacted here. Children inherit this from the root (pino makes them with
  // Object.create), so grandchildren are covered too.
  type MakeChild = (this: unknown, bindings: pino.Bindings, options?: unknown) => unknown;
  const child = logger.child as unknown as MakeChild;
  const redactedChild: MakeChild = function (this: unknown, bindings, options) {
    return child.call(this, redactedCopy(bindings) as pino.Bindings, options);
  };
  logger.child = redactedChild as unknown as typeof logger.child;
  return logger;
}

/** The process's logger: what the server and the parts it starts write to. */
export const rootLogger = createLogger('info');

/** Applies LOG_LEVEL once the configuration is read (the logger exists before, for start-up failures). */
export function setLogLevel(level: LogLevelSetting): void {
  rootLogger.level = level;
}

export const logEvent: LogEvent = (level, msg, extra = {}) => rootLogger[level](extra, msg);

/** Resident memory of this process in MiB, for the log lines a reader compares processes by. */
export const rssMiB = () => Math.round(process.memoryUsage.rss() / 104_857.6) / 10;
