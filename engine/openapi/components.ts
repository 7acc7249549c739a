// components of the document: every compiled resource's schemas (also those without generated
// routes, so modules only add paths), the error envelope, the shared error responses and the
// bearer scheme with its Tenant-Id header.
import { STATUS_CODES } from 'node:http';
import type { CompiledResource, Registry } from '../resource/compiled.js';
import { supportedParameters } from '../resource/list-query.js';
import { selectableNames } from '../resource/selection.js';
import { withDeletedProperty } from './soft-delete-fragments.js';
import {
  ERROR_RESPONSES,
  findInputName,
  dateSchema,
  listExample,
  orderSchema,
  ref,
  namesTextSchema,
  relationsSchema,
  schemaName,
  searchDescription,
  searchSchema,
  takeDescription,
  takeSchema,
  TENANT_HEADER_COMPONENT,
  TENANT_HEADER_PARAMETER,
  TENANT_QUERY_COMPONENT,
  TENANT_QUERY_PARAMETER,
  selectableSchema,
  selectionSchemaNames,
  answeredRecord,
  countSchema,
  cursorSchema,
} from './fragments.js';
import { fieldFiltersSchema, filterSchemaNames, whereComponentSchema, whereGroupSchema, whereSchema } from './filter-schemas.js';
import { MAX_NAMES } from '../resource/list-query.js';
import { toOpenApiSchema } from './schema-conversion.js';
import { DefinitionError } from '../resource/load.js';

export const ERROR_SCHEMA = 'ErrorResponse';
export const BEARER_SCHEME = 'bearer';
const bearerDescription = (tokenOrigin: string) =>
  `${tokenOrigin} Every record read or written belongs to the token's tenant; ` +
  'a Tenant-Id header or a tenantId query parameter, when sent with the token, must name that same tenant (otherwise 403).';

// Re-exported: modules written before it moved to the fragments import it from here.
export { findInputName };

type Json = Record<string, any>;

/**
 * A record as returned: its fields, plus each relation, present only when asked for. A related
 * record is whole (`record`), or, in a record narrowed by select[], narrowed alike (`selected`):
 * select[]=creator.createdAt answers creator as {id, createdAt}, and its own relations too.
 */
function recordSchema(resource: CompiledResource, related: 'record' | 'selected' = 'record'): Json {
  const schema = toOpenApiSchema(resource.schemas.record);
  const properties: Json = { ...(schema.properties as Json) };
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  for (const relation of resource.relations.values()) {
    const target = ref(related === 'record' ? schemaName(relation.target, 'record') : selectionSchemaNames(relation.target).selected);
    const note = `Present only when requested with relations[]=${relation.name}`;
    if (relation.kind === 'belongsTo') {
      // A belongsTo is null when its id field is empty. OpenAPI 3.0 ignores nullable without a
      // type, so null is its own branch.
      properties[relation.name] = required.has(relation.via!)
        ? { allOf: [target], description: note }
        : { anyOf: [target, { type: 'object', nullable: true, enum: [null] }], description: `${note}; null when ${relation.via} is empty` };
    } else {
      properties[relation.name] = { type: 'array', items: target, description: note };
    }
  }
  const description = resource.definition.description;
  return { ...schema, ...(description ? { description } : {}), properties };
}

const TENANT_ID_IN_BODY = "Ignored when it is the caller's tenant; any other value is a 403.";

/**
 * The read-only fields as a body may carry them: the server drops them before validation
 * (engine/resource/write-body.ts), so they are properties marked readOnly (OpenAPI 3.0: a value
 * sent is ignored), not unknown ones. Ajv never sees them, so its schemas leave them out.
 */
function ignoredProperties(resource: CompiledResource): Json {
  const record = toOpenApiSchema(resource.schemas.record).properties as Json;
  const properties: Json = {};
  for (const name of resource.readOnlyFields) {
    // Any value is dropped unread (no type to break), except a tenantId: only the caller's passes.
    properties[name] = name === 'tenantId'
      ? { ...record[name], readOnly: true, description: TENANT_ID_IN_BODY }
      : { readOnly: true, description: `Ignored, whatever its value (the record's ${name} is the server's to set)` };
  }
  return properties;
}

export function bodySchema(resource: CompiledResource, kind: 'create' | 'replace' | 'patch'): Json {
  const schema = toOpenApiSchema(resource.schemas[kind]);
  const ignored = resource.readOnlyFields.join(', ');
  const what = {
    create: `A new ${resource.name}.`,
    replace: `Every field of the ${resource.name}: required fields must be present, absent optional fields are reset (to their default, if they have one).`,
    patch: `Only the ${resource.name} fields to change; an empty or absent body changes nothing.`,
  }[kind];
  return {
    ...schema,
    properties: { ...(schema.properties as Json), ...ignoredProperties(resource) },
    description: `${what} Read-only properties (${ignored}) may be sent and are ignored (a tenantId other than the caller's is a 403); any other unknown property is a 400. null is accepted only where a property is nullable.`,
  };
}

/**
 * A record narrowed by select[]: id, and only the fields (and relations) asked for. Its relations
 * are narrowed records too: a whole one (loaded by relations[] alone) fits them as well, since
 * they require only id.
 */
function selectedSchema(resource: CompiledResource): Json {
  const record = recordSchema(resource, 'selected');
  return { ...record, required: ['id'], description: `${resource.name} narrowed by select[]: id and the fields named (a related record narrowed alike)` };
}

function listSchema(resource: CompiledResource): Json {
  return {
    type: 'object',
    required: ['items', 'total'],
    properties: {
      items: { type: 'array', items: answeredRecord(resource) },
      nextCursor: { type: 'string', description: 'Present while more items follow: send it as cursor for the next page' },
      total: { type: 'integer', minimum: 0, description: 'Every matching record, not only this page' },
    },
  };
}

function findInputSchema(resource: CompiledResource): Json {
  const supported = new Set(supportedParameters(resource));
  const properties: Json = {
    take: { ...takeSchema(resource), description: takeDescription(resource) },
    skip: { type: 'integer', minimum: 0, default: 0 },
    order: orderSchema(resource),
    where: whereSchema(resource),
    // As in the query string, the names may come as one comma-separated string.
    relations: { anyOf: [relationsSchema(resource), namesTextSchema([...resource.relationPaths])] },
    cursor: { ...cursorSchema(), description: 'The nextCursor of the page before (not with skip)' },
    count: { ...countSchema(), description: 'none: no count; total is then a lower bound' },
    select: {
      anyOf: [{ type: 'array', items: ref(selectionSchemaNames(resource).selectable), maxItems: MAX_NAMES }, namesTextSchema(selectableNames(resource))],
      description: 'Only these fields are answered, and id; path.field narrows (and loads) a related record',
    },
  };
  if (supported.has('search')) properties.search = { ...searchSchema(), description: searchDescription(resource) };
  if (supported.has('startDate')) {
    properties.startDate = dateSchema(`Earliest ${resource.dateRange}`);
    properties.endDate = dateSchema(`Latest ${resource.dateRange}; a date-only value includes that whole day`);
  }
  if (supported.has('tags')) properties.tags = { type: 'array', items: { type: 'string', format: 'uuid' }, description: 'Tag ids' };
  if (supported.has('withDeleted')) properties.withDeleted = withDeletedProperty();
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    description: `List parameters of ${resource.name}, as in the query string of the list route`,
    example: listExample(resource),
  };
}

/** Every schema of one resource, by component name. */
export function resourceSchemas(resource: CompiledResource): Record<string, Json> {
  const filters = filterSchemaNames(resource);
  const selection = selectionSchemaNames(resource);
  return {
    [schemaName(resource, 'record')]: recordSchema(resource),
    [schemaName(resource, 'create')]: bodySchema(resource, 'create'),
    [schemaName(resource, 'replace')]: bodySchema(resource, 'replace'),
    [schemaName(resource, 'patch')]: bodySchema(resource, 'patch'),
    [schemaName(resource, 'list')]: listSchema(resource),
    [findInputName(resource)]: findInputSchema(resource),
    [filters.fields]: fieldFiltersSchema(resource),
    [filters.group]: whereGroupSchema(resource),
    [filters.where]: whereComponentSchema(resource),
    [selection.selectable]: selectableSchema(resource),
    [selection.selected]: selectedSchema(resource),
  };
}

const errorSchema = {
  type: 'object',
  required: ['statusCode', 'message', 'error'],
  properties: {
    statusCode: { type: 'integer', example: 400 },
    message: {
      oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
      description: 'An array of strings (one per broken rule) on 400, a sentence otherwise',
    },
    error: { type: 'string', example: 'Bad Request', description: 'The HTTP reason phrase' },
  },
};

/** The shared error response of a status (components/responses), as an object a module may copy and extend. */
export function errorResponse(status: number): Json {
  const known = ERROR_RESPONSES[status];
  if (!known) throw new Error(`no error response component for status ${status}`);
  const { description, example } = known;
  const response: Json = {
    description,
    content: { 'application/json': { schema: ref(ERROR_SCHEMA), example: { statusCode: status, message: example, error: STATUS_CODES[status] ?? 'Error' } } },
  };
  if (status === 401) response.headers = { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } };
  if (status === 409) response.headers = { 'Retry-After': { description: 'When a request with the same Idempotency-Key is still running: seconds to wait before retrying', schema: { type: 'integer', minimum: 1 } } };
  return response;
}

function errorResponseComponents(): Record<string, Json> {
  return Object.fromEntries(Object.entries(ERROR_RESPONSES).map(([status, { name }]) => [name, errorResponse(Number(status))]));
}

/** @param tokenOrigin the bearer scheme's first sentence (the application's: where its tokens come from) */
export function buildComponents(registry: Registry, tokenOrigin = 'An access token.'): Json {
  const schemas: Record<string, Json> = { [ERROR_SCHEMA]: errorSchema };
  const owners = new Map<string, CompiledResource>();
  for (const resource of registry.values()) {
    for (const [name, schema] of Object.entries(resourceSchemas(resource))) {
      // Names that PascalCase alike (widget's create body and a resource widget-create) would
      // silently share a schema: a definition mistake, reported like the others.
      const owner = owners.get(name);
      if (schemas[name]) {
        const taken = owner ? `by ${owner.name} (${owner.file})` : 'by the engine';
        throw new DefinitionError([`${resource.file} name: "${resource.name}" needs the OpenAPI schema name ${name}, already taken ${taken}`]);
      }
      schemas[name] = schema;
      owners.set(name, resource);
    }
  }
  return {
    securitySchemes: { [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: bearerDescription(tokenOrigin) } },
    schemas,
    responses: errorResponseComponents(),
    parameters: { [TENANT_HEADER_PARAMETER]: TENANT_HEADER_COMPONENT, [TENANT_QUERY_PARAMETER]: TENANT_QUERY_COMPONENT },
  };
}
