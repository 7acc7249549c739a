// The version a statement read with a record (sql/version.ts), kept beside the record rather than
// in it: the answer never carries it as a field, and the route that tags the answer finds it.
import { VERSION_KEY } from './sql/version.js';

const held = new WeakMap<object, string>();

/** Moves the version column off the row (left undefined, which JSON leaves out) into the side table. */
export function keepVersion<T extends Record<string, any>>(row: T): T {
  held.set(row, row[VERSION_KEY]);
  (row as Record<string, unknown>)[VERSION_KEY] = undefined;
  return row;
}

/** The version of a record the service read or wrote; undefined for any other object. */
export const versionOf = (record: object): string | undefined => held.get(record);
