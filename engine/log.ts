// Structured logs: one JSON line per event on stdout (pino), with an ISO time and the level by
// name. What a line carries is redacted by key wherever it sits (passwords, tokens, codes,
// secrets, authorization headers), so that a careless `extra` cannot put a credential in a log.
import pino, { type Logger } from 'pino';
import type { LogLevelSetting } from './config.js';

export type { Logger } from 'pino';
export type LogLevel = 'info' | 'warn' | 'error';
export type LogEvent = (level: LogLevel, msg: string, extra?: Record<string, unknown>) => void;

/** Keys whose values never reach a log, at any of the first levels of a line. */
export const REDACTED_KEYS = [
  'password',
  'confirmPassword',
  'currentPassword',
  'newPassword',
  'hash',
  'token',
  'refresh_token',
  'refreshToken',
  'accessToken',
  'access_token',
  'jwt',
  'code',
  'secret',
  'clientSecret',
  'authorization',
  'cookie',
  'set-cookie',
];
/** Depth to which REDACTED_KEYS are looked for: a line's fields, and two levels inside them. */
const REDACTED_DEPTH = 3;
export const REDACTED = '[redacted]';
const redactedKeys = new Set(REDACTED_KEYS.map((key) => key.toLowerCase()));

/**
 * `value` with what REDACTED_KEYS name replaced, whatever their case, down to REDACTED_DEPTH. A
 * line's own objects are never changed: what holds a credential is copied, the rest is shared.
 * Written here rather than with pino's own `redact` option: its wildcard paths (every key at
 * every depth) cost about 30 µs a line, a tenth of a request's whole budget; this walk costs
 * well under one, so every line can afford it.
 */
function redactedCopy(value: unknown, depth: number): unknown {
  if (depth >= REDACTED_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    value.forEach((item, i) => {
      const redacted = redactedCopy(item, depth + 1);
      if (redacted !== item) (copy ??= value.slice())[i] = redacted;
    });
    return copy ?? value;
  }
  // Only plain records: an Error or a Date is left to pino's serializers, as it comes.
  const prototype = Object.getPrototypeOf(value);
  if (prototype !== Object.prototype && prototype !== null) return value;
  let copy: Record<string, unknown> | undefined;
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    const redacted = redactedKeys.has(key.toLowerCase()) ? REDACTED : redactedCopy(item, depth + 1);
    if (redacted !== item) (copy ??= { ...(value as Record<string, unknown>) })[key] = redacted;
  }
  return copy ?? value;
}

/** A logger writing to `destination` (stdout by default) from `level` up. */
export function createLogger(level: LogLevelSetting = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => redactedCopy(fields, 0) as Record<string, unknown>,
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
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
