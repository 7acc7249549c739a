// OpenAPI building blocks shared by the generated resource paths and hand-written modules, so
// every operation names its schemas, parameters and errors the same way.
import { defaultTake, MAX_RELATION_DEPTH, type CompiledResource } from '../resource/compiled.js';

export { defaultTake };
import { valueSchema } from '../resource/fields.js';
import { supportedParameters } from '../resource/list-query.js';
import { toOpenApiSchema } from './schema-conversion.js';

export type SchemaKind = 'record' | 'create' | 'replace' | 'patch' | 'list';

const SUFFIX: Record<SchemaKind, string> = { record: '', create: 'Create', replace: 'Replace', patch: 'Patch', list: 'List' };

/** employee-skill → EmployeeSkill */
export const pascalCase = (name: string) =>
  name.split(/[^A-Za-z0-9]+/).filter(Boolean).map((part) => part[0].toUpperCase() + part.slice(1)).join('');

/** Employee, EmployeeCreate, EmployeeReplace, EmployeePatch, EmployeeList. */
export function schemaName(resource: CompiledResource, kind: SchemaKind): string {
  return `${pascalCase(resource.name)}${SUFFIX[kind]}`;
}

/** The keys of a path item that are operations (the others are its parameters, summary…). */
export const OPERATION_METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);

export function ref(schemaName: string): { $ref: string } {
  return { $ref: `#/components/schemas/${schemaName}` };
}

/** The body of POST /api/{resource}/search (EmployeeFindInput). */
export const findInputName = (resource: CompiledResource) => `${schemaName(resource, 'record')}FindInput`;

/** requestBody of a search route: the list parameters, plain or wrapped as {findInput: {...}}; none at all lists with the defaults. */
export function searchBody(resource: CompiledResource): object {
  const findInput = ref(findInputName(resource));
  return jsonBody(
    { oneOf: [findInput, { type: 'object', required: ['findInput'], additionalProperties: false, properties: { findInput } }] },
    'The list parameters, plain or wrapped as {findInput: {...}}. Without a body the first page is listed with the defaults.',
    { required: false },
  );
}

/** The header (Organization-Id for Ever Gauzy clients) that may name a new record's organization, if the resource has one. */
export function organizationHeaderParameters(resource: CompiledResource): object[] {
  const name = resource.organizationRoot?.definition.organizationRoot?.header;
  if (!name) return [];
  return [{
    name,
    in: 'header',
    required: false,
    description: "Organization of the new record when the body has no organizationId (else the caller's, or the tenant's only one)",
    schema: { type: 'string', format: 'uuid' },
  }];
}

/** components/parameters name of the Tenant-Id header (auth/authenticate.ts checks it on every token-bearing request). */
export const TENANT_HEADER_PARAMETER = 'TenantId';

export const tenantHeaderParameter = { $ref: `#/components/parameters/${TENANT_HEADER_PARAMETER}` };

/** The Tenant-Id header some clients send beside the token: redundant when it is the token's tenant, refused otherwise. */
export const TENANT_HEADER_COMPONENT = {
  name: 'Tenant-Id',
  in: 'header',
  required: false,
  description: "Optional. The token's tenant already scopes every request; a Tenant-Id naming another tenant is a 403.",
  schema: { type: 'string', format: 'uuid' },
};

export function idParameter(): object {
  return { name: 'id', in: 'path', required: true, description: 'Record id', schema: { type: 'string', format: 'uuid' } };
}

/** The relations[] items a resource accepts; none when it has no relations (any value is a 400). */
export function relationsSchema(resource: CompiledResource): object {
  const paths = [...resource.relationPaths];
  return paths.length
    ? { type: 'array', items: { type: 'string', enum: paths }, uniqueItems: true }
    : { type: 'array', items: { type: 'string' }, maxItems: 0 };
}

export function relationsParameter(resource: CompiledResource): object {
  const paths = [...resource.relationPaths];
  return {
    name: 'relations[]',
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    description: paths.length
      ? `Related records to load (dot notation for nested ones, at most ${MAX_RELATION_DEPTH} levels). ` +
        'Also accepted as relations[0]=… or relations=a,b. Any other value is a 400.'
      : `${resource.name} has no relations: any value is a 400.`,
    schema: relationsSchema(resource),
  };
}

/** A filter's value type, from the field it filters. */
function filterValueSchema(resource: CompiledResource, name: string): object {
  const field = resource.fields.get(name);
  return field ? toOpenApiSchema(valueSchema(field.definition, false)) : { type: 'string' };
}

/** where[field]=value: the resource's filters, plus where[relation][field] on related filters. */
export function whereSchema(resource: CompiledResource): object {
  const properties: Record<string, object> = {};
  for (const name of resource.filters.keys()) properties[name] = filterValueSchema(resource, name);
  for (const relation of resource.relations.values()) {
    const nested = Object.fromEntries([...relation.target.filters.keys()].map((name) => [name, filterValueSchema(relation.target, name)]));
    properties[relation.name] = { type: 'object', additionalProperties: false, properties: nested, description: `Filters on the related ${relation.target.name}` };
  }
  return { type: 'object', additionalProperties: false, properties };
}

export function orderSchema(resource: CompiledResource): object {
  const properties = Object.fromEntries([...resource.sortable].map((name) => [name, { type: 'string', enum: ['ASC', 'DESC'] }]));
  return { type: 'object', additionalProperties: false, properties };
}

/** What "Try it out" starts from: the defaults, not a value for every filter. */
export const listExample = (resource: CompiledResource) => ({ take: defaultTake(resource), skip: 0, order: { createdAt: 'DESC' }, where: {} });

export const takeDescription = (resource: CompiledResource) =>
  `Page size: default ${defaultTake(resource)}, at most ${resource.maxTake} (larger values are clamped to ${resource.maxTake}).`;

/** The take parameter's (and search body property's) schema. */
export const takeSchema = (resource: CompiledResource) => ({ type: 'integer', minimum: 1, default: defaultTake(resource) });

/** The list parameters of GET /api/{resource}; search, dates and tags only where supported. */
export function listParameters(resource: CompiledResource): object[] {
  const supported = new Set(supportedParameters(resource));
  const filters = [...resource.filters.keys()];
  const nested = [...resource.relations.keys()];
  const parameters: object[] = [
    { name: 'take', in: 'query', required: false, description: takeDescription(resource), schema: takeSchema(resource) },
    { name: 'skip', in: 'query', required: false, description: 'Records to skip (offset): default 0.', schema: { type: 'integer', minimum: 0, default: 0 } },
    {
      name: 'order',
      in: 'query',
      required: false,
      style: 'deepObject',
      explode: true,
      description: `order[field]=ASC|DESC, applied in the order given; default createdAt DESC, the id breaks ties. Sortable: ${[...resource.sortable].join(', ')}.`,
      schema: orderSchema(resource),
      // Without an example Swagger UI pre-fills every sortable field.
      example: listExample(resource).order,
    },
    {
      name: 'where',
      in: 'query',
      required: false,
      style: 'deepObject',
      explode: true,
      description:
        `where[field]=value, exact match with the value coerced to the field's type. Filterable: ${filters.join(', ')}.` +
        (nested.length ? ` On related records: where[relation][field]=value for ${nested.join(', ')} (their id and filterable fields).` : ''),
      schema: whereSchema(resource),
      // Without an example Swagger UI pre-fills every filter, which matches nothing.
      example: listExample(resource).where,
    },
    relationsParameter(resource),
  ];
  if (supported.has('search')) {
    parameters.push({ name: 'search', in: 'query', required: false, description: `Case-insensitive match over ${resource.search.join(', ')}.`, schema: { type: 'string' } });
  }
  if (supported.has('startDate')) {
    const dateSchema = toOpenApiSchema({ type: 'string', format: 'iso-date' });
    parameters.push(
      { name: 'startDate', in: 'query', required: false, description: `Earliest ${resource.dateRange} (inclusive).`, schema: dateSchema },
      { name: 'endDate', in: 'query', required: false, description: `Latest ${resource.dateRange}; a date-only value includes that whole day.`, schema: dateSchema },
    );
  }
  if (supported.has('tags')) {
    parameters.push({
      name: 'tags[]',
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      description: `Tag ids: records linked to any of them through ${resource.tagRelation!.name}.`,
      schema: { type: 'array', items: { type: 'string', format: 'uuid' } },
    });
  }
  return parameters;
}

/** components/responses names, by status. */
export const ERROR_RESPONSES: Record<number, { name: string; description: string; example: string | string[] }> = {
  400: { name: 'BadRequest', description: 'The body, query or path fails validation; message lists every broken rule', example: ['firstName should not be empty'] },
  401: { name: 'Unauthorized', description: 'No token, or an invalid, expired or wrong-type token', example: 'Unauthorized' },
  403: { name: 'Forbidden', description: "The caller's role lacks the permission, or a tenantId names another tenant", example: 'Forbidden resource' },
  404: { name: 'NotFound', description: "No record with that id in the caller's tenant", example: 'The requested record was not found' },
  409: { name: 'Conflict', description: 'A unique rule is broken', example: 'A record with the same name already exists' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than the limit', example: 'Request body is larger than the limit' },
  415: { name: 'UnsupportedMediaType', description: 'The body is not application/json', example: 'Unsupported media type: send application/json' },
  500: { name: 'InternalServerError', description: 'A bug: never carries SQL or a stack', example: 'Internal server error' },
  503: { name: 'ServiceUnavailable', description: 'The database is not available or took too long to answer, or the server is out of storage space (a write)', example: 'The database is not available' },
};

/** { '400': {$ref: '#/components/responses/BadRequest'}, … } */
export function errorResponses(...statuses: number[]): Record<string, object> {
  const responses: Record<string, object> = {};
  for (const status of statuses) {
    const known = ERROR_RESPONSES[status];
    if (!known) throw new Error(`no error response component for status ${status}`);
    responses[String(status)] = { $ref: `#/components/responses/${known.name}` };
  }
  return responses;
}

/** A JSON requestBody; `required: false` where the route treats an absent body as an empty one. */
export function jsonBody(schema: object, description?: string, { required = true } = {}): object {
  return { required, ...(description ? { description } : {}), content: { 'application/json': { schema } } };
}

export function jsonResponse(description: string, schema: object): object {
  return { description, content: { 'application/json': { schema } } };
}

/**
 * A multipart/form-data body: one required file field (binary) and optional text fields, nothing
 * else (what engine/http/multipart.ts accepts).
 */
export function multipartFileContent(fileField: string, fileDescription: string, textFields: Record<string, object> = {}) {
  return {
    'multipart/form-data': {
      schema: {
        type: 'object',
        required: [fileField],
        additionalProperties: false,
        properties: { [fileField]: { type: 'string', format: 'binary', description: fileDescription }, ...textFields },
      },
    },
  };
}
