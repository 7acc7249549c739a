// Event types as a hand-written module: event-type.yaml gives the model, validators and schemas
// (no generated routes); the module declares the engine's CRUD routes for it, documented with
// what differs. An event type without employeeId is the caller's own (event-type.yaml:
// callerDefault), kept by a replace.
import { fileURLToPath } from 'node:url';
import type { Engine, Module } from '../../engine/module.js';
import { crudRoutes } from '../../engine/resource/routes.js';
import type { ResourceService } from '../../engine/resource/service.js';

export const EVENT_TYPE = 'event-type';

const EMPLOYEE_DEFAULT =
  "Without employeeId the event type belongs to the caller's own employee record (none when the caller has none); " +
  'an explicit employeeId, null included, is kept and must name an employee of the tenant.';

function serviceOf(engine: Engine): ResourceService {
  const service = engine.services.get(EVENT_TYPE);
  if (!service) throw new Error(`The ${EVENT_TYPE} module needs its definition compiled: is event-type.yaml loaded?`);
  return service;
}

export const eventTypeModule: Module = {
  name: EVENT_TYPE,
  definitions: [fileURLToPath(new URL('./event-type.yaml', import.meta.url))],
  routes: (engine) =>
    crudRoutes(serviceOf(engine), {
      create: EMPLOYEE_DEFAULT,
      replace: 'Absent optional fields and tags are reset; employeeId left out keeps its value (send null to clear it).',
    }),
};
