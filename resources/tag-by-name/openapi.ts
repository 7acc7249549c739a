// The deprecated tag lookup in the OpenAPI document: deprecated operations naming their
// successor, with the headers every answer carries.
import type { OpenApiPaths } from '../../engine/module.js';
import { errorResponse } from '../../engine/openapi/components.js';
import { jsonResponse, pascalCase, ref, schemaName } from '../../engine/openapi/fragments.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { BY_NAME_PATH, byNamePaths } from './routes.js';

const HEADERS = {
  Deprecation: { description: 'Always "true": this route is deprecated.', schema: { type: 'string', enum: ['true'] } },
  Link: {
    description: 'The successor request, e.g. `</api/tags?where[name]=Urgent>; rel="successor-version"`.',
    schema: { type: 'string' },
  },
};

const DESCRIPTION =
  "Deprecated: use GET /api/tags?where[name]={name}, which lists every tag of the tenant with that name. " +
  "This answers the oldest of them, or 404 when the caller's tenant has none. Any signed-in user of the tenant.";

/** The route sets the headers before anything else it does, so its errors carry them too (a 401 of the route's own, not one refused before it). */
const ERRORS = [400, 401, 403, 404, 500, 503];

function operation(resource: CompiledResource, operationId: string, parameter: object, path: string) {
  const alias = path === BY_NAME_PATH ? '' : ` Alias of ${BY_NAME_PATH}, kept for Ever Gauzy clients: it behaves the same.`;
  const record = jsonResponse('The tag with this name', ref(schemaName(resource, 'record'))) as Record<string, unknown>;
  const errors = Object.fromEntries(ERRORS.map((status) => {
    const shared = errorResponse(status);
    return [String(status), { ...shared, headers: { ...shared.headers, ...HEADERS } }];
  }));
  return {
    get: {
      tags: [resource.name],
      operationId,
      summary: 'Find a tag by its name (deprecated)',
      description: DESCRIPTION + alias,
      deprecated: true,
      parameters: [parameter],
      responses: { '200': { ...record, headers: HEADERS }, ...errors },
    },
  };
}

export function tagByNameOpenApi(resource: CompiledResource): OpenApiPaths {
  const name = (where: 'path' | 'query') => ({ name: 'name', in: where, required: true, schema: { type: 'string', minLength: 1 }, description: 'The exact tag name' });
  const paths: OpenApiPaths = {};
  for (const path of byNamePaths(resource)) {
    const suffix = path === BY_NAME_PATH ? '' : `Via${pascalCase(path.split('/')[2])}`;
    paths[path] = operation(resource, `getTagByNameQuery${suffix}`, name('query'), path);
    paths[`${path}/{name}`] = operation(resource, `getTagByName${suffix}`, name('path'), path);
  }
  return paths;
}
