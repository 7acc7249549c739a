// The event type routes of routes.ts in the OpenAPI document. Schemas, parameters and error
// responses come from the engine's fragments (the components themselves are registered for every
// compiled resource by the document builder), so only the paths and their wording are ours.
import type { OpenApiPaths } from '../../engine/module.js';
import { findInputName } from '../../engine/openapi/components.js';
import {
  errorResponses,
  idParameter,
  jsonBody,
  jsonResponse,
  listParameters,
  pascalCase,
  ref,
  relationsParameter,
  schemaName,
} from '../../engine/openapi/fragments.js';
import type { CompiledResource, Operation } from '../../engine/resource/compiled.js';

const ORGANIZATION_HEADER = {
  name: 'Organization-Id',
  in: 'header',
  required: false,
  description: "Organization of the new event type when the body has no organizationId (else the caller's, or the tenant's only one)",
  schema: { type: 'string', format: 'uuid' },
};

const EMPLOYEE_DEFAULT =
  "Without employeeId the event type belongs to the caller's own employee record (none when the caller has none); " +
  'an explicit employeeId, null included, is kept and must name an employee of the tenant.';

export function eventTypeOpenApi(resource: CompiledResource): OpenApiPaths {
  const name = pascalCase(resource.name);
  const record = ref(schemaName(resource, 'record'));
  const list = ref(schemaName(resource, 'list'));
  const findInput = ref(findInputName(resource));
  const operation = (id: string, summary: string, op: Operation, rest: object, note = '') => ({
    tags: [resource.name],
    operationId: `${id}${name}`,
    summary,
    description: `Needs the ${resource.permissions[op]} permission.${note ? ` ${note}` : ''}`,
    ...rest,
  });

  const paths: OpenApiPaths = {};
  for (const path of resource.paths) {
    const base = `/api/${path}`;
    paths[base] = {
      get: operation('list', 'List event types (one page and the total)', 'read', {
        parameters: listParameters(resource),
        responses: { '200': jsonResponse('A page of event types', list), ...errorResponses(400, 401, 403, 500) },
      }),
      post: operation('create', 'Create an event type', 'create', {
        parameters: [ORGANIZATION_HEADER],
        requestBody: jsonBody(ref(schemaName(resource, 'create'))),
        responses: { '201': jsonResponse('The created event type', record), ...errorResponses(400, 401, 403, 413, 415, 500) },
      }, EMPLOYEE_DEFAULT),
    };
    paths[`${base}/search`] = {
      post: operation('search', 'Search event types with the list parameters in the body', 'read', {
        requestBody: jsonBody(
          { oneOf: [findInput, { type: 'object', required: ['findInput'], additionalProperties: false, properties: { findInput } }] },
          'The list parameters, plain or wrapped as {findInput: {...}}',
        ),
        responses: { '200': jsonResponse('A page of event types', list), ...errorResponses(400, 401, 403, 413, 415, 500) },
      }),
    };
    paths[`${base}/{id}`] = {
      get: operation('get', 'Read one event type', 'read', {
        parameters: [idParameter(), relationsParameter(resource)],
        responses: { '200': jsonResponse('The event type', record), ...errorResponses(400, 401, 403, 404, 500) },
      }),
      put: operation('replace', 'Replace an event type (absent optional fields, employeeId and tags included, are reset)', 'update', {
        parameters: [idParameter()],
        requestBody: jsonBody(ref(schemaName(resource, 'replace'))),
        responses: { '200': jsonResponse('The replaced event type', record), ...errorResponses(400, 401, 403, 404, 413, 415, 500) },
      }),
      patch: operation('update', 'Change some fields of an event type', 'update', {
        parameters: [idParameter()],
        requestBody: jsonBody(ref(schemaName(resource, 'patch'))),
        responses: { '200': jsonResponse('The updated event type', record), ...errorResponses(400, 401, 403, 404, 413, 415, 500) },
      }),
      delete: operation('delete', 'Delete an event type', 'delete', {
        parameters: [idParameter()],
        responses: { '204': { description: 'Deleted' }, ...errorResponses(400, 401, 403, 404, 500) },
      }),
    };
  }
  return paths;
}
