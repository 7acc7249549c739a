// The statistics route in the OpenAPI document, its answer a named schema of the components.
import type { OpenApiPaths } from '../../engine/module.js';
import { errorResponses, idParameter, jsonResponse, ref } from '../../engine/openapi/fragments.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { MONTHS } from './statistics-query.js';
import { statisticsPath } from './routes.js';

const seconds = (description: string) => ({ type: 'integer', minimum: 0, description });

export const STATISTICS_SCHEMA = 'EmployeeStatistics';

const statisticsSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['employeeId', 'totalSeconds', 'billableSeconds', 'timeLogCount', 'tasksAssigned', 'months'],
  properties: {
    employeeId: { type: 'string', format: 'uuid' },
    totalSeconds: seconds('Seconds of all stopped time logs of the employee, ever'),
    billableSeconds: seconds('The part of totalSeconds from billable time logs'),
    timeLogCount: { type: 'integer', minimum: 0, description: 'Every time log of the employee, running ones included' },
    tasksAssigned: { type: 'integer', minimum: 0, description: 'Tasks of the tenant that have the employee among their members' },
    months: {
      type: 'array',
      description:
        `The last ${MONTHS} UTC calendar months, oldest first, the current month last; a month without time is 0. ` +
        'A log spanning months counts in each month for the part that falls inside it.',
      minItems: MONTHS,
      maxItems: MONTHS,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['month', 'seconds'],
        properties: {
          month: { type: 'string', pattern: '^\\d{4}-\\d{2}$', example: '2025-12' },
          seconds: seconds('Seconds of stopped time logs inside this month'),
        },
      },
    },
  },
};

const DESCRIPTION =
  "Time tracked by one employee of the caller's tenant, computed in one query. Running time logs add no seconds " +
  'but count in timeLogCount; months are UTC and counted from the server\'s clock. An employee without time logs ' +
  'answers zeros. Needs the time-log read permission (TIME_TRACKER), and either the employee read permission (the ' +
  "owner rule applies) or the EMPLOYEE role asking for its own employee record; another tenant's employee, or another employee for an EMPLOYEE, is a 404. " +
  'No query parameters are taken: any one is a 400.';

export function statisticsOpenApi(employee: CompiledResource): OpenApiPaths {
  return {
    [statisticsPath(employee)]: {
      get: {
        tags: [employee.name],
        operationId: 'getEmployeeStatistics',
        summary: "An employee's tracked time: totals, tasks assigned and the last 12 months",
        description: DESCRIPTION,
        parameters: [idParameter()],
        responses: {
          '200': jsonResponse("The employee's statistics", ref(STATISTICS_SCHEMA)),
          ...errorResponses(400, 401, 403, 404, 500, 503),
        },
      },
    },
  };
}

export const statisticsSchemas = () => ({ [STATISTICS_SCHEMA]: statisticsSchema });
