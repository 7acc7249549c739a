// A list's total, by the resource's count policy (the definition's `count:`). An exact count reads
// every match: tens of milliseconds on a million rows, on every page. A capped or estimated policy
// reads at most threshold + 1 of them (a count over the filtered select with a limit), so the cost
// of a total has a bound whatever the table grows to; past the threshold, capped answers the cap
// and estimated asks the planner (EXPLAIN) how many rows the filtered select returns. The
// filtered select's own bindings carry every client value; the threshold is bound too.
import type { Knex } from 'knex';
import type { CompiledResource } from './compiled.js';

export interface CountResult {
  total: number;
  /** false: more than the policy's threshold matched, and total is the cap or an estimate. */
  exact: boolean;
}

const rowsOf = (result: any): any[] => result.rows ?? result;

/** The filtered select as `select 1 from … where …`: what a count needs, no columns, no order. */
const matchesOf = (db: Knex, filtered: Knex.QueryBuilder) => filtered.clone().clearSelect().clearOrder().select(db.raw('1'));

/** Every match counted, or at most `upTo` of them. */
async function countOf(db: Knex, filtered: Knex.QueryBuilder, upTo?: number): Promise<number> {
  const query =
    upTo === undefined
      ? filtered.clone().clearSelect().clearOrder().count({ total: '*' })
      : db.count({ total: '*' }).from(matchesOf(db, filtered).limit(upTo).as('matches'));
  const [row] = await query;
  return Number(row.total);
}

/** How many rows the planner expects the filtered select to return (its statistics, no rows read). */
async function plannedRows(db: Knex, filtered: Knex.QueryBuilder): Promise<number> {
  const [row] = rowsOf(await db.raw('explain (format json) ?', [matchesOf(db, filtered)]));
  const plan = row['QUERY PLAN'];
  const [top] = typeof plan === 'string' ? JSON.parse(plan) : plan;
  return Math.round(Number(top?.Plan?.['Plan Rows']) || 0);
}

/** `filtered`: the list's filtered select (`select … from <table> where …`, tenant and owner scope and every filter applied, no order, no limit/offset), a knex builder on `db`. */
export async function countMatches(db: Knex, resource: CompiledResource, filtered: Knex.QueryBuilder): Promise<CountResult> {
  const policy = resource.count;
  if (policy.kind === 'exact') return { total: await countOf(db, filtered), exact: true };
  const threshold = policy.kind === 'capped' ? policy.limit : policy.threshold;
  const counted = await countOf(db, filtered, threshold + 1);
  if (counted <= threshold) return { total: counted, exact: true };
  if (policy.kind === 'capped') return { total: threshold, exact: false };
  // More than the threshold match: the estimate, but never a figure the count has just disproved.
  return { total: Math.max(await plannedRows(db, filtered), threshold + 1), exact: false };
}
