// The reports this service runs: data, one file per report under reports/.
import { PARAMETERS, type ReportDefinition, type ReportResources } from './definition.js';
import { requiredPermissions } from './permissions.js';
import { amountsOwed } from './reports/amounts-owed.js';
import { projectBudgets } from './reports/project-budgets.js';
import { timeLogDaily } from './reports/time-log-daily.js';
import { timeLogWeekly } from './reports/time-log-weekly.js';

export const REPORTS: readonly ReportDefinition[] = [timeLogDaily, timeLogWeekly, amountsOwed, projectBudgets];

/** What GET /api/report says about a report. */
export function describe(report: ReportDefinition, resources: ReportResources) {
  return {
    slug: report.slug,
    name: report.name,
    description: report.description,
    permissions: requiredPermissions(report, resources),
    groupBy: [...report.groupBy],
    defaultGroupBy: report.defaultGroupBy,
    parameters: [...PARAMETERS],
    period: report.period.description,
  };
}
