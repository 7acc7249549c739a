// The routes every resource gets, under its path and each alias (docs/api-conventions.md),
// declared with their permission and documentation. A hand-written module whose resource keeps
// the generated behaviour (event types) declares the same routes with notes of its own.
import type { Context, Middleware } from 'koa';
import { badRequest } from '../errors.js';
import { answerPage, answerRecord, heldTags, ifMatchVersions, tagWritten, type HeldTags } from '../http/conditional.js';
import { callerOf, parseQueryString, readParameters, searchInput } from '../http/context.js';
import { openApiPath } from '../openapi/declared-paths.js';
import { resourcePaths, type OperationNotes } from '../openapi/resource-paths.js';
import { documentedOnce, type OperationDoc, type Route, type RouteMethod } from '../route.js';
import type { CompiledResource } from './compiled.js';
import { parseListQuery, parseRelations, parseSelect, parseWithDeleted, type ListQuery } from './list-query.js';
import { checkWithDeleted } from './soft-delete.js';
import type { Caller } from '../caller.js';
import type { Selection } from './selection.js';
import type { ListResult, ResourceService } from './service.js';
import { COUNT_PATH, PAGINATION_PATH, TOTAL_EXACT_HEADER } from './route-names.js';
import { keepVersion, versionOf } from './versions.js';
import { rowFromImage } from './sql/row-image.js';
import { keyedCreateOf } from '../idempotency/keyed-create.js';
import { writeContext } from './write-context.js';
import { bulkRoutes } from './bulk-routes.js';


/** Prefer: count=none (RFC 7240 form) asks, like count=none, for no count. */
const PREFERS_NO_COUNT = /(?:^|[,;]\s*)count\s*=\s*"?none"?\s*(?:$|[,;])/i;

const prefersNoCount = (ctx: Context) => PREFERS_NO_COUNT.test(ctx.get('Prefer'));

/**
 * A list's parameters from the query string. where= is no condition (a form serialiser writes an
 * empty where object so), as relations= names no relation; a search body's where: {} is the same.
 */
function queryInput(ctx: Context): Record<string, unknown> {
  const input = parseQueryString(ctx.querystring);
  if (input.where === '') delete input.where;
  return input;
}

function listQueryOf(ctx: Context, resource: CompiledResource, input: Record<string, unknown>, caller: Caller): ListQuery {
  const query = parseListQuery(resource, input, caller.tenantId);
  checkWithDeleted(resource, caller, query.withDeleted);
  if (prefersNoCount(ctx)) query.count = 'none';
  return query;
}

/**
 * {items, total} and, when more items follow, nextCursor; a GET list (`held`: what its
 * If-None-Match holds) is also tagged, a 304 when the client holds this page (then no header
 * but the tag), and links the next page (its own query with the cursor instead of skip or the
 * cursor before).
 */
function answerList(ctx: Context, { items, total, exact, nextCursor }: ListResult, get: false | { held: HeldTags }) {
  const page = nextCursor ? { items, total, nextCursor } : { items, total };
  if (!get) ctx.body = page;
  else if (answerPage(ctx, get.held, page, exact)) return;
  ctx.set(TOTAL_EXACT_HEADER, String(exact));
  if (prefersNoCount(ctx)) ctx.set('Preference-Applied', 'count=none');
  if (nextCursor && get) {
    const next = new URLSearchParams(ctx.querystring);
    next.delete('skip');
    next.delete('cursor');
    next.append('cursor', nextCursor);
    ctx.set('Link', `<${ctx.path}?${next.toString().replaceAll('%5B', '[').replaceAll('%5D', ']')}>; rel="next"`);
  }
}

/**
 * A write's answer, tagged: shaped when it carries the children it wrote (`children`: the
 * resource's writable hasMany relations) beside the record as stored.
 */
function answerWritten(ctx: Context, children: readonly string[], record: Record<string, any>) {
  const shaped = children.some((name) => record[name] !== undefined);
  tagWritten(ctx, versionOf(record)!, shaped, record);
  ctx.body = record;
}

/** GET by id's parameters: relations[] and select[], as a list takes them, and withDeleted on a softDelete resource. */
function readOptions(resource: CompiledResource, ctx: Context, caller: Caller): { relations: string[]; select?: Selection; withDeleted: boolean } {
  const problems: string[] = [];
  const parameters = readParameters(ctx, resource.softDelete ? ['relations', 'select', 'withDeleted'] : ['relations', 'select']);
  const relations = parseRelations(resource, parameters.relations, problems);
  const select = parseSelect(resource, parameters.select, relations, problems);
  const withDeleted = parameters.withDeleted === undefined ? false : parseWithDeleted(parameters.withDeleted, problems);
  if (problems.length) throw badRequest(problems);
  checkWithDeleted(resource, caller, withDeleted);
  return { relations, select, withDeleted: withDeleted === true };
}

export { writeContext };

/** The generated handlers; each runs after its declaration's permission check (callerOf, not authorize). */
function crudHandlers(service: ResourceService): Record<CrudOperation, Middleware> {
  const resource = service.resource;
  const children = resource.writableRelations.filter((r) => r.kind === 'hasMany').map((r) => r.name);
  return {
    async list(ctx) {
      const caller = callerOf(ctx);
      const held = heldTags(ctx);
      answerList(ctx, await service.list(caller, listQueryOf(ctx, resource, queryInput(ctx), caller)), { held });
    },
    async count(ctx) {
      const caller = callerOf(ctx);
      const query = parseListQuery(resource, queryInput(ctx), caller.tenantId);
      checkWithDeleted(resource, caller, query.withDeleted);
      const { total, exact } = await service.count(caller, query);
      ctx.set(TOTAL_EXACT_HEADER, String(exact));
      ctx.body = { total };
    },
    async search(ctx) {
      const caller = callerOf(ctx);
      answerList(ctx, await service.list(caller, listQueryOf(ctx, resource, searchInput(ctx.request.body), caller)), false);
    },
    async read(ctx) {
      const caller = callerOf(ctx);
      const { relations, select, withDeleted } = readOptions(resource, ctx, caller);
      const held = heldTags(ctx);
      const record = await service.read(caller, ctx.params.id, relations, select, withDeleted);
      answerRecord(ctx, held, record, versionOf(record)!, relations.length > 0 || select !== undefined);
    },
    async create(ctx) {
      const caller = callerOf(ctx);
      answerWritten(ctx, children, await service.create(caller, ctx.request.body, writeContext(ctx, resource), keyedCreateOf(ctx)));
      ctx.status = 201;
    },
    async replace(ctx) {
      const caller = callerOf(ctx);
      const versions = ifMatchVersions(ctx, resource.requireIfMatch);
      answerWritten(ctx, children, await service.replace(caller, ctx.params.id, ctx.request.body, versions));
    },
    async modify(ctx) {
      const caller = callerOf(ctx);
      const versions = ifMatchVersions(ctx, resource.requireIfMatch);
      answerWritten(ctx, children, await service.modify(caller, ctx.params.id, ctx.request.body, versions));
    },
    async remove(ctx) {
      const caller = callerOf(ctx);
      await service.remove(caller, ctx.params.id, ifMatchVersions(ctx, resource.requireIfMatch));
      ctx.status = 204;
    },
    async recover(ctx) {
      const caller = callerOf(ctx);
      answerWritten(ctx, children, await service.recover(caller, ctx.params.id, ifMatchVersions(ctx, resource.requireIfMatch)));
    },
  };
}

type CrudOperation = 'list' | 'count' | 'search' | 'read' | 'create' | 'replace' | 'modify' | 'remove' | 'recover';

/** Each route of a resource's path: method, sub-path, handler, permission. */
const CRUD_TABLE: Array<[RouteMethod, string, CrudOperation, 'read' | 'create' | 'update' | 'delete']> = [
  ['GET', '', 'list', 'read'],
  ['GET', `/${PAGINATION_PATH}`, 'list', 'read'],
  ['GET', `/${COUNT_PATH}`, 'count', 'read'],
  ['POST', '/search', 'search', 'read'],
  ['GET', '/:id', 'read', 'read'],
  ['POST', '', 'create', 'create'],
  ['PUT', '/:id', 'replace', 'update'],
  ['PATCH', '/:id', 'modify', 'update'],
  ['DELETE', '/:id', 'remove', 'delete'],
];

/** A softDelete resource's two more: recover, and Ever Gauzy's spelling of its delete. */
const SOFT_DELETE_TABLE: typeof CRUD_TABLE = [
  ['PUT', '/:id/recover', 'recover', 'delete'],
  ['DELETE', '/:id/soft', 'remove', 'delete'],
];

/**
 * The seven routes under the resource's path and each alias, and the list's two Ever Gauzy
 * spellings: /pagination (the list itself) and /count (its total); documented as
 * openapi/resource-paths.ts words them, with `notes` where a module's handlers differ, an alias
 * as the route it aliases (`aliasOf`). Fixed sub-paths never reach /:id, whatever the order
 * (routing/by-prefix.ts).
 */
export function crudRoutes(service: ResourceService, notes?: OperationNotes): Route[] {
  const { resource } = service;
  const handlers = crudHandlers(service);
  // A create kept by its own statement answers again from the row's JSON image (engine/idempotency/keyed-create.ts).
  const replayCreated = (ctx: Context, image: Record<string, unknown>) => answerWritten(ctx, [], keepVersion(rowFromImage(resource, image)));
  const documented = resourcePaths(resource, notes);
  const table = resource.softDelete ? [...CRUD_TABLE, ...SOFT_DELETE_TABLE] : CRUD_TABLE;
  const [canonical] = resource.paths;
  const crud = resource.paths.flatMap((path) =>
    table.map(([method, sub, operation, permission]): Route => {
      const routePath = `/api/${path}${sub}`;
      return {
        method,
        path: routePath,
        // A create retried after a timeout must not create twice; the organization header is part of what it asks.
        ...(operation === 'create' ? { idempotent: { headers: resource.organizationHeader ? [resource.organizationHeader] : [], replay: replayCreated } } : {}),
        permission: resource.permissions[permission],
        handler: handlers[operation],
        ...documentedOnce(routePath, `/api/${canonical}${sub}`, () => documented[openApiPath(routePath)][method.toLowerCase()] as OperationDoc),
      };
    }),
  );
  return [...crud, ...bulkRoutes(service)];
}
