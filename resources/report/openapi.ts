// The report routes' documentation fragments (routes.ts declares each operation): every report's
// query parameters (its own groupBy values and default), the catalogue's item and the permission
// rule in words.
import { dateSchema as dateParameterSchema } from '../../engine/openapi/fragments.js';
import { REPORTS } from './catalogue.js';
import { GROUP_BY, PARAMETERS, type ReportDefinition, type ReportResources } from './definition.js';
import { MAX_IDS } from './parameters.js';
import { MONEY_PERMISSION, requiredPermissions } from './permissions.js';

export const REPORT_TAG = 'report';

/** The list parameters' date schema (the one of every date in the document). */
const dateSchema = dateParameterSchema();

function ids(name: string, what: string) {
  return {
    name,
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    description: `Only ${what} (any of them). Also accepted as ${name}[]=… or ${name}[0]=…; at most ${MAX_IDS}.`,
    schema: { type: 'array', items: { type: 'string', format: 'uuid' }, maxItems: MAX_IDS },
  };
}

/** The rule in words, with the permission names of this registry. */
export const permissionRule = ({ timeLog, employee, project }: ReportResources) =>
  `Every report sums time logs, so it needs the time-log read permission (${timeLog.permissions.read}); the money reports also need ${MONEY_PERMISSION} and ` +
  `the employee read permission (${employee.permissions.read}: bill rates), and project-budgets the project read permission (${project.permissions.read}: budgets). ` +
  'Employee and project names in the time reports are labels of the logs counted (an EMPLOYEE counts only its own logs).';

/** The query parameters of one report; groupBy takes that report's values only. */
export const parametersOf = (report: ReportDefinition) => [
  { name: 'startDate', in: 'query', required: false, description: 'Start of the range (inclusive). Defaults per report (see the description).', schema: dateSchema },
  { name: 'endDate', in: 'query', required: false, description: 'End of the range (exclusive); a date-only value includes that whole day. Defaults per report.', schema: dateSchema },
  { name: 'organizationId', in: 'query', required: false, description: "Only time logs naming this organization (project-budgets: only its projects, each with every log on it, whatever organization the log names). An unknown id gives an empty report.", schema: { type: 'string', format: 'uuid' } },
  ids('employeeId', "these employees' time logs"),
  ids('projectId', 'time logs on these projects (project-budgets: these projects)'),
  {
    name: 'groupBy',
    in: 'query',
    required: false,
    description: `What the rows are nested by: ${report.groupBy.join(', ')} (default ${report.defaultGroupBy}); any other value is a 400.`,
    schema: { type: 'string', enum: [...report.groupBy], default: report.defaultGroupBy },
  },
];

/** How one report runs, in words: its period, permissions, time rules and 400s. */
export const runDescription = (report: ReportDefinition, resources: ReportResources) =>
  `${report.description} ${report.period.description} Needs the permissions ${requiredPermissions(report, resources).join(' and ')}. ` +
  "Aggregates time logs of the caller's tenant (an EMPLOYEE counts only its own). Times are UTC; a running log counts nothing; " +
  'a log is cut to the range and split at day or week boundaries. Every parameter problem is a 400 (an unknown parameter, a bad date or UUID, ' +
  `startDate after endDate, a range longer than the report allows, a groupBy it does not take); a role lacking any of its permissions a 403. ${permissionRule(resources)}`;

const catalogueItem = {
  type: 'object',
  required: ['slug', 'name', 'description', 'permissions', 'groupBy', 'defaultGroupBy', 'parameters', 'period'],
  properties: {
    slug: { type: 'string', enum: REPORTS.map((r) => r.slug) },
    name: { type: 'string' },
    description: { type: 'string' },
    permissions: { type: 'array', items: { type: 'string' }, description: 'Every permission (config/roles.yaml) a role needs to run it' },
    groupBy: { type: 'array', items: { type: 'string', enum: [...GROUP_BY] } },
    defaultGroupBy: { type: 'string', enum: [...GROUP_BY] },
    parameters: { type: 'array', items: { type: 'string', enum: [...PARAMETERS] } },
    period: { type: 'string', description: 'The default range and the longest accepted' },
  },
};

/** GET /api/report's answer. */
export const catalogueSchema = {
  type: 'object',
  required: ['items', 'total'],
  properties: { items: { type: 'array', items: catalogueItem }, total: { type: 'integer', minimum: 0 } },
};
