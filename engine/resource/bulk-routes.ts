// The bulk writes every resource with routes gets, under its path and each alias:
// POST /api/{r}/bulk (creates), PATCH (changes) and DELETE (deletes), with the create, update and
// delete permissions. Each item counts as one request against the rate limits: the limits count
// the request on the way in, the handler charges the other items before writing anything.
import type { Context, Middleware } from 'koa';
import type { CompiledResource } from './compiled.js';
import { badRequest, HttpError } from '../errors.js';
import { preconditionRequired } from '../http/conditional.js';
import { callerOf } from '../http/context.js';
import { bulkPaths } from '../openapi/bulk-paths.js';
import { chargeItems } from '../ratelimit/item-charge.js';
import { documentedOnce, type OperationDoc, type Route, type RouteMethod } from '../route.js';
import { createAll, modifyAll, removeAll } from './bulk.js';
import { createBodies, deleteIds, patchBodies } from './bulk-body.js';
import { BULK_PATH } from './route-names.js';
import type { ResourceService } from './service.js';
import { writeContext } from './write-context.js';

/**
 * A bulk change or delete is unconditional: If-Match names one record's version, and a bulk
 * request has many. A resource that takes no change without it takes none in bulk (428).
 */
function refuseConditions(ctx: Context, resource: CompiledResource) {
  if (resource.requireIfMatch) {
    throw new HttpError(428, `${preconditionRequired().message}; a bulk request cannot carry one per record, so change these records one by one`);
  }
  if (ctx.request.headers['if-match'] !== undefined) {
    throw badRequest('If-Match is not taken by bulk writes (it names the version of one record): change records one by one to write conditionally');
  }
}

function bulkHandlers(service: ResourceService): Record<'create' | 'modify' | 'remove', Middleware> {
  const { resource, bulkMaxItems: max } = service;
  return {
    async create(ctx) {
      const caller = callerOf(ctx);
      const bodies = createBodies(ctx.request.body, max);
      const context = writeContext(ctx, resource);
      await chargeItems(ctx, bodies.length);
      ctx.body = { items: await createAll(service, caller, bodies, context) };
      ctx.status = 201;
    },
    async modify(ctx) {
      const caller = callerOf(ctx);
      refuseConditions(ctx, resource);
      const items = patchBodies(ctx.request.body, max);
      await chargeItems(ctx, items.length);
      ctx.body = { items: await modifyAll(service, caller, items) };
    },
    async remove(ctx) {
      const caller = callerOf(ctx);
      refuseConditions(ctx, resource);
      const ids = deleteIds(ctx.request.body, max);
      await chargeItems(ctx, ids.length);
      await removeAll(service, caller, ids);
      ctx.status = 204;
    },
  };
}

const BULK_TABLE: Array<[RouteMethod, 'create' | 'modify' | 'remove', 'create' | 'update' | 'delete']> = [
  ['POST', 'create', 'create'],
  ['PATCH', 'modify', 'update'],
  ['DELETE', 'remove', 'delete'],
];

/**
 * /api/{path}/bulk under the resource's path and each alias (documented as the first: `aliasOf`):
 * a fixed path, never an id (routing/by-prefix.ts).
 */
export function bulkRoutes(service: ResourceService): Route[] {
  const { resource } = service;
  const handlers = bulkHandlers(service);
  const documented = bulkPaths(resource, service.bulkMaxItems);
  const [canonical] = resource.paths;
  return resource.paths.flatMap((path) =>
    BULK_TABLE.map(([method, operation, permission]): Route => {
      const routePath = `/api/${path}/${BULK_PATH}`;
      return {
        method,
        path: routePath,
        // A bulk create retried after a timeout must not create twice, like a create.
        ...(operation === 'create' ? { idempotent: { headers: resource.organizationHeader ? [resource.organizationHeader] : [] } } : {}),
        // DELETE reads no body unless its route says so: this one names its records there.
        ...(method === 'DELETE' ? { body: 'json' as const } : {}),
        permission: resource.permissions[permission],
        handler: handlers[operation],
        ...documentedOnce(routePath, `/api/${canonical}/${BULK_PATH}`, () => documented[routePath][method.toLowerCase()] as OperationDoc),
      };
    }),
  );
}
