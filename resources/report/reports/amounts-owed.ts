// amounts-owed: what each employee's tracked time is worth at its bill rate, per currency.
// All tracked time counts (amount = duration × the employee's bill rate); the billable part is given
// beside it. Grouped by employee (default; rows per project), project (rows per employee) or
// UTC day (rows per employee and project); subtotals and the total are per currency.
import { groupedFigures } from '../aggregate.js';
import { GROUP_BY, type GroupBy, type ReportDefinition } from '../definition.js';
import { MONEY_FIGURES, nest } from '../nest.js';
import { currentMonth } from '../period.js';
import { MONEY_PERMISSION } from '../permissions.js';
import { allKeys, answerSchema, MONEY_FIGURE_SCHEMAS, object } from '../schemas.js';

const GROUPINGS: readonly GroupBy[] = ['employee', 'project', 'date'];

const DIMENSIONS: Record<GroupBy, GroupBy[]> = {
  employee: ['employee', 'project'],
  project: ['project', 'employee'],
  date: ['date', 'employee', 'project'],
};

const ROW_FIGURES = ['currency', 'billRateValue', ...MONEY_FIGURES.filter((f) => f !== 'currency')];

function schema() {
  const keys = allKeys(['date', 'employee', 'project']);
  const perCurrency = { type: 'array', items: object(MONEY_FIGURE_SCHEMAS), description: 'One entry per currency' };
  const row = {
    type: 'object',
    description: 'One employee and project (and day, grouped by date); date only when grouped by date',
    required: ['employeeId', 'employeeName', 'projectId', 'projectName', 'billRateValue', ...Object.keys(MONEY_FIGURE_SCHEMAS)],
    additionalProperties: false,
    properties: { ...keys, billRateValue: { type: 'integer', nullable: true, description: "The employee's bill rate per hour (null: none, counted as 0)" }, ...MONEY_FIGURE_SCHEMAS },
  };
  const group = {
    type: 'object',
    description: 'A group: its key fields (employeeId and employeeName, projectId and projectName, or date), its subtotals per currency and its rows',
    required: ['totals', 'rows'],
    additionalProperties: false,
    properties: { ...keys, totals: perCurrency, rows: { type: 'array', items: row } },
  };
  return answerSchema('amounts-owed', GROUPINGS, group, { totals: { ...perCurrency, description: 'Every row added up, one entry per currency' } });
}

export const amountsOwed: ReportDefinition = {
  slug: 'amounts-owed',
  name: 'Amounts owed',
  description:
    "Tracked time × the employee's bill rate, per employee and currency (the employee's billRateCurrency, else its organization's currency). " +
    'All tracked time counts; billableSeconds and billableAmount give the billable part. Amounts are computed in numeric and rounded once per figure to 2 decimals.',
  // Bill rates are employee data: a role must be able to read them.
  reads: ['employee'],
  permissions: [MONEY_PERMISSION],
  groupBy: GROUPINGS,
  defaultGroupBy: 'employee',
  period: currentMonth(366),
  schema: schema(),
  async run(context) {
    const { groupBy } = context.parameters;
    const dimensions = DIMENSIONS[groupBy];
    const figures = await groupedFigures(context, { bucket: groupBy === 'date' ? 'day' : undefined, dimensions, groupBy, money: true });
    // Rows show their fields in the usual order (date, employee, project) whatever the grouping.
    const shown = GROUP_BY.filter((d) => dimensions.includes(d));
    return nest(figures, { groupBy, dimensions: shown, rowFigures: ROW_FIGURES, perCurrency: true });
  },
};
