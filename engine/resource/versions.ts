// The version a statement read with a record (sql/version.ts), kept on the record under a symbol:
// JSON never writes it, and the route that tags the answer finds it.
import { VERSION_KEY } from './sql/version.js';

const VERSION = Symbol('record version');

/** Moves the version column off the row (left undefined, which JSON leaves out) to where versionOf finds it. */
export function keepVersion<T extends Record<string, any>>(row: T): T {
  (row as Record<PropertyKey, unknown>)[VERSION] = row[VERSION_KEY];
  (row as Record<string, unknown>)[VERSION_KEY] = undefined;
  return row;
}

/** The version of a record the service read or wrote; undefined for any other object. */
export const versionOf = (record: object): string | undefined => (record as Record<PropertyKey, string | undefined>)[VERSION];
