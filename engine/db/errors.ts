// PostgreSQL (and PGlite, which speaks the same error codes) errors → client answers.
// Only column and table names from the error reach the client, never the SQL or the values.
import { HttpError } from '../errors.js';
import { storageFull } from '../storage-full.js';

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', '57P01', '57P03', '08000', '08001', '08003', '08006']);

/**
 * What pg says, without a code, when a connection dies under a query, was already dead, or could
 * not be opened in time ("timeout expired"): the end of the message (knex puts the SQL in front).
 */
const CONNECTION_LOST =
  /(Connection terminated(?: unexpectedly| due to connection timeout)?|timeout expired|Client has encountered a connection error and is not queryable|Client was closed and is not queryable)$/;

/**
 * A query on PostgreSQL got no answer within DATABASE_TIMEOUT_MS (db/database.ts): the database is
 * overloaded, hung or unreachable. Its connection has been destroyed, never to be reused.
 */
export class DatabaseTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`The database did not answer within ${timeoutMs} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/** The 503 of a write PostgreSQL undid because it met another (a deadlock): safe to send again. */
export const CONCURRENT_WRITE = 'The write met another one at the same time and was undone; send it again';

/**
 * PostgreSQL undid a write's transaction (or savepoint) because it met another write: the victim
 * of a deadlock (40P01; a record written with its children while one of them is changed on its
 * own, say) or a serializable transaction's conflict (40001).
 */
export function undoneByAnother(err: unknown): boolean {
  const code = nativeError(err)?.code;
  return code === '40P01' || code === '40001';
}

/** "Key (name, "organizationId")=(…) already exists." → ['name', 'organizationId'] */
export function keyColumns(detail: unknown): string[] {
  const match = typeof detail === 'string' ? /^Key \(([^)]*)\)=/.exec(detail) : null;
  return match ? match[1].split(',').map((c) => c.trim().replace(/^"|"$/g, '')) : [];
}

/** 'Key (id)=(…) is [still] referenced from table "employee".' → 'employee' (a delete blocked by a reference). */
function referencedBy(detail: unknown): string | undefined {
  const match = typeof detail === 'string' ? /is (?:still )?referenced from table "([^"]+)"/.exec(detail) : null;
  return match?.[1];
}

/** The driver's error: Objection wraps it (UniqueViolationError, DataError, …) and keeps it as nativeError. */
export function nativeError(err: any): any {
  return err?.nativeError ?? err;
}

export function mapDatabaseError(wrapped: any): HttpError | undefined {
  const err = nativeError(wrapped);
  // Every pooled connection busy for longer than the acquire timeout: the database is
  // overloaded or gone, which is a 503 like a refused connection.
  if (err?.name === 'KnexTimeoutError') return new HttpError(503, 'The database is not available');
  if (err instanceof DatabaseTimeoutError) return new HttpError(503, 'The database took too long to answer');
  const code: unknown = err?.code;
  if (typeof code !== 'string') {
    return err instanceof Error && CONNECTION_LOST.test(err.message) ? new HttpError(503, 'The database is not available') : undefined;
  }
  // Nothing of it was written, and sending it again is safe. A resource's own operations
  // (engine/resource: service.ts, bulk.ts) have run it twice by then (undone.ts).
  if (undoneByAnother(err)) return new HttpError(503, CONCURRENT_WRITE);
  switch (code) {
    case '23505': {
      const columns = keyColumns(err.detail).filter((c) => c !== 'tenantId');
      const what = columns.length ? `the same ${columns.join(' and ')}` : 'the same unique values';
      return new HttpError(409, `A record with ${what} already exists`);
    }
    // 23001: a delete blocked by ON DELETE RESTRICT (newer PostgreSQL reports it apart from 23503).
    case '23001':
    case '23503': {
      const table = referencedBy(err.detail);
      if (table) return new HttpError(400, [`The record is still referenced by ${table.replace(/_/g, '-')} records; delete or move them first`]);
      const [column] = keyColumns(err.detail);
      return new HttpError(400, [`${column ?? 'a reference'} must reference an existing record`]);
    }
    case '23502':
      return new HttpError(400, [`${err.column ?? 'a required field'} should not be empty`]);
    case '23514':
      return new HttpError(400, ['A value breaks a rule of the record']);
    // PostgreSQL text cannot hold U+0000; any JSON string or query value may carry one.
    case '22021':
      return new HttpError(400, ['A text value contains a character that cannot be stored, such as \\u0000']);
    case '57014':
      return new HttpError(503, 'The database took too long to answer');
    // disk_full: the database cannot grow a file (PostgreSQL's own, or the embedded database's guard).
    case '53100':
      return storageFull();
  }
  // Class 22, data exception: a value the client sent does not fit its column (wrong type, out of
  // range, too long, a date beyond what the database stores, …). Division by zero is our own
  // arithmetic, not the client's value: it stays a 500 so that it gets fixed.
  if (code.startsWith('22') && code !== '22012') return new HttpError(400, ['A value has the wrong type or is out of range']);
  if (CONNECTION_CODES.has(code)) return new HttpError(503, 'The database is not available');
  return undefined;
}
