// time-log-daily and time-log-weekly: tracked and billable seconds per UTC day or ISO week, per
// employee and project, nested by date (default), employee or project with subtotals and a total.
import { groupedFigures } from '../aggregate.js';
import { GROUP_BY, type GroupBy, type ReportDefinition } from '../definition.js';
import { nest, TIME_FIGURES } from '../nest.js';
import type { PeriodRule } from '../period.js';
import { allKeys, answerSchema, object, TIME_FIGURE_SCHEMAS } from '../schemas.js';
import type { Bucket } from '../time-source.js';

/** The group's dimension first, then the others in their usual order. */
const dimensionsFor = (groupBy: GroupBy): GroupBy[] => [groupBy, ...GROUP_BY.filter((d) => d !== groupBy)];

function schema(slug: string) {
  const row = object({ ...allKeys([...GROUP_BY]), ...TIME_FIGURE_SCHEMAS }, 'One date, employee and project');
  const group = {
    type: 'object',
    description: "A group: its key fields (date, or employeeId and employeeName, or projectId and projectName), its subtotal and its rows",
    required: ['seconds', 'billableSeconds', 'rows'],
    additionalProperties: false,
    properties: { ...allKeys([...GROUP_BY]), ...TIME_FIGURE_SCHEMAS, rows: { type: 'array', items: row } },
  };
  return answerSchema(slug, GROUP_BY, group, { total: object(TIME_FIGURE_SCHEMAS, 'Every row added up') });
}

export function timeLogReport(options: { slug: string; name: string; description: string; bucket: Bucket; period: PeriodRule }): ReportDefinition {
  return {
    slug: options.slug,
    name: options.name,
    description: options.description,
    // The time-log read permission only: names are labels of the logs the caller may count.
    reads: [],
    permissions: [],
    groupBy: GROUP_BY,
    defaultGroupBy: 'date',
    period: options.period,
    schema: schema(options.slug),
    async run(context) {
      const { groupBy } = context.parameters;
      const dimensions = dimensionsFor(groupBy);
      const figures = await groupedFigures(context, { bucket: options.bucket, dimensions, groupBy });
      return nest(figures, { groupBy, dimensions: [...GROUP_BY], rowFigures: TIME_FIGURES, perCurrency: false });
    },
  };
}

