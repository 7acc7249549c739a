// GET /api/employee/{id}/statistics (issue 6): an employee's tracked seconds, time log count,
// tasks assigned and seconds per UTC month over the last 12 months, in one SQL statement.
// The definitions it reads (employee, time-log, task) are the generated resources'.
import type { Engine, Module } from '../../engine/module.js';
import { statisticsSchemas } from './openapi.js';
import { statisticsRoute, type Clock } from './routes.js';
import type { StatisticsSources } from './statistics-query.js';

function resourceOf(engine: Engine, name: string) {
  const resource = engine.registry.get(name);
  if (!resource) throw new Error(`The employee-statistics module needs the ${name} resource: is ${name}.yaml loaded?`);
  return resource;
}

function sourcesOf(engine: Engine): StatisticsSources {
  const task = resourceOf(engine, 'task');
  const members = task.relations.get('members')?.through;
  if (!members) throw new Error('The employee-statistics module needs the task members relation (task_employee)');
  return { employee: resourceOf(engine, 'employee'), timeLog: resourceOf(engine, 'time-log'), task, members };
}

/** The module with the clock its months are counted from (tests fix it; requests never set it). */
export function createEmployeeStatisticsModule(now: Clock = () => new Date()): Module {
  return {
    name: 'employee-statistics',
    routes: (engine) => [statisticsRoute(engine.db, sourcesOf(engine), now)],
    openapiSchemas: statisticsSchemas,
  };
}

export const employeeStatisticsModule: Module = createEmployeeStatisticsModule();
