// A resource's list totals: counted in the page's statement or alone (count.ts), and answered
// from a kept total while the table's change mark stands (total-cache.ts; none without a cache).
import type { Knex } from 'knex';
import type { CompiledResource } from './compiled.js';
import { COUNTED_COLUMN, countMatches, totalOf, totalOfPage, type CountResult } from './count.js';
import type { ListQuery } from './list-query.js';
import { markedCountStatement } from './sql/kept-count.js';
import { run, type Statement } from './sql/runner.js';
import type { TotalCache, TotalPlan } from './total-cache.js';

export class ListTotals {
  constructor(
    private readonly db: Knex,
    private readonly resource: CompiledResource,
    private readonly totals?: TotalCache,
  ) {}

  /** How a count of `matches` checks a kept total; undefined: it counts (no cache, or a count that reads other tables). */
  plan(tenantId: string, matches: Statement): Promise<TotalPlan | undefined> | undefined {
    return this.totals?.planFor(this.resource, tenantId, matches);
  }

  /** A counted page's total: the kept one while the mark it read stands, otherwise its own count (or one alone, for an empty page). */
  ofPage(items: Array<Record<string, any>>, query: ListQuery, matches: () => Statement, plan?: TotalPlan): Promise<CountResult> {
    const counted = () => totalOfPage(this.db, this.resource, items, query, matches, () => this.alone(matches(), plan));
    // An empty page carries no mark: it knows its total is 0, or counts alone.
    return plan && items.length ? this.totals!.settle(plan, items[0], counted) : counted();
  }

  /** `matches` counted alone: the kept total while the table's mark stands (`plan`), otherwise counted (and kept). */
  async alone(matches: Statement, plan: TotalPlan | undefined): Promise<CountResult> {
    const { db, resource } = this;
    if (!plan) return countMatches(db, resource, matches);
    const [row] = await run(db, markedCountStatement(resource, matches, plan.mark));
    // The count ran whenever the mark moved; counted apart should it ever not have.
    const counted = () => (row[COUNTED_COLUMN] == null ? countMatches(db, resource, matches) : totalOf(db, resource, () => matches, Number(row[COUNTED_COLUMN])));
    return this.totals!.settle(plan, row, counted);
  }
}
