// The bulk writes' paths (engine/resource/bulk-routes.ts) under a resource's path: POST, PATCH
// and DELETE /api/{r}/bulk, their bodies, answers and errors naming items. The aliases' bulk
// routes are documented as these (`x-aliases`).
import { BULK_PATH } from '../resource/route-names.js';
import type { OpenApiPaths } from '../module.js';
import type { CompiledResource } from '../resource/compiled.js';
import { MAX_ITEM_ERRORS } from '../resource/bulk-body.js';
import { bodySchema, ERROR_SCHEMA } from './components.js';
import { errorResponses, jsonBody, jsonResponse, organizationHeaderParameters, pascalCase, ref, schemaName } from './fragments.js';
import { permissionNote } from './resource-paths.js';

const itemErrors = {
  type: 'array',
  maxItems: MAX_ITEM_ERRORS,
  description: `The items that failed, by their index in the request (from 0), one entry per broken rule; at most ${MAX_ITEM_ERRORS}`,
  items: {
    type: 'object',
    required: ['index', 'message'],
    additionalProperties: false,
    properties: { index: { type: 'integer', minimum: 0 }, message: { type: 'string' } },
  },
};

/** An error answer naming the items it concerns (`errors`) beside the envelope (absent when the request as a whole is at fault). */
function itemsError(status: number, description: string, message: string | string[], errors: Array<{ index: number; message: string }>): object {
  const schema = { allOf: [ref(ERROR_SCHEMA), { type: 'object', properties: { errors: itemErrors } }] };
  const example = { statusCode: status, message, error: { 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 409: 'Conflict' }[status], errors };
  return { description, content: { 'application/json': { schema, example } } };
}

const badItems = itemsError(
  400,
  'The body is not a list of 1 to the configured most items, or items break rules: message lists every broken rule as "[index] rule", errors the same by index; nothing was written',
  ['[0] name should not be empty', '[2] color must be a string'],
  [{ index: 0, message: 'name should not be empty' }, { index: 2, message: 'color must be a string' }],
);
const forbiddenItems = itemsError(403, "The caller's role lacks the permission, or an item names another tenant's tenantId (or, for the owner rule's role, another owner): nothing was written", 'Forbidden resource', [{ index: 1, message: 'Forbidden resource' }]);
const missingItems = itemsError(404, "Ids not in the caller's tenant (or not the caller's own, under the owner rule), or none at all: errors names each; nothing was written", 'The requested record was not found', [{ index: 3, message: 'The requested record was not found' }]);
const conflictItem = itemsError(409, 'An item breaks a unique rule (errors names it), or a request with the same Idempotency-Key is still running; nothing was written', 'A record with the same name already exists', [{ index: 4, message: 'A record with the same name already exists' }]);

/**
 * One item of a bulk PATCH: the record's id and the fields to change. Built from the patch body
 * rather than referring to it: there id is readOnly (ignored), and a property both required and
 * readOnly is one no client may send (OpenAPI 3.0), so no item could be written.
 */
function patchItemSchema(resource: CompiledResource): object {
  const patch = bodySchema(resource, 'patch');
  const { id: _ignored, ...properties } = patch.properties;
  return {
    ...patch,
    required: ['id'],
    properties: { id: { type: 'string', format: 'uuid', description: `The ${resource.name} to change` }, ...properties },
    description: `The id of a ${resource.name} and only the fields to change, as PATCH /api/${resource.paths[0]}/{id} takes them; the other read-only properties may be sent and are ignored.`,
  };
}

const itemsAnswer = (description: string, record: object, max: number) =>
  jsonResponse(description, { type: 'object', required: ['items'], additionalProperties: false, properties: { items: { type: 'array', minItems: 1, maxItems: max, items: record } } });

export function bulkPaths(resource: CompiledResource, maxItems: number): OpenApiPaths {
  const paths: OpenApiPaths = {};
  const n = resource.name;
  const [path] = resource.paths;
  const record = ref(schemaName(resource, 'record'));
  const refused = resource.requireIfMatch ? errorResponses(428) : {};
  const conditional = resource.requireIfMatch
    ? ' This resource takes changes only with If-Match, which a bulk request cannot carry per record: 428, change records one by one.'
    : ' Unconditional: If-Match names one record and is a 400 here; change records one by one to write conditionally.';
  const common = `All or nothing, in one transaction; at most ${maxItems} items (BULK_MAX_ITEMS), each counted as one request by the rate limits.`;
  const op = (verb: string, operation: 'create' | 'update' | 'delete', summary: string, note: string, rest: object) => ({
    tags: [n],
    operationId: `bulk${verb}${pascalCase(n)}`,
    summary,
    description: `${permissionNote(resource, operation)} ${note}`,
    deprecated: false,
    ...rest,
  });
  paths[`/api/${path}/${BULK_PATH}`] = {
    post: op('Create', 'create', `Create many ${n} records at once`, `Each item is a create body, checked and written as POST /api/${path} would (organization header included); the answer lists the records in the order sent. ${common}`, {
      parameters: organizationHeaderParameters(resource),
      requestBody: jsonBody({ type: 'array', minItems: 1, maxItems: maxItems, items: ref(schemaName(resource, 'create')) }),
      responses: { '201': itemsAnswer(`The created ${n} records, in the order sent`, record, maxItems), '400': badItems, '403': forbiddenItems, '409': conflictItem, ...errorResponses(401, 413, 415, 500, 503) },
    }),
    patch: op('Update', 'update', `Change some fields of many ${n} records at once`, `Each item is {id, …fields}, checked as PATCH /api/${path}/{id} would; each id once. ${common}${conditional}`, {
      requestBody: jsonBody({ type: 'array', minItems: 1, maxItems: maxItems, items: patchItemSchema(resource) }),
      responses: { '200': itemsAnswer(`The changed ${n} records, in the order sent`, record, maxItems), '400': badItems, '403': forbiddenItems, '404': missingItems, '409': conflictItem, ...errorResponses(401, 413, 415, 500, 503), ...refused },
    }),
    delete: op('Delete', 'delete', `Delete many ${n} records at once`, `The body names the records: {ids: [...]}, each once.${resource.softDelete ? ' Each is marked deleted (softDelete): PUT /{id}/recover brings it back.' : ''} ${common}${conditional}`, {
      requestBody: jsonBody({
        type: 'object',
        required: ['ids'],
        additionalProperties: false,
        properties: { ids: { type: 'array', minItems: 1, maxItems: maxItems, items: { type: 'string', format: 'uuid' } } },
      }),
      responses: { '204': { description: 'Deleted, every one' }, '400': badItems, '403': forbiddenItems, '404': missingItems, ...errorResponses(401, 413, 415, 500, 503), ...refused },
    }),
  };
  return paths;
}
