// The one line a request writes, fast: pino's generic path (mixins, serializers, a stringifier
// per value, the redaction walk) costs about 8 µs of a small request's 120 µs of CPU in a busy
// server; a line of a few fixed, flat fields assembled from the logger's own parts (pino.symbols:
// its level prefix, time, bindings and line end) costs about 1. log.test.ts holds it to what
// logger.info(fields, msg) writes, byte for byte.
import pino, { type Logger } from 'pino';
import { isRedactedKey, REDACTED } from './redaction.js';

/** A line's flat fields: what a frequent line with fixed fields carries. */
export type FlatFields = Record<string, string | number | boolean | undefined>;

// Some of these (msgPrefixSym) are exported by pino but missing from its types.
const { lsCacheSym, timeSym, chindingsSym, streamSym, endSym, mixinSym, msgPrefixSym, messageKeySym, nestedKeySym, hooksSym, needsMetadataGsym } = pino.symbols as unknown as Record<string, symbol>;

/** Whether the logger is set up in a way this writer does not reproduce: then it goes through logger.info. */
function unusual(parts: Record<symbol, any>): boolean {
  return Boolean(
    parts[mixinSym] || parts[msgPrefixSym] || parts[messageKeySym] !== 'msg' || parts[nestedKeySym] || parts[hooksSym]?.streamWrite || parts[streamSym]?.[needsMetadataGsym],
  );
}

/** A value as JSON: numbers and booleans as they are (a number that JSON cannot hold as null), anything else as a string. */
function jsonValue(value: string | number | boolean): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(String(value));
}

/**
 * Writes `msg` lines at info level with flat fields (undefined ones left out), exactly as
 * `logger.info(fields, msg)` would; values under REDACTED_KEYS are redacted.
 */
export function flatLineWriter(logger: Logger, msg: string): (fields: FlatFields) => void {
  const parts = logger as unknown as Record<symbol, any>;
  if (unusual(parts)) return (fields) => logger.info(fields, msg);
  const info = logger.levels.values.info;
  const tail = `,"msg":${JSON.stringify(msg)}${parts[endSym]}`;
  /** Per key, what precedes its value (`,"key":`), and whether its value is redacted: the keys are few and fixed. */
  const keys = new Map<string, { prefix: string; redacted: boolean }>();
  const keyOf = (key: string) => {
    let known = keys.get(key);
    if (!known) keys.set(key, (known = { prefix: `,${JSON.stringify(key)}:`, redacted: isRedactedKey(key) }));
    return known;
  };
  return (fields) => {
    if (!logger.isLevelEnabled('info')) return;
    let line = parts[lsCacheSym][info] + parts[timeSym]() + parts[chindingsSym];
    for (const key in fields) {
      const value = fields[key];
      if (value === undefined) continue;
      const { prefix, redacted } = keyOf(key);
      line += prefix + (redacted ? `"${REDACTED}"` : jsonValue(value));
    }
    parts[streamSym].write(line + tail);
  };
}
