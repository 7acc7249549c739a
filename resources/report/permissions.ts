// Who may run a report. Its figures are time logs summed up, so every report needs what reading
// the time logs needs (a role refused GET /api/time-log learns nothing from their sums); a report
// that shows another resource's data (bill rates, budgets) needs that resource's read permission
// too, and the money reports INVOICES_VIEW besides. Read permissions come from the registry, so a
// change to a resource's YAML moves the reports with it.
import { ANY_AUTHENTICATED, type Caller } from '../../engine/caller.js';
import type { ReportDefinition, ReportResources } from './definition.js';

/** What the money reports (amounts-owed, project-budgets) need besides the read permissions. */
export const MONEY_PERMISSION = 'INVOICES_VIEW';

/** Every permission a role must hold to run the report, in a stable order, without repeats. */
export function requiredPermissions(report: ReportDefinition, resources: ReportResources): string[] {
  const reads = [resources.timeLog, ...report.reads.map((name) => resources[name])].map((r) => r.permissions.read);
  return [...new Set([...reads, ...report.permissions])].filter((p) => p !== ANY_AUTHENTICATED);
}

export const mayRun = (caller: Caller, permissions: readonly string[]) => permissions.every((p) => caller.permissions.has(p));
