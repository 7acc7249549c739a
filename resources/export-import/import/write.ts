// Every row through the resource's own create rules first, all of them, outside any transaction;
// then, only if none failed, all rows in one transaction. Either way the answer says which rows
// failed and why, one entry per broken rule.
import type { Caller } from '../../../engine/caller.js';
import { HttpError } from '../../../engine/errors.js';
import { toHttpError } from '../../../engine/http/error-envelope.js';
import { isPlainObject } from '../../../engine/objects.js';
import { BatchRowError } from '../../../engine/resource/service.js';
import { checkChildrenAhead, prepareWrite, type PreparedWrite, type WriteContext } from '../../../engine/resource/write-body.js';
import { brokenRules, DuplicateFinder } from './database-rules.js';
import type { ImportTarget } from './importable.js';
import type { ImportRow } from './rows.js';

/** The answer lists at most this many problems (and counts every row that failed). */
export const MAX_LISTED_ERRORS = 100;

export interface RowError {
  row: number;
  message: string;
}

export type ImportOutcome = { imported: number } | { failedRows: number; totalRows: number; errors: RowError[] };

/** A create's 4xx as sentences; anything else (a bug, the database gone) is not the row's fault. */
function rowMessages(err: unknown, target: ImportTarget): string[] {
  const http = err instanceof HttpError ? err : toHttpError(err);
  if (http.status >= 500) throw err;
  // A prepared create forbids two things: a tenantId other than the caller's (in a child's body;
  // the row's own is ignored on import) and, for an EMPLOYEE, a record of another employee.
  if (http.status === 403) {
    const owner = target.resource.owner ? ` or ${target.resource.owner} names another employee than yours` : '';
    return [`the row is forbidden: a tenantId names another tenant${owner}`];
  }
  return [http.messages].flat();
}

/** The children a row carries (invoiceItems), checked beforehand as their create would check them (checkChildrenAhead). */
async function childProblems(target: ImportTarget, caller: Caller, write: PreparedWrite): Promise<string[]> {
  const problems: string[] = [];
  for (const children of write.children) {
    try {
      await checkChildrenAhead(target.service.db, target.resource, caller, write, children);
    } catch (err) {
      problems.push(...rowMessages(err, target));
    }
  }
  return problems;
}

class ErrorList {
  readonly errors: RowError[] = [];
  failedRows = 0;

  add(row: number, messages: string[]) {
    if (!messages.length) return;
    this.failedRows++;
    for (const message of messages) if (this.errors.length < MAX_LISTED_ERRORS) this.errors.push({ row, message });
  }
}

/** Rows checked at once: each check is a round trip or two, which a pooled database answers side by side. */
const CONCURRENT_CHECKS = 4;

interface Checked {
  write?: PreparedWrite;
  messages: string[];
}

/** One row through the create's rules: the prepared write, or every problem found. */
async function checkRow(target: ImportTarget, caller: Caller, { body, problems }: ImportRow, context: WriteContext): Promise<Checked> {
  const messages = [...problems];
  if (!isPlainObject(body)) return { messages };
  try {
    const write = await prepareWrite(target.service.db, target.resource, caller, 'create', body, context);
    messages.push(...(await childProblems(target, caller, write)), ...brokenRules(target.resource, write.row));
    return { write, messages };
  } catch (err) {
    return { messages: [...messages, ...rowMessages(err, target)] };
  }
}

/** Every row checked, CONCURRENT_CHECKS at a time; the answers in the rows' order. */
async function checkAll(target: ImportTarget, caller: Caller, rows: ImportRow[], context: WriteContext): Promise<Checked[]> {
  const checked: Checked[] = [];
  if (!rows.length) return checked;
  checked[0] = await checkRow(target, caller, rows[0], context);
  // No row names its organization (the file's are ignored), so the one the first row was given
  // (null: none, a record of the whole tenant) is every row's: looked up once, not once per row.
  const first = checked[0].write?.row;
  const rest = first && first.organizationId !== undefined ? { ...context, organizationId: first.organizationId as string | null } : context;
  let next = 1;
  let failed = false;
  const worker = async () => {
    while (!failed && next < rows.length) {
      const i = next++;
      try {
        checked[i] = await checkRow(target, caller, rows[i], rest);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_CHECKS }, worker));
  return checked;
}

export async function importAll(target: ImportTarget, caller: Caller, rows: ImportRow[], context: WriteContext): Promise<ImportOutcome> {
  const found = new ErrorList();
  const prepared: PreparedWrite[] = [];
  const duplicates = new DuplicateFinder(target.resource);
  for (const [i, { write, messages }] of (await checkAll(target, caller, rows, context)).entries()) {
    const row = rows[i].row;
    if (write) {
      messages.push(...duplicates.check(row, write.row));
      prepared.push(write);
    }
    found.add(row, messages);
  }
  if (found.failedRows) return { failedRows: found.failedRows, totalRows: rows.length, errors: found.errors };
  if (!prepared.length) return { imported: 0 };
  try {
    return { imported: (await target.service.createMany(caller, prepared)).length };
  } catch (err) {
    if (!(err instanceof BatchRowError)) throw err;
    const failed = new ErrorList();
    failed.add(rows[err.index].row, rowMessages(err.cause, target));
    return { failedRows: 1, totalRows: rows.length, errors: failed.errors };
  }
}
