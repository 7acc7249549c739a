// Event type routes: the engine's route table and handlers (same permission checks, list
// parameters, validation and tenant-scoped service as a generated resource). An event type
// without employeeId is the caller's own (event-type.yaml: callerDefault), kept by a replace.
import type Router from '@koa/router';
import { crudHandlers, mountCrudRoutes } from '../../engine/resource/routes.js';
import type { ResourceService } from '../../engine/resource/service.js';

export function registerEventTypeRoutes(router: Router, service: ResourceService) {
  mountCrudRoutes(router, service.resource, crudHandlers(service));
}
