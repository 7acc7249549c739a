// OpenAPI building blocks shared by the generated resource paths and hand-written modules, so
// every operation names its schemas, parameters and errors the same way.
import { defaultTake, MAX_RELATION_DEPTH, type CompiledResource } from '../resource/compiled.js';

export { defaultTake };
import { MAX_NAMES, MAX_SEARCH_LENGTH, ORDER_DIRECTIONS, supportedParameters } from '../resource/list-query.js';
import { selectableNames } from '../resource/selection.js';
import { MAX_CURSOR_LENGTH } from '../resource/cursor.js';
import { MAX_QUERY_VALUES } from '../http/context.js';
import { toOpenApiSchema } from './schema-conversion.js';
import { whereSchema } from './filter-schemas.js';
import { withDeletedParameters } from './soft-delete-fragments.js';

/** "a" or "an" before a noun. */
export const article = (noun: string) => (/^[aeiou]/i.test(noun) ? 'an' : 'a');

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

/**
 * The extension that marks a header of components/headers as sent on every /api answer, whatever
 * the operation and status: declared once there rather than on each of a thousand responses.
 */
export const EVERY_ANSWER_EXTENSION = 'x-every-answer';

/**
 * The extension of a path item listing the paths that serve it under another spelling (its
 * aliases, engine/route.ts `aliasOf`): the same operations and answers, not repeated in `paths`.
 */
export const ALIASES_EXTENSION = 'x-aliases';

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

/** A header that names a record by id: a UUID, or empty (a header sent empty is read as not sent). */
const uuidOrEmpty = { anyOf: [{ type: 'string', format: 'uuid' }, { type: 'string', maxLength: 0 }] };

/** The header (Organization-Id for Ever Gauzy clients) that may name a new record's organization, if the resource has one. */
export function organizationHeaderParameters(resource: CompiledResource): object[] {
  const name = resource.organizationRoot?.definition.organizationRoot?.header;
  if (!name) return [];
  return [{
    name,
    in: 'header',
    required: false,
    description:
      (resource.organizationOptional
        ? "Organization of the new record when the body has no organizationId (else the caller's, or the tenant's only one; else none: a record of the whole tenant)."
        : "Organization of the new record when the body has no organizationId (else the caller's, or the tenant's only one; else a 400).") +
      ' Any value but a UUID is a 400; an empty one counts as none.',
    schema: uuidOrEmpty,
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
  description:
    "Optional: the token's tenant id, which already scopes every request. With a valid token, any other value is a 403; " +
    'without one (where the token is optional) the header is not read. An empty one counts as none.',
  // Only the token's tenant id passes: what is no tenant id at all can only be refused, so a
  // client generated from the document must not send it.
  schema: { ...uuidOrEmpty, example: '0b6f3c5e-8a0d-4a3e-9c57-2f1d9e7b4c21' },
};

/** components/parameters name of the tenantId query parameter, checked with the header (engine/http/tenant-named.ts). */
export const TENANT_QUERY_PARAMETER = 'TenantIdQuery';

export const tenantQueryParameter = { $ref: `#/components/parameters/${TENANT_QUERY_PARAMETER}` };

/** The tenantId query parameter some clients add to every request: the header's rule, in the query. */
export const TENANT_QUERY_COMPONENT = {
  name: 'tenantId',
  in: 'query',
  required: false,
  description: "Optional, on every route that takes a token. The caller's own tenant id (in any case) is ignored; any other value is a 403.",
  schema: { type: 'string', format: 'uuid' },
  // Read by every route that takes a token, before the route's own parameters: an operation that
  // lists only this one reads no other query parameter.
  'x-every-operation': true,
};

export function idParameter(): object {
  return { name: 'id', in: 'path', required: true, description: 'Record id', schema: { type: 'string', format: 'uuid' } };
}

/** The schema of a date or date-time parameter: the one every date field has (schema-conversion.ts). */
export const dateSchema = (description?: string) => toOpenApiSchema({ type: 'string', format: 'iso-date', ...(description ? { description } : {}) });

/**
 * The relations[] items a resource accepts; none when it has no relations (any value is a 400).
 * A name repeated counts once (so a resource's enum bounds the distinct names below MAX_NAMES);
 * `maxItems` is the cap of the query string's lists where that applies.
 */
export function relationsSchema(resource: CompiledResource, maxItems?: number): object {
  const paths = [...resource.relationPaths];
  return paths.length
    ? { type: 'array', items: { type: 'string', enum: paths }, ...(maxItems === undefined ? {} : { maxItems }) }
    : { type: 'array', items: { type: 'string' }, maxItems: 0 };
}

/**
 * The comma-separated form of relations or select in a search body: names of `names` only, at
 * most MAX_NAMES of them (so never more distinct ones than the server takes), or '' for none, as
 * the server reads them (engine/resource/list-query.ts relationNames splits on every comma).
 */
export function namesTextSchema(names: readonly string[]): object {
  const name = `(?:${names.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;
  return {
    type: 'string',
    pattern: names.length ? `^(?:${name}(?:,${name}){0,${MAX_NAMES - 1}})?$` : '^$',
    description: 'The same names, comma-separated (an empty string names none)',
  };
}

/** Component names of what select[] takes, and of a record narrowed by it. */
export const selectionSchemaNames = (resource: CompiledResource) => {
  const record = schemaName(resource, 'record');
  return { selectable: `${record}Selectable`, selected: `${record}Selected` };
};

export const cursorSchema = () => ({ type: 'string', minLength: 1, maxLength: MAX_CURSOR_LENGTH });
export const countSchema = () => ({ type: 'string', enum: ['none'] });

function cursorParameter(): object {
  return {
    name: 'cursor',
    in: 'query',
    required: false,
    description:
      'The page after the one whose nextCursor this is: the same order and filters, any take; not with skip. A cursor of another list (resource, order, filter), or altered, is a 400.',
    schema: cursorSchema(),
  };
}

function countParameter(): object {
  return {
    name: 'count',
    in: 'query',
    required: false,
    description: 'none: no count (a deep page then costs what the first does); total is then a lower bound and X-Total-Exact says whether it is the real total.',
    schema: countSchema(),
  };
}

/** Prefer: count=none, as count=none (RFC 7240). */
export function preferParameter(): object {
  return { name: 'Prefer', in: 'header', required: false, description: 'count=none: the same as the count=none parameter', schema: { type: 'string', example: 'count=none' } };
}

/** A record as a list or a read answers it: whole, or narrowed by select[]. */
export const answeredRecord = (resource: CompiledResource) => ({ anyOf: [ref(schemaName(resource, 'record')), ref(selectionSchemaNames(resource).selected)] });

/** What select[] takes: the visible fields, and path.field on every relation path. */
export const selectableSchema = (resource: CompiledResource) => ({ type: 'string', enum: selectableNames(resource) });

export function selectParameter(resource: CompiledResource): object {
  return {
    name: 'select[]',
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    description:
      'Only these fields are answered, and id (select[]=firstName&select[]=lastName); path.field narrows a related record (select[]=user.email), ' +
      `and loads it as relations[] would. Also accepted as select[0]=… or select=a,b; at most ${MAX_NAMES}. A field that is not there, or hidden, is a 400.`,
    schema: { type: 'array', items: ref(selectionSchemaNames(resource).selectable), maxItems: MAX_NAMES },
  };
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
        'Also accepted as relations[0]=… or comma-separated, relations=a,b (relations= names none). Any other value is a 400.'
      : `${resource.name} has no relations: any name is a 400 (an empty value, relations=, names none).`,
    schema: relationsSchema(resource, MAX_QUERY_VALUES),
  };
}

export function orderSchema(resource: CompiledResource): object {
  const properties = Object.fromEntries([...resource.sortable].map((name) => [name, { type: 'string', enum: [...ORDER_DIRECTIONS] }]));
  return { type: 'object', additionalProperties: false, properties };
}

/** What "Try it out" starts from: the defaults, not a value for every filter. */
export const listExample = (resource: CompiledResource) => ({ take: defaultTake(resource), skip: 0, order: { createdAt: 'DESC' } });

export const takeDescription = (resource: CompiledResource) =>
  `Page size: default ${defaultTake(resource)}, at most ${resource.maxTake} (larger values are clamped to ${resource.maxTake}).`;

/** The search parameter's (and search body property's) schema. */
export const searchSchema = () => ({ type: 'string', maxLength: MAX_SEARCH_LENGTH });

/** What the search parameter matches on a resource, by mode (engine/resource/sql/search.ts). */
export function searchDescription(resource: CompiledResource): string {
  const { fulltext, substring } = resource.searchModes;
  const parts = [
    ...(fulltext.length ? [`words of ${fulltext.join(', ')} (web search syntax: "a phrase", or, -word; best match first when no order is given)`] : []),
    ...(substring.length ? [`any part of ${substring.join(', ')}, case-insensitive`] : []),
  ];
  return `Matches ${parts.join(', or ')}.`;
}

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
        `where[field]=value, exact match with the value coerced to the field's type; where[field][operator]=value for the ` +
        `operators each field allows (eq, ne, in, nin, lt, lte, gt, gte, between, ilike, isNull: see the schema), several on one field all holding; ` +
        `where[or][0][field]=…&where[or][1][field]=… for groups of which one must hold. Filterable: ${filters.join(', ')}.` +
        (resource.organizationOptional ? ' where[organizationId]=null lists the records of no organization (records of the whole tenant).' : '') +
        (nested.length ? ` On related records: where[relation][field]=value (or [operator]=value) for ${nested.join(', ')} (their id and filterable fields).` : ''),
      // where= (an empty where, as some clients write {}) names no condition, as relations= names none.
      schema: { anyOf: [whereSchema(resource), { type: 'string', maxLength: 0, description: 'where= names no condition' }] },
      // Without an example Swagger UI pre-fills every filter (a list that matches nothing, or a 403
      // for its made-up tenantId); with this one "Try it out" sends no where at all.
      example: {},
    },
    relationsParameter(resource),
    selectParameter(resource),
    cursorParameter(),
    countParameter(),
    preferParameter(),
  ];
  if (supported.has('search')) {
    parameters.push({ name: 'search', in: 'query', required: false, description: searchDescription(resource), schema: searchSchema() });
  }
  if (supported.has('startDate')) {
    parameters.push(
      { name: 'startDate', in: 'query', required: false, description: `Earliest ${resource.dateRange} (inclusive).`, schema: dateSchema() },
      { name: 'endDate', in: 'query', required: false, description: `Latest ${resource.dateRange}; a date-only value includes that whole day.`, schema: dateSchema() },
    );
  }
  parameters.push(...withDeletedParameters(resource));
  if (supported.has('tags')) {
    parameters.push({
      name: 'tags[]',
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      description: `Tag ids: records linked to any of them through ${resource.tagRelation!.name}. Also accepted as tags[0]=… or tags=…; at most ${MAX_QUERY_VALUES}.`,
      schema: { type: 'array', items: { type: 'string', format: 'uuid' }, maxItems: MAX_QUERY_VALUES },
    });
  }
  return parameters;
}

/** components/responses names, by status. */
export const ERROR_RESPONSES: Record<number, { name: string; description: string; example: string | string[] }> = {
  400: { name: 'BadRequest', description: 'The body, query or path fails validation (text that is not UTF-8 included); message lists every broken rule', example: ['firstName should not be empty'] },
  401: { name: 'Unauthorized', description: 'No token, or an invalid, expired or wrong-type token', example: 'Unauthorized' },
  403: { name: 'Forbidden', description: "The caller's role lacks the permission, or a tenantId names another tenant", example: 'Forbidden resource' },
  404: { name: 'NotFound', description: "No record with that id in the caller's tenant", example: 'The requested record was not found' },
  409: { name: 'Conflict', description: 'A unique rule is broken, or a request with the same Idempotency-Key is still running (retry after Retry-After)', example: 'A record with the same name already exists' },
  412: { name: 'PreconditionFailed', description: 'If-Match names no version the record is at: it changed since the client read it; nothing was written', example: 'The record has changed since the ETag you sent (If-Match): read it again and retry' },
  422: { name: 'UnprocessableEntity', description: 'The Idempotency-Key sent was used with another request (method, path or body); nothing was run', example: 'This Idempotency-Key was used with another request (method, path or body): send a new key for a new request' },
  428: { name: 'PreconditionRequired', description: 'The resource takes changes only with If-Match (its definition says ifMatch: required)', example: 'This resource takes changes only with If-Match: send the ETag of the record you are changing' },
  413: { name: 'PayloadTooLarge', description: 'The body is larger than the limit', example: 'Request body is larger than the limit' },
  415: { name: 'UnsupportedMediaType', description: 'The body is not of a type the operation takes (application/json unless it says otherwise), or its charset is not UTF-8', example: 'Unsupported media type: send application/json' },
  500: { name: 'InternalServerError', description: 'A bug: never carries SQL or a stack', example: 'Internal server error' },
  503: { name: 'ServiceUnavailable', description: 'The database is not available or took too long to answer; a write also when the server is out of storage space, or when it met another write at the same time and was undone (send it again)', example: 'The database is not available' },
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
