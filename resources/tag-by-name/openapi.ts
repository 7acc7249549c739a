// The deprecated tag lookup's documentation fragments (routes.ts declares the operations):
// deprecated operations naming their successor, with the headers every answer carries.
import { errorResponse } from '../../engine/openapi/components.js';
import { jsonResponse, ref, schemaName } from '../../engine/openapi/fragments.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';

const HEADERS = {
  Deprecation: { description: 'Always "true": this route is deprecated.', schema: { type: 'string', enum: ['true'] } },
  Link: {
    description: 'The successor request, e.g. `</api/tags?where[name]=Urgent>; rel="successor-version"`.',
    schema: { type: 'string' },
  },
};

export const BY_NAME_DESCRIPTION =
  "Deprecated: use GET /api/tags?where[name]={name}, which lists every tag of the tenant with that name. " +
  "This answers the oldest of them, or 404 when the caller's tenant has none. Any signed-in user of the tenant.";

/** The route sets the headers before anything else it does, so its errors carry them too (a 401 of the route's own, not one refused before it). */
const ERRORS = [400, 401, 403, 404, 500, 503];

/** The name, in the path or as ?name=. */
export const nameParameter = (where: 'path' | 'query') => ({
  name: 'name',
  in: where,
  required: true,
  schema: { type: 'string', minLength: 1 },
  description: 'The exact tag name',
});


/** The tag, or an error, each with the deprecation headers. */
export function byNameResponses(resource: CompiledResource) {
  const record = jsonResponse('The tag with this name', ref(schemaName(resource, 'record'))) as Record<string, unknown>;
  const errors = Object.fromEntries(ERRORS.map((status) => {
    const shared = errorResponse(status);
    return [String(status), { ...shared, headers: { ...shared.headers, ...HEADERS } }];
  }));
  return { '200': { ...record, headers: HEADERS }, ...errors };
}
