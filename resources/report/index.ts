// Reports (GET /api/report, GET /api/report/{slug}): figures aggregated in SQL from the time
// logs, each report a small definition under reports/ listed in catalogue.ts.
import type { Engine, Module } from '../../engine/module.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { reportOpenApi } from './openapi.js';
import { registerReportRoutes } from './routes.js';

function resourceOf(engine: Engine, name: string): CompiledResource {
  const resource = engine.registry.get(name);
  if (!resource) throw new Error(`The report module needs the ${name} resource: is ${name}.yaml loaded?`);
  return resource;
}

export const reportModule: Module = {
  name: 'report',
  register(router, engine) {
    registerReportRoutes(router, { db: engine.db, timeLog: resourceOf(engine, 'time-log'), project: resourceOf(engine, 'organization-project') });
  },
  openapi() {
    return reportOpenApi();
  },
};
