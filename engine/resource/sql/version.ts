// A record's version: what its strong ETag carries and what If-Match compares, inside the write's
// own statement. It is made by PostgreSQL from the row's xmin, the transaction that wrote this
// version of the row: any UPDATE changes it, whoever sends it. Writes of a record's writable
// relations through the API update the record's row too (a write through the record, or a child's
// own write touching its parent: write.ts), so they move it as well. Hashed with the resource's
// salt, so that a version says nothing of the database's transaction counter: with
// hashtextextended (64 bits, hex), which every PostgreSQL since 11 has and a FIPS-mode server
// allows, where it refuses md5().
import type { CompiledResource } from '../compiled.js';
import { id } from './text.js';

/** The column a statement reads the version into. */
export const VERSION_KEY = '@version';

/** Each resource's version SQL and column, made once (for the salt it was made with: the app sets it after compiling). */
const made = new WeakMap<CompiledResource, { salt: string; sql: string; column: string }>();

function versionOf(resource: CompiledResource) {
  let known = made.get(resource);
  if (known?.salt !== resource.versionSalt) {
    // The salt is hex (the app derives it), so it is safe as a literal.
    const salt = resource.versionSalt ? `'${resource.versionSalt}' || ` : '';
    const sql = `to_hex(hashtextextended(${salt}${id(resource.table)}.xmin::text, 0))`;
    made.set(resource, (known = { salt: resource.versionSalt, sql, column: `, ${sql} as ${id(VERSION_KEY)}` }));
  }
  return known;
}

/** The version of the row of `resource.table` a statement is on, as SQL. */
export const versionSql = (resource: CompiledResource) => versionOf(resource).sql;

/** `, <version> as "@version"`, for a select list or a returning clause. */
export const versionColumn = (resource: CompiledResource) => versionOf(resource).column;
