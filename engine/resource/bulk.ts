// Bulk writes of one resource: many creates, changes or deletes in ONE transaction, all or none.
// Every item is checked first, outside the transaction (createMany in service.ts says why), and
// every failure is named by the item's index; a failure found while writing (a unique rule, a
// record gone meanwhile) rolls everything back and names its item too.
import type { Caller } from '../caller.js';
import { HttpError } from '../errors.js';
import { toHttpError } from '../http/error-envelope.js';
import { itemsFailed, type ItemError } from './bulk-body.js';
import { BatchRowError, type ResourceService } from './service.js';
import { definedViolation } from './defined-violation.js';
import { undoneByAnother } from '../db/errors.js';
import { transactionOnceMoreIfUndone } from '../db/undone.js';
import { run } from './sql/runner.js';
import { deleteManyStatement, deleteStatement, updateStatement } from './sql/write.js';
import { keepVersion } from './versions.js';
import { checkChildrenAhead, prepareWrite, type PreparedWrite, type WriteContext } from './write-body.js';

interface ItemFailure {
  index: number;
  status: number;
  messages: string[];
}

/** An item's failure as the answer words it; anything but a 4xx (a bug, the database gone) is not the item's fault. */
function failureOf(index: number, err: unknown): ItemFailure {
  const http = toHttpError(err);
  if (http.status >= 500) throw err;
  return { index, status: http.status, messages: [http.messages].flat() };
}

/**
 * One answer for the failed items: every 400 when all are 400s, else the status of the first
 * other failure (a 403 or a 404 says more about the request than a broken field rule), naming
 * every item that failed with it.
 */
function answerFailures(failures: ItemFailure[]): never {
  const other = failures.find((f) => f.status !== 400);
  const status = other?.status ?? 400;
  const errors: ItemError[] = failures.filter((f) => f.status === status).flatMap((f) => f.messages.map((message) => ({ index: f.index, message })));
  throw itemsFailed(status, errors);
}

/** Items checked at once: each check is a round trip or two, which a pooled database answers side by side. */
const CONCURRENT_CHECKS = 4;

/** Each item through `check`, CONCURRENT_CHECKS at a time; the prepared writes in order, or the failures answered. */
async function checkAll<T, R>(items: T[], check: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  const failures: ItemFailure[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        results[i] = await check(items[i], i);
      } catch (err) {
        failures.push(failureOf(i, err));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_CHECKS, items.length) }, worker));
  if (failures.length) answerFailures(failures.sort((a, b) => a.index - b.index));
  return results;
}

/** A failure while writing item `index`, as the answer words it (the transaction is rolled back). */
function writeFailed(index: number, err: unknown): never {
  answerFailures([failureOf(index, err)]);
}

/** Creates every body, each as POST /api/{r} would, in order; all or none. */
export async function createAll(service: ResourceService, caller: Caller, bodies: unknown[], context: WriteContext) {
  const { db, resource } = service;
  const prepared = await checkAll(bodies, async (body) => {
    const write = await prepareWrite(db, resource, caller, 'create', body, context);
    for (const children of write.children) await checkChildrenAhead(db, resource, caller, write, children);
    return write;
  });
  try {
    return await service.createMany(caller, prepared);
  } catch (err) {
    if (err instanceof BatchRowError) writeFailed(err.index, err.cause);
    throw err;
  }
}

/** The ids not in the caller's scope (another tenant's, another owner's, none at all): a 404 naming them. */
async function checkFound(service: ResourceService, caller: Caller, ids: string[]) {
  const { resource } = service;
  const found = new Set((await resource.model.scoped(caller, service.db).whereIn(`${resource.table}.id`, ids).select(`${resource.table}.id`)).map((row: any) => row.id));
  const missing = ids.flatMap((id, index) => (found.has(id) ? [] : [{ index, status: 404, messages: [notFoundMessage()] }]));
  if (missing.length) answerFailures(missing);
}

const notFoundMessage = () => new HttpError(404, 'The requested record was not found').message;

/** Changes each record as PATCH /api/{r}/{id} would, in order; all or none. */
export async function modifyAll(service: ResourceService, caller: Caller, items: Array<{ id: string; changes: Record<string, unknown> }>) {
  const { db, resource } = service;
  await checkFound(service, caller, items.map((item) => item.id));
  const prepared = await checkAll(items, ({ id, changes }) => prepareWrite(db, resource, caller, 'patch', changes, { recordId: id }));
  let at = -1;
  try {
    return await transactionOnceMoreIfUndone(db, async (trx) => {
      at = -1;
      const rows: Array<Record<string, any>> = [];
      for (const [i, write] of prepared.entries()) {
        at = i;
        const [row] = await run(trx, updateStatement(resource, caller, items[i].id, write.row));
        // Deleted since it was found.
        if (!row) throw new HttpError(404, notFoundMessage());
        await service.writeRelated(trx, caller, write, row);
        rows.push(row);
      }
      return rows.map(keepVersion);
    });
  } catch (err) {
    if (at < 0) throw err;
    writeFailed(at, mapped(service, prepared[at], err));
  }
}

/** A unique or `rules:` violation in the definition's words, or the error as it was. */
function mapped(service: ResourceService, write: PreparedWrite, err: unknown): unknown {
  try {
    definedViolation([service.resource, ...write.children.map((c) => c.relation.target)], err);
  } catch (violation) {
    return violation;
  }
}

/** Rolls a transaction back once it has found what it was run for. */
class Found extends Error {
  constructor(readonly index: number) {
    super('found');
  }
}

/** Deletes every record as DELETE /api/{r}/{id} would, in one statement; all or none. */
export async function removeAll(service: ResourceService, caller: Caller, ids: string[]): Promise<void> {
  const { db, resource } = service;
  // Ids out of reach first, as a single delete finds none before any reference could block it.
  await checkFound(service, caller, ids);
  try {
    await transactionOnceMoreIfUndone(db, async (trx) => {
      const deleted = new Set((await run(trx, deleteManyStatement(resource, caller, ids))).map((row) => row.id));
      if (deleted.size < ids.length) {
        answerFailures(ids.flatMap((id, index) => (deleted.has(id) ? [] : [{ index, status: 404, messages: [notFoundMessage()] }])));
      }
    });
  } catch (err) {
    // Undone twice by deadlocks: no item is to blame, and deleting them again one by one would
    // only meet the same writes (the 503 says so).
    if (err instanceof HttpError || undoneByAnother(err)) throw err;
    writeFailed(await failingDelete(service, caller, ids, err), err);
  }
}

/**
 * Which id a failed delete of many (a record still referenced) failed on: deleted again one by
 * one, each in a savepoint, in a transaction rolled back at the end. The first that fails.
 */
async function failingDelete(service: ResourceService, caller: Caller, ids: string[], err: unknown): Promise<number> {
  try {
    await service.db.transaction(async (trx) => {
      for (const [i, id] of ids.entries()) {
        try {
          await trx.transaction((savepoint) => run(savepoint, deleteStatement(service.resource, caller, id)));
        } catch {
          throw new Found(i);
        }
      }
      // None failed alone (the first attempt met a record deleted meanwhile, say): undone all the same.
      throw new Found(-1);
    });
  } catch (found) {
    if (found instanceof Found && found.index >= 0) return found.index;
  }
  throw err;
}
