// One statement per report run: the pieces (time-source.ts) summed with GROUPING SETS into the
// detail rows, one subtotal per group and the grand total, all at once in SQL. nest.ts then only
// files those already-summed rows under their group; no figure is computed in JavaScript.
import type { GroupBy, ReportContext } from './definition.js';
import { Statement, rowsOf } from './statement.js';
import { piecesSource, type Bucket } from './time-source.js';

/** A dimension's column in the pieces, its SQL type (for the null it is when absent), and how it sorts. */
const DIMENSIONS: Record<GroupBy, { column: string; type: string; sort: string[] }> = {
  date: { column: 'bucket', type: 'timestamp', sort: ['a.bucket'] },
  employee: { column: 'employeeId', type: 'uuid', sort: ['e.firstName', 'e.lastName', 'a.employeeId'] },
  project: { column: 'projectId', type: 'uuid', sort: ['op.name', 'a.projectId'] },
};
const ALL_DIMENSIONS: GroupBy[] = ['date', 'employee', 'project'];

/** Sums of whole seconds; the billable ones are those of logs marked isBillable. */
const TIME_MEASURES = `
  coalesce(sum(p.seconds), 0)::float8 as seconds,
  coalesce(sum(p.seconds) filter (where p."isBillable"), 0)::float8 as "billableSeconds"`;

/**
 * Money in numeric, each figure rounded once (half away from zero) to 2 decimals from its own
 * seconds: hours = seconds / 3600, amount = Σ seconds × bill rate / 3600 (no rate counts as 0).
 */
const MONEY_MEASURES = `${TIME_MEASURES},
  round(coalesce(sum(p.seconds), 0)::numeric / 3600, 2)::float8 as hours,
  round(coalesce(sum(p.seconds::numeric * coalesce(p.rate, 0)), 0) / 3600, 2)::float8 as amount,
  round(coalesce(sum(p.seconds::numeric * coalesce(p.rate, 0)) filter (where p."isBillable"), 0) / 3600, 2)::float8 as "billableAmount",
  max(p.rate) as rate`;

export interface GroupedQuery {
  bucket?: Bucket;
  /** The dimensions of a detail row; the group's first, then the order rows sort in within a group. */
  dimensions: GroupBy[];
  groupBy: GroupBy;
  /** Money reports keep currencies apart at every level: amounts in different currencies never add up. */
  money?: boolean;
}

export type Row = Record<string, unknown>;

export interface Grouped {
  details: Row[];
  /** Subtotal rows, one per group (money: one per group and currency). */
  subtotals: Row[];
  /** The grand total (money: one per currency). */
  totals: Row[];
}

export async function groupedFigures(context: ReportContext, query: GroupedQuery): Promise<Grouped> {
  const { db, caller } = context;
  const source = piecesSource(context, { bucket: query.bucket, money: query.money });
  const dims = query.dimensions.map((d) => `p.${DIMENSIONS[d].column}`);
  const group = `p.${DIMENSIONS[query.groupBy].column}`;
  // Money keeps currencies apart at every level, the grand total included.
  const currency = query.money ? ['p.currency'] : [];
  const s = new Statement().add(`${source.sql}, agg as (select `, ...source.bindings);
  for (const d of ALL_DIMENSIONS) {
    const { column, type } = DIMENSIONS[d];
    if (query.dimensions.includes(d)) s.add('?? as ??, ', `p.${column}`, column);
    else s.add(`null::${type} as ??, `, column);
  }
  if (query.money) s.add('p.currency, ');
  s.add('grouping(').identifiers(dims).add(`) as level, ${query.money ? MONEY_MEASURES : TIME_MEASURES} from pieces p group by grouping sets ((`);
  s.identifiers([...dims, ...currency]).add('), (').identifiers([group, ...currency]).add('), (').identifiers(currency).add(')))');
  s.add(`
    select to_char(a.bucket, 'YYYY-MM-DD') as "date",
      a."employeeId", case when e.id is null then null else e."firstName" || ' ' || e."lastName" end as "employeeName",
      a."projectId", op.name as "projectName", a.level, a.seconds, a."billableSeconds"`);
  if (query.money) s.add(', a.currency, a.rate as "billRateValue", a.hours, a.amount, a."billableAmount"');
  s.add(`
    from agg a
    left join employee e on e.id = a."employeeId" and e."tenantId" = ?
    left join organization_project op on op.id = a."projectId" and op."tenantId" = ?
    order by `, caller.tenantId, caller.tenantId);
  const order = [query.groupBy, ...query.dimensions.filter((d) => d !== query.groupBy)].flatMap((d) => DIMENSIONS[d].sort);
  s.identifiers(query.money ? [...order, 'a.currency'] : order);
  const rows = rowsOf<Row>(await db.raw(s.text, s.bindings as any[]));
  // GROUPING() has a bit per dimension, the first the highest: 0 for a detail row, every bit
  // but the group's for a subtotal, all bits for the grand total.
  const all = (1 << dims.length) - 1;
  const groupLevel = all & ~(1 << (dims.length - 1 - dims.indexOf(group)));
  return {
    details: rows.filter((r) => r.level === 0),
    subtotals: rows.filter((r) => r.level === groupLevel),
    totals: rows.filter((r) => r.level === all),
  };
}
