// The routes every resource gets, under its path and each alias (CONTRACT §4).
import type Router from '@koa/router';
import type { Context } from 'koa';
import { authorize, parseQueryString, readParameters, searchInput } from '../http/context.js';
import type { CompiledResource } from './compiled.js';
import { parseListQuery, parseRelations } from './list-query.js';
import { badRequest } from '../errors.js';
import type { ResourceService } from './service.js';

export function relationsOf(resource: CompiledResource, ctx: Context): string[] {
  const problems: string[] = [];
  const relations = parseRelations(resource, readParameters(ctx).relations, problems);
  if (problems.length) throw badRequest(problems);
  return relations;
}

export function registerResourceRoutes(router: Router, service: ResourceService) {
  const resource = service.resource;
  const p = resource.permissions;
  for (const path of resource.paths) {
    const base = `/api/${path}`;
    router.get(base, async (ctx) => {
      const caller = authorize(ctx, p.read);
      ctx.body = await service.list(caller, parseListQuery(resource, parseQueryString(ctx.querystring), caller.tenantId));
    });
    router.post(`${base}/search`, async (ctx) => {
      const caller = authorize(ctx, p.read);
      ctx.body = await service.list(caller, parseListQuery(resource, searchInput(ctx.request.body), caller.tenantId));
    });
    router.get(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, p.read);
      ctx.body = await service.read(caller, ctx.params.id, relationsOf(resource, ctx));
    });
    router.post(base, async (ctx) => {
      const caller = authorize(ctx, p.create);
      ctx.status = 201;
      ctx.body = await service.create(caller, ctx.request.body, { organizationHeader: ctx.get('organization-id') || undefined });
    });
    router.put(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, p.update);
      ctx.body = await service.replace(caller, ctx.params.id, ctx.request.body);
    });
    router.patch(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, p.update);
      ctx.body = await service.modify(caller, ctx.params.id, ctx.request.body);
    });
    router.delete(`${base}/:id`, async (ctx) => {
      const caller = authorize(ctx, p.delete);
      await service.remove(caller, ctx.params.id);
      ctx.status = 204;
    });
  }
}
