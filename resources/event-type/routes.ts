// Event type routes: the engine's route table and handlers (same permission checks, list
// parameters, validation and tenant-scoped service as a generated resource), with a create of
// our own that applies default-employee.ts.
import type Router from '@koa/router';
import { authorize } from '../../engine/http/context.js';
import { crudHandlers, mountCrudRoutes, writeContext } from '../../engine/resource/routes.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { withCallerEmployee } from './default-employee.js';

export function registerEventTypeRoutes(router: Router, service: ResourceService) {
  const resource = service.resource;
  mountCrudRoutes(router, resource, {
    ...crudHandlers(service),
    async create(ctx) {
      const caller = authorize(ctx, resource.permissions.create);
      ctx.body = await service.create(caller, withCallerEmployee(ctx.request.body, caller), writeContext(ctx, resource));
      ctx.status = 201;
    },
  });
}
