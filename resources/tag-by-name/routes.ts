// The two spellings of the deprecated tag lookup: the name in the path or in ?name=. Both answer
// like a read of the tag (its permission, tenant scope, 404 envelope), with the deprecation
// headers on every answer so that a client learns of the successor even from an error.
import type { Context } from 'koa';
import { authorize, parameterLabel } from '../../engine/http/context.js';
import { badRequest, notFound } from '../../engine/errors.js';
import { parseListQuery } from '../../engine/resource/list-query.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import type { ResourceService } from '../../engine/resource/service.js';
import { documentedOnce, type Route } from '../../engine/route.js';
import { BY_NAME_DESCRIPTION, byNameResponses, nameParameter } from './openapi.js';

const BY_NAME_PATH = '/api/tags/getByName';

/** The lookup under the tag's path and each alias (/api/tags/getByName, /api/tag/getByName). */
const byNamePaths = (resource: CompiledResource) => resource.paths.map((path) => `/api/${path}/getByName`);

/** The list request that replaces this route: the tags with exactly this name. */
export const successorOf = (name: string) => `/api/tags?where[name]=${encodeURIComponent(name)}`;

function setDeprecation(ctx: Context, successor: string) {
  ctx.set('Deprecation', 'true');
  ctx.set('Link', `<${successor}>; rel="successor-version"`);
}

/** The one name asked for, or a 400; other query parameters are refused rather than ignored. */
function nameOf(ctx: Context, fromPath: string | undefined): string {
  const allowed = fromPath === undefined ? ['name'] : [];
  const problems = Object.keys(ctx.query)
    .filter((key) => !allowed.includes(key))
    .map((key) => `${parameterLabel(key)} is not a supported parameter of ${ctx.path}${allowed.length ? `; supported: ${allowed.join(', ')}` : ''}`);
  const raw = fromPath ?? ctx.query.name;
  if (Array.isArray(raw)) problems.push('name must be a string');
  else if (raw === undefined || raw === '') problems.push('name should not be empty');
  if (problems.length) throw badRequest(problems);
  return raw as string;
}

async function findByName(ctx: Context, service: ResourceService, fromPath: string | undefined) {
  setDeprecation(ctx, '/api/tags');
  const caller = authorize(ctx, service.resource.permissions.read);
  const name = nameOf(ctx, fromPath);
  setDeprecation(ctx, successorOf(name));
  // Names are unique per organization, not per tenant: the oldest of the tenant's tags so named,
  // the first that the successor list would give in that order.
  const query = parseListQuery(service.resource, { where: { name }, order: { createdAt: 'ASC' }, take: '1' }, caller.tenantId);
  const { items } = await service.list(caller, query);
  if (!items.length) throw notFound();
  ctx.body = items[0];
}

/**
 * Both spellings under the tag's path and each alias. No declared permission: the headers come
 * before the read permission's check (findByName), so that a 403 carries them too.
 */
export function tagByNameRoutes(service: ResourceService): Route[] {
  const { resource } = service;
  // Modules' routes come before the generated ones, so /api/tags/:id does not take these.
  return byNamePaths(resource).flatMap((path): Route[] => {
    // An alias is documented as /api/tags/getByName (the document lists it in x-aliases).
    const docs = (operationId: string, parameter: object, sub: string) =>
      documentedOnce(`${path}${sub}`, `${BY_NAME_PATH}${sub}`, () => ({
        tags: [resource.name],
        operationId,
        summary: 'Find a tag by its name (deprecated)',
        description: BY_NAME_DESCRIPTION,
        deprecated: true,
        parameters: [parameter],
        responses: byNameResponses(resource),
      }));
    return [
      { method: 'GET', path, handler: (ctx) => findByName(ctx, service, undefined), ...docs('getTagByNameQuery', nameParameter('query'), '') },
      { method: 'GET', path: `${path}/:name`, handler: (ctx) => findByName(ctx, service, ctx.params.name), ...docs('getTagByName', nameParameter('path'), '/:name') },
    ];
  });
}
