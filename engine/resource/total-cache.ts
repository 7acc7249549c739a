// Totals without counting again: a list's total is kept with the mark of its table and tenant
// (engine/db/change-marks.ts) read in the statement that counted it. The next page of the same
// filters reads the mark again, in its own snapshot and statement: unchanged, the count is not
// run (it sits in the other branch of a CASE, which PostgreSQL evaluates only when taken) and the
// kept total is answered; changed, the count runs and its total is kept with the new mark. So a
// total is as exact as a count in the page's snapshot: a caller's own write, another instance's,
// or another client's moves the mark. Entries also expire (TTL), a bound on what a write that
// fired no trigger (triggers disabled by hand) can leave behind.
//
// Only a count that reads nothing but its own marked table is kept: a filter on a relation, tags,
// or a deleted parent reads other tables, whose writes do not move this mark.
import { hash } from 'node:crypto';
import type { Knex } from 'knex';
import { markedTables } from '../db/change-marks.js';
import type { CompiledResource } from './compiled.js';
import { countBound, type CountResult } from './count.js';
import type { Statement } from './sql/runner.js';

/** The column of a page's rows holding its table's mark (sql/select.ts). */
export const PAGE_MARK_COLUMN = '@mark';

/** What a page's statement needs to vouch for a kept total: the tenant whose mark it reads and the mark the total was counted at. */
export interface TotalMark {
  table: string;
  tenantId: string;
  /** The mark of the kept total; null: none kept (the count runs). */
  held: string | null;
}

interface Kept extends CountResult {
  mark: string;
  at: number;
}

export interface TotalPlan {
  key: string;
  kept?: Kept;
  mark: TotalMark;
}

/** How long the set of marked tables is trusted before it is read again. */
const MARKED_TTL_MS = 30_000;

/** A statement's table references: every `from "t"` and `join "t"` the SQL builders write. */
const TABLE_REFERENCE = /\b(?:from|join) "((?:[^"]|"")+)"/g;

const readsOnly = (text: string, table: string) => [...text.matchAll(TABLE_REFERENCE)].every((m) => m[1].replace(/""/g, '"') === table);

export class TotalCache {
  private readonly kept = new Map<string, Kept>();
  private marked?: Promise<Set<string>>;
  private markedAt = 0;

  constructor(
    private readonly db: Knex,
    /** The most totals kept per process (the least recently used go first). */
    private readonly maxEntries = 10_000,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  /**
   * The marked tables, read again every MARKED_TTL_MS: migrations that make or take out marks
   * (or triggers disabled by hand) reach a running process within that time.
   */
  private markedTables(): Promise<Set<string>> {
    if (!this.marked || Date.now() - this.markedAt >= MARKED_TTL_MS) {
      this.markedAt = Date.now();
      this.marked = markedTables(this.db).catch(() => new Set<string>());
    }
    return this.marked;
  }

  /** Whether any table is marked (the folds run only then). */
  async anyMarked(): Promise<boolean> {
    return (await this.markedTables()).size > 0;
  }

  /**
   * How the page of the list counting `matches` checks its kept total (its statement reads the
   * mark, and counts only when it moved); undefined when that total cannot be kept.
   */
  async planFor(resource: CompiledResource, tenantId: string, matches: Statement): Promise<TotalPlan | undefined> {
    const table = resource.table;
    if (!readsOnly(matches.text, table) || !(await this.markedTables()).has(table)) return undefined;
    // A digest of what the total depends on: the resource and its count policy (two resources may
    // share a table), and the count's text and values (filters, scope, tenant).
    const key = hash('sha1', `${resource.name}\u0000${countBound(resource) ?? ''}\u0000${matches.text}\u0000${JSON.stringify(matches.values)}`, 'base64');
    let kept = this.kept.get(key);
    if (kept && Date.now() - kept.at >= this.ttlMs) kept = undefined;
    if (kept) {
      // Most recently used last: the first key of the map is the one to drop.
      this.kept.delete(key);
      this.kept.set(key, kept);
    }
    return { key, kept, mark: { table, tenantId, held: kept?.mark ?? null } };
  }

  /**
   * The total of a page whose statement read the mark (`row`: any of its rows): the kept one when
   * the mark has not moved (the statement did not count), otherwise `count`'s, kept with the mark.
   */
  async settle(plan: TotalPlan, row: Record<string, unknown>, count: () => Promise<CountResult>): Promise<CountResult> {
    const mark = String(row[PAGE_MARK_COLUMN]);
    if (plan.kept && mark === plan.kept.mark) return { total: plan.kept.total, exact: plan.kept.exact };
    const counted = await count();
    this.kept.delete(plan.key);
    this.kept.set(plan.key, { total: counted.total, exact: counted.exact, mark, at: Date.now() });
    if (this.kept.size > this.maxEntries) this.kept.delete(this.kept.keys().next().value!);
    return counted;
  }
}
