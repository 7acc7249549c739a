// components of the document: every compiled resource's schemas (also those without generated
// routes, so modules only add paths), the error envelope, the shared error responses and the
// bearer scheme.
import { STATUS_CODES } from 'node:http';
import { DEFAULT_TAKE, type CompiledResource, type Registry } from '../resource/compiled.js';
import { supportedParameters } from '../resource/list-query.js';
import { ERROR_RESPONSES, findInputName, LIST_EXAMPLE, ref, relationsSchema, orderSchema, schemaName, takeDescription, whereSchema } from './fragments.js';
import { toOpenApiSchema } from './schema-conversion.js';
import { DefinitionError } from '../resource/load.js';

export const ERROR_SCHEMA = 'ErrorResponse';
export const BEARER_SCHEME = 'bearer';

// Re-exported: modules written before it moved to the fragments import it from here.
export { findInputName };

type Json = Record<string, any>;

/** A record as returned: its fields, plus each relation, present only when asked for. */
function recordSchema(resource: CompiledResource): Json {
  const schema = toOpenApiSchema(resource.schemas.record);
  const properties: Json = { ...(schema.properties as Json) };
  const required = new Set<string>((schema.required as string[] | undefined) ?? []);
  for (const relation of resource.relations.values()) {
    const target = ref(schemaName(relation.target, 'record'));
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

function bodySchema(resource: CompiledResource, kind: 'create' | 'replace' | 'patch'): Json {
  const schema = toOpenApiSchema(resource.schemas[kind]);
  const ignored = resource.readOnlyFields.join(', ');
  const what = {
    create: `A new ${resource.name}.`,
    replace: `Every field of the ${resource.name}: required fields must be present, absent optional fields are reset.`,
    patch: `Only the ${resource.name} fields to change.`,
  }[kind];
  return { ...schema, description: `${what} Read-only fields (${ignored}) are ignored; any other unknown field is a 400.` };
}

function listSchema(resource: CompiledResource): Json {
  return {
    type: 'object',
    required: ['items', 'total'],
    properties: {
      items: { type: 'array', items: ref(schemaName(resource, 'record')) },
      total: { type: 'integer', minimum: 0, description: 'Every matching record, not only this page' },
    },
  };
}

function findInputSchema(resource: CompiledResource): Json {
  const supported = new Set(supportedParameters(resource));
  const properties: Json = {
    take: { type: 'integer', minimum: 1, default: DEFAULT_TAKE, description: takeDescription(resource) },
    skip: { type: 'integer', minimum: 0, default: 0 },
    order: orderSchema(resource),
    where: whereSchema(resource),
    relations: relationsSchema(resource),
  };
  if (supported.has('search')) properties.search = { type: 'string', description: `Case-insensitive match over ${resource.search.join(', ')}` };
  if (supported.has('startDate')) {
    properties.startDate = toOpenApiSchema({ type: 'string', format: 'iso-date', description: `Earliest ${resource.dateRange}` });
    properties.endDate = toOpenApiSchema({ type: 'string', format: 'iso-date', description: `Latest ${resource.dateRange}; a date-only value includes that whole day` });
  }
  if (supported.has('tags')) properties.tags = { type: 'array', items: { type: 'string', format: 'uuid' }, description: 'Tag ids' };
  return {
    type: 'object',
    additionalProperties: false,
    properties,
    description: `List parameters of ${resource.name}, as in the query string of the list route`,
    example: LIST_EXAMPLE,
  };
}

/** Every schema of one resource, by component name. */
export function resourceSchemas(resource: CompiledResource): Record<string, Json> {
  return {
    [schemaName(resource, 'record')]: recordSchema(resource),
    [schemaName(resource, 'create')]: bodySchema(resource, 'create'),
    [schemaName(resource, 'replace')]: bodySchema(resource, 'replace'),
    [schemaName(resource, 'patch')]: bodySchema(resource, 'patch'),
    [schemaName(resource, 'list')]: listSchema(resource),
    [findInputName(resource)]: findInputSchema(resource),
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

function errorResponseComponents(): Record<string, Json> {
  const responses: Record<string, Json> = {};
  for (const [status, { name, description, example }] of Object.entries(ERROR_RESPONSES)) {
    const phrase = STATUS_CODES[Number(status)] ?? 'Error';
    const response: Json = {
      description,
      content: { 'application/json': { schema: ref(ERROR_SCHEMA), example: { statusCode: Number(status), message: example, error: phrase } } },
    };
    if (status === '401') response.headers = { 'WWW-Authenticate': { description: 'Bearer', schema: { type: 'string' } } };
    responses[name] = response;
  }
  return responses;
}

export function buildComponents(registry: Registry): Json {
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
    securitySchemes: { [BEARER_SCHEME]: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The access token from POST /api/auth/login' } },
    schemas,
    responses: errorResponseComponents(),
  };
}
