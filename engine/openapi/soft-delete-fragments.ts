// The soft-delete parts of a softDelete resource's operations (engine/resource/soft-delete.ts):
// the withDeleted parameter, PUT /{id}/recover, and DELETE /{id}/soft (Ever Gauzy's spelling).
import type { CompiledResource } from '../resource/compiled.js';
import { article, errorResponses, idParameter, jsonResponse } from './fragments.js';
import { etagHeader } from './conditional-fragments.js';

const WITH_DELETED = 'true: deleted records too (their deletedAt is set); needs the delete permission (403 without it). false or absent: records not deleted only';

/** withDeleted on a list, count or read of a softDelete resource (none for other resources). */
export function withDeletedParameters(resource: CompiledResource): object[] {
  if (!resource.softDelete) return [];
  return [{ name: 'withDeleted', in: 'query', required: false, description: WITH_DELETED, schema: { type: 'boolean', default: false } }];
}

/** The same in a search body. */
export const withDeletedProperty = () => ({ type: 'boolean', default: false, description: WITH_DELETED });

/**
 * Operations under /{id} beyond the CRUD ones, each made by `operation` (resource-paths.ts) with
 * its verb, summary and permission: PUT /{id}/recover and DELETE /{id}/soft.
 */
export function softDeletePaths(
  resource: CompiledResource,
  base: string,
  record: object,
  ifMatch: object,
  conditionalErrors: number[],
  operation: (verb: 'recover' | 'softDelete', summary: string, rest: object) => object,
): Record<string, Record<string, object>> {
  const n = resource.name;
  return {
    [`${base}/{id}/recover`]: {
      put: operation('recover', `Bring back a deleted ${n}`, {
        parameters: [idParameter(), ifMatch],
        responses: {
          '200': { ...jsonResponse(`The ${n}, no longer deleted`, record), headers: etagHeader() },
          // 404 also for a record that is not deleted; 409 when another record took its unique values
          // meanwhile; 413 and 415 from the JSON body parser, which reads any body a PUT carries.
          ...errorResponses(400, 401, 403, 404, 409, ...conditionalErrors, 413, 415, 500, 503),
        },
      }),
    },
    [`${base}/{id}/soft`]: {
      delete: operation('softDelete', `Delete ${article(n)} ${n} (Ever Gauzy's spelling of DELETE /{id})`, {
        parameters: [idParameter(), ifMatch],
        responses: { '204': { description: 'Deleted (marked deleted: recover brings it back)' }, ...errorResponses(400, 401, 403, 404, ...conditionalErrors, 500, 503) },
      }),
    },
  };
}
