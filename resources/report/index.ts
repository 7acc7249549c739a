// Reports (GET /api/report, GET /api/report/{slug}): figures aggregated in SQL from the time
// logs, each report a small definition under reports/ listed in catalogue.ts.
import type { Engine, Module } from '../../engine/module.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import type { ReportResources } from './definition.js';
import { reportRoutes } from './routes.js';

function resourceOf(engine: Engine, name: string): CompiledResource {
  const resource = engine.registry.get(name);
  if (!resource) throw new Error(`The report module needs the ${name} resource: is ${name}.yaml loaded?`);
  return resource;
}

const resourcesOf = (engine: Engine): ReportResources => ({
  timeLog: resourceOf(engine, 'time-log'),
  employee: resourceOf(engine, 'employee'),
  project: resourceOf(engine, 'organization-project'),
});

export const reportModule: Module = {
  name: 'report',
  routes: (engine) => reportRoutes({ db: engine.db, ...resourcesOf(engine) }),
};
