// Event type routes, written by hand on the engine's building blocks: the same permission
// check, list parameters, validation and tenant-scoped service as a generated resource, with
// the create default of default-employee.ts.
import type Router from '@koa/router';
import { authorize, parseQueryString, searchInput } from '../../engine/http/context.js';
import { parseListQuery } from '../../engine/resource/list-query.js';
import { relationsOf } from '../../engine/resource/routes.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { withCallerEmployee } from './default-employee.js';

export function registerEventTypeRoutes(router: Router, service: ResourceService) {
  const resource = service.resource;
  const can = resource.permissions;
  for (const path of resource.paths) {
    const base = `/api/${path}`;
    router.get(base, async (ctx) => {
      const caller = authorize(ctx, can.read);
      ctx.body = await service.list(caller, parseListQuery(resource, parseQueryString(ctx.querystring), caller.tenantId));
    });
    router.post(`${base}/search`, async (ctx) => {
      const caller = authorize(ctx, can.read);
      ctx.body = await service.list(caller, parseListQuery(resource, searchInput(ctx.request.body), caller.tenantId));
    });
    router.get(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, can.read);
      ctx.body = await service.read(caller, ctx.params.id, relationsOf(resource, ctx));
    });
    router.post(base, async (ctx) => {
      const caller = authorize(ctx, can.create);
      const body = withCallerEmployee(ctx.request.body, caller);
      ctx.body = await service.create(caller, body, { organizationHeader: ctx.get('organization-id') || undefined });
      ctx.status = 201;
    });
    router.put(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, can.update);
      ctx.body = await service.replace(caller, ctx.params.id, ctx.request.body);
    });
    router.patch(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, can.update);
      ctx.body = await service.modify(caller, ctx.params.id, ctx.request.body);
    });
    router.delete(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, can.delete);
      await service.remove(caller, ctx.params.id);
      ctx.status = 204;
    });
  }
}
