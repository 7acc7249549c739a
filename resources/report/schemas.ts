// OpenAPI schemas of the report answers, built from the same field lists the answers are made of.
import type { GroupBy } from './definition.js';

const uuid = { type: 'string', format: 'uuid' };
const nullableUuid = { ...uuid, nullable: true };
const seconds = { type: 'integer', minimum: 0, description: 'Whole seconds' };
const money = (description: string) => ({ type: 'number', description });

export const KEY_SCHEMAS: Record<GroupBy, Record<string, object>> = {
  date: { date: { type: 'string', format: 'date', description: 'The UTC day (for a weekly report, the Monday of the ISO week), e.g. 2026-01-05' } },
  employee: { employeeId: uuid, employeeName: { type: 'string', nullable: true, description: 'First and last name' } },
  project: {
    projectId: { ...nullableUuid, description: 'null for time logged without a project' },
    projectName: { type: 'string', nullable: true },
  },
};

export const TIME_FIGURE_SCHEMAS = { seconds, billableSeconds: { ...seconds, description: 'Whole seconds of the logs marked isBillable' } };

export const MONEY_FIGURE_SCHEMAS = {
  currency: { type: 'string', description: "The employee's billRateCurrency, else its organization's currency" },
  ...TIME_FIGURE_SCHEMAS,
  hours: money('seconds / 3600, rounded to 2 decimals'),
  amount: money('Σ seconds × billRateValue / 3600 over all tracked time, computed exactly and rounded once to 2 decimals (half away from zero)'),
  billableAmount: money('The same over the billable seconds only'),
};

export const object = (properties: Record<string, object>, description?: string) => ({
  type: 'object',
  ...(description ? { description } : {}),
  required: Object.keys(properties),
  additionalProperties: false,
  properties,
});

const range = {
  startDate: { type: 'string', format: 'date-time', nullable: true, description: 'Start of the range counted (inclusive); null: unbounded' },
  endDate: { type: 'string', format: 'date-time', nullable: true, description: 'End of the range counted (exclusive); null: unbounded' },
};

/** {report, groupBy, startDate, endDate, groups, total|totals}: every report answers this shape. */
export function answerSchema(slug: string, groupBy: readonly GroupBy[], group: object, total: Record<string, object>) {
  return object({
    report: { type: 'string', enum: [slug] },
    groupBy: { type: 'string', enum: [...groupBy] },
    ...range,
    groups: { type: 'array', items: group },
    ...total,
  });
}

/** Keys of every dimension a group's rows may show, optional since which ones depend on groupBy. */
export const allKeys = (dimensions: GroupBy[]) => Object.assign({}, ...dimensions.map((d) => KEY_SCHEMAS[d])) as Record<string, object>;
