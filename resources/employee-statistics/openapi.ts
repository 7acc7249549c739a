// The statistics answer, a named schema of the document's components (routes.ts refers to it).
import { MONTHS } from './statistics-query.js';

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

export const statisticsSchemas = () => ({ [STATISTICS_SCHEMA]: statisticsSchema });
