// A write PostgreSQL undid whole because it met another at the same time (errors.ts,
// undoneByAnother): nothing of it stayed, so it may run again. By then the other transaction
// holds its locks or has ended, so the second attempt usually waits for it instead of meeting it
// head-on (it may still meet a third). Undone twice, it is the client's 503: records fought over
// that hard are the client's to retry, not a request's to wait on longer. The resource operations
// (service.ts, bulk.ts) and the modules' transactions that only write rows use it; a transaction
// with effects outside the database (a file moved, a mail sent) decides for itself.
import type { Knex } from 'knex';
import { undoneByAnother } from './errors.js';

/**
 * `write` (one statement, or a whole transaction: never a part of one, whose undoing would leave
 * the rest of it half done) run once more when PostgreSQL undid it because it met another write.
 */
export async function onceMoreIfUndone<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (!undoneByAnother(err)) throw err;
    return write();
  }
}

/**
 * `db.transaction(work)`, run once more when undone, as onceMoreIfUndone. Inside a transaction
 * already (`db` is one), `work` is a part of it and runs once: whoever owns the whole one decides.
 * `work` must only touch the database: it may run twice.
 */
export function transactionOnceMoreIfUndone<T>(db: Knex, work: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  if (db.isTransaction) return db.transaction(work);
  return onceMoreIfUndone(() => db.transaction(work));
}
