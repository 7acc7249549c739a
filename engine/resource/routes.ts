// The routes every resource gets, under its path and each alias (docs/api-conventions.md). The handlers and
// the route table are separate so that a hand-written module can mount the same table with
// some handlers of its own.
import type Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { badRequest } from '../errors.js';
import { authorize, parseQueryString, readParameters, searchInput } from '../http/context.js';
import type { CompiledResource } from './compiled.js';
import { UUID_PATTERN } from './fields.js';
import { parseListQuery, parseRelations } from './list-query.js';
import type { ListResult, ResourceService } from './service.js';

/** The sub-paths of the list's other spellings (Ever Gauzy's): the same page, or its total alone. */
export const PAGINATION_PATH = 'pagination';
export const COUNT_PATH = 'count';

/** Says whether total is exact (false: the count policy's cap or estimate, docs/query-language.md#counting). */
export const TOTAL_EXACT_HEADER = 'X-Total-Exact';

function answerList(ctx: Context, { items, total, exact }: ListResult) {
  ctx.set(TOTAL_EXACT_HEADER, String(exact));
  ctx.body = { items, total };
}

export function relationsOf(resource: CompiledResource, ctx: Context): string[] {
  const problems: string[] = [];
  const relations = parseRelations(resource, readParameters(ctx).relations, problems);
  if (problems.length) throw badRequest(problems);
  return relations;
}

/**
 * The organization header (Organization-Id for Ever Gauzy clients) may name a new record's
 * organization. Sent, it must be a UUID, also when the body names the organization itself (one
 * rule, the document's); sent empty, it counts as not sent.
 */
export function writeContext(ctx: Context, resource: CompiledResource) {
  const organizationHeader = (resource.organizationHeader && ctx.get(resource.organizationHeader)) || undefined;
  if (organizationHeader !== undefined && !UUID_PATTERN.test(organizationHeader)) throw badRequest(`${resource.organizationHeader} header must be a UUID`);
  return { organizationHeader };
}

export interface CrudHandlers {
  list: Middleware;
  /** The list's total alone, under the same parameters (GET /api/{r}/count). */
  count: Middleware;
  search: Middleware;
  read: Middleware;
  create: Middleware;
  replace: Middleware;
  modify: Middleware;
  remove: Middleware;
}

export function crudHandlers(service: ResourceService): CrudHandlers {
  const resource = service.resource;
  const can = resource.permissions;
  return {
    async list(ctx) {
      const caller = authorize(ctx, can.read);
      answerList(ctx, await service.list(caller, parseListQuery(resource, parseQueryString(ctx.querystring), caller.tenantId)));
    },
    async count(ctx) {
      const caller = authorize(ctx, can.read);
      const { total, exact } = await service.count(caller, parseListQuery(resource, parseQueryString(ctx.querystring), caller.tenantId));
      ctx.set(TOTAL_EXACT_HEADER, String(exact));
      ctx.body = { total };
    },
    async search(ctx) {
      const caller = authorize(ctx, can.read);
      answerList(ctx, await service.list(caller, parseListQuery(resource, searchInput(ctx.request.body), caller.tenantId)));
    },
    async read(ctx) {
      const caller = authorize(ctx, can.read);
      ctx.body = await service.read(caller, ctx.params.id, relationsOf(resource, ctx));
    },
    async create(ctx) {
      const caller = authorize(ctx, can.create);
      ctx.body = await service.create(caller, ctx.request.body, writeContext(ctx, resource));
      ctx.status = 201;
    },
    async replace(ctx) {
      const caller = authorize(ctx, can.update);
      ctx.body = await service.replace(caller, ctx.params.id, ctx.request.body);
    },
    async modify(ctx) {
      const caller = authorize(ctx, can.update);
      ctx.body = await service.modify(caller, ctx.params.id, ctx.request.body);
    },
    async remove(ctx) {
      const caller = authorize(ctx, can.delete);
      await service.remove(caller, ctx.params.id);
      ctx.status = 204;
    },
  };
}

/**
 * The seven routes under the resource's path and each alias, and the list's two Ever Gauzy
 * spellings: /pagination (the list itself) and /count (its total). Fixed sub-paths never reach
 * /:id, whatever the order (routing/by-prefix.ts).
 */
export function mountCrudRoutes(router: Router, resource: CompiledResource, handlers: CrudHandlers) {
  for (const path of resource.paths) {
    const base = `/api/${path}`;
    router.get(base, handlers.list);
    router.get(`${base}/${PAGINATION_PATH}`, handlers.list);
    router.get(`${base}/${COUNT_PATH}`, handlers.count);
    router.post(`${base}/search`, handlers.search);
    router.get(`${base}/:id`, handlers.read);
    router.post(base, handlers.create);
    router.put(`${base}/:id`, handlers.replace);
    router.patch(`${base}/:id`, handlers.modify);
    router.delete(`${base}/:id`, handlers.remove);
  }
}

export function registerResourceRoutes(router: Router, service: ResourceService) {
  mountCrudRoutes(router, service.resource, crudHandlers(service));
}
