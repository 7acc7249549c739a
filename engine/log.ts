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

/** How much the log holds back within one turn of the event loop before it writes anyway (characters). */
const TURN_BUFFER_BYTES = 8192;

/**
 * stdout for the log, written once per turn of the event loop rather than once per line: a busy
 * server answers several requests in one turn, and their lines go out in one system call (a write
 * a line cost about 3 µs of a request's 120 µs of CPU). A line waits at most until the end of the
 * turn it was written in, and what is held back when the process exits is written then
 * (process.exit included); only a process killed outright (SIGKILL) can lose its last turn's lines.
 */
function stdoutByTurn(): pino.DestinationStream {
  // sonic-boom writes (and retries a full pipe); its own buffering is not used: its flushSync
  // also fsyncs, a disk flush on every turn when stdout is a file.
  const out = pino.destination({ dest: 1, sync: true });
  let held = '';
  const flush = () => {
    if (!held) return;
    const lines = held;
    held = '';
    out.write(lines);
  };
  process.once('exit', flush);
  return {
    write(line: string) {
      if (!held) setImmediate(flush);
      held += line;
      if (held.length >= TURN_BUFFER_BYTES) flush();
    },
  };
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
    destination ?? stdoutByTurn(),
  );
}

/** A line's flat fields: what a frequent line with fixed fields carries. */
export type FlatFields = Record<string, string | number | boolean | undefined>;

/**
 * Writes `msg` lines at info level whose fields are flat (strings, numbers, booleans), exactly as
 * `logger.info(fields, msg)` would, assembled from the logger's own parts (pino.symbols: its level
 * prefix, time, bindings and line end) and written to its stream. For the one line a request
 * writes: pino's generic path (mixins, serializers, a stringifier per value) costs about 8 µs of
 * a request's 120 µs of CPU in a busy server, this about 1. Keys REDACTED_KEYS names are still
 * redacted. log.test.ts holds the output to pino's own, byte for byte.
 */
export function flatLineWriter(logger: Logger, msg: string): (fields: FlatFields) => void {
  const parts = logger as unknown as Record<symbol, any>;
  const { lsCacheSym, timeSym, chindingsSym, streamSym, endSym } = pino.symbols;
  const info = logger.levels.values.info;
  const tail = `,"msg":${JSON.stringify(msg)}${parts[endSym]}`;
  /** Per key, what precedes its value (`,"key":`), and whether its value is redacted: the keys are few and fixed. */
  const keys = new Map<string, { prefix: string; redacted: boolean }>();
  const keyOf = (key: string) => {
    let known = keys.get(key);
    if (!known) keys.set(key, (known = { prefix: `,${JSON.stringify(key)}:`, redacted: redactedKeys.has(key.toLowerCase()) }));
    return known;
  };
  return (fields) => {
    if (!logger.isLevelEnabled('info')) return;
    let line = parts[lsCacheSym][info] + parts[timeSym]() + parts[chindingsSym];
    for (const key in fields) {
      const value = fields[key];
      if (value === undefined) continue;
      const { prefix, redacted } = keyOf(key);
      line += prefix;
      if (redacted) line += `"${REDACTED}"`;
      else if (typeof value === 'string') line += JSON.stringify(value);
      else line += typeof value === 'number' && !Number.isFinite(value) ? 'null' : String(value);
    }
    parts[streamSym].write(line + tail);
  };
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
