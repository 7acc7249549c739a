// The definition's own words for a write the database refused: a unique rule's message for a
// unique violation, a `rules:` entry's for a check constraint; anything else is thrown as it came.
import { keyColumns, nativeError } from '../db/errors.js';
import { badRequest, conflict } from '../errors.js';
import type { CompiledResource } from './compiled.js';

/**
 * A unique violation or a broken `rules:` entry answered with the definition's own sentence: the
 * written resource's, or a child's written with it.
 */
export function definedViolation(resources: CompiledResource[], thrown: any): never {
  const err = nativeError(thrown);
  const written = resources.filter((r) => !err?.table || r.table === err.table);
  if (err?.code === '23514') {
    const message = written.map((r) => r.ruleMessages.get(err.constraint)).find(Boolean);
    if (message) throw badRequest(message);
  }
  if (err?.code === '23505') {
    const cols = keyColumns(err.detail);
    // The rule's own constraint, or the index holding it over records of no organization.
    const names = (columns: string[] | undefined) => columns !== undefined && columns.every((f) => cols.includes(f));
    const rule = written.flatMap((r) => r.uniqueMessages).find((u) => names(u.fields) || names(u.tenantWide));
    if (rule) throw conflict(rule.message);
  }
  throw thrown;
}
