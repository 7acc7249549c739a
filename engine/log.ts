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

function redactedPaths(): string[] {
  const paths: string[] = [];
  for (const key of REDACTED_KEYS) {
    // pino's paths are JavaScript accessors: a key that is not an identifier goes in brackets.
    const identifier = /^[A-Za-z_$][\w$]*$/.test(key);
    for (let depth = 0; depth < REDACTED_DEPTH; depth++) {
      const parents = Array(depth).fill('*').join('.');
      if (identifier) paths.push(parents ? `${parents}.${key}` : key);
      else paths.push(`${parents}["${key}"]`);
    }
  }
  return paths;
}

/** A logger writing to `destination` (stdout by default) from `level` up. */
export function createLogger(level: LogLevelSetting = 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: undefined,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactedPaths(), censor: REDACTED },
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
