// Files the rows GROUPING SETS produced under their group: pure rearranging of figures the
// database already summed (nothing is added up here).
import type { Grouped, Row } from './aggregate.js';
import type { GroupBy } from './definition.js';

/** The fields that name a row's place in each dimension. */
const KEY_FIELDS: Record<GroupBy, string[]> = {
  date: ['date'],
  employee: ['employeeId', 'employeeName'],
  project: ['projectId', 'projectName'],
};

const pick = (row: Row, fields: string[]) => Object.fromEntries(fields.map((f) => [f, row[f] ?? null]));
const keyOf = (row: Row, groupBy: GroupBy) => String(row[KEY_FIELDS[groupBy][0]] ?? '');

export const TIME_FIGURES = ['seconds', 'billableSeconds'];
export const MONEY_FIGURES = ['currency', 'seconds', 'billableSeconds', 'hours', 'amount', 'billableAmount'];

export interface NestOptions {
  groupBy: GroupBy;
  /** The dimensions each detail row shows. */
  dimensions: GroupBy[];
  /** Fields of a detail row besides its dimensions. */
  rowFigures: string[];
  /** Money: subtotals and totals are lists, one entry per currency; else one object. */
  perCurrency: boolean;
}

export function nest(figures: Grouped, options: NestOptions) {
  const figureFields = options.perCurrency ? MONEY_FIGURES : TIME_FIGURES;
  const rowFields = [...options.dimensions.flatMap((d) => KEY_FIELDS[d]), ...options.rowFigures];
  const groups = new Map<string, Record<string, unknown>>();
  // Subtotal rows come sorted by the group's key: they give the groups and their order.
  for (const subtotal of figures.subtotals) {
    const key = keyOf(subtotal, options.groupBy);
    let group = groups.get(key);
    if (!group) {
      group = { ...pick(subtotal, KEY_FIELDS[options.groupBy]), ...(options.perCurrency ? { totals: [] } : pick(subtotal, figureFields)), rows: [] };
      groups.set(key, group);
    }
    if (options.perCurrency) (group.totals as unknown[]).push(pick(subtotal, figureFields));
  }
  for (const detail of figures.details) (groups.get(keyOf(detail, options.groupBy))!.rows as unknown[]).push(pick(detail, rowFields));
  const totals = figures.totals.map((t) => pick(t, figureFields));
  return {
    groups: [...groups.values()],
    ...(options.perCurrency ? { totals } : { total: totals[0] ?? pick({}, figureFields) }),
  };
}
