// The schemas of a list's where: per field, its value or an object of exactly its operators
// (engine/resource/filters.ts), and per resource the FieldFilters, WhereGroup and Where
// components (engine/openapi/components.ts adds them) that every list and search refers to.
import type { CompiledResource } from '../resource/compiled.js';
import { filterSchema } from '../resource/fields.js';
import { MAX_LIST_VALUES, MAX_PATTERN_LENGTH, type FilterOperator } from '../resource/filters.js';
import { MAX_OR_GROUPS, OR_KEY } from '../resource/where.js';
import { ref, schemaName } from './fragments.js';
import { toOpenApiSchema } from './schema-conversion.js';

/**
 * What a filter takes, from the field it filters (the server's own rule: engine/resource/fields.ts
 * filterSchema); a nullable base field (organizationId where records may have none, who changed
 * or deleted a record) may also be null.
 */
function filterValueSchema(resource: CompiledResource, name: string): object {
  const field = resource.fields.get(name);
  if (!field) return { type: 'string' };
  if (!field.nullableBase) return toOpenApiSchema(filterSchema(field.definition));
  // Who changed a record, and its deletion: their value, the word null, or JSON null.
  if (name !== 'organizationId') {
    // The type is said once, outside: inside anyOf it would refuse JSON null, which nullable allows.
    const { type: _type, ...value } = toOpenApiSchema(filterSchema(field.definition)) as Record<string, unknown>;
    return { type: 'string', nullable: true, anyOf: [value, { enum: ['null'] }], description: `A ${name} value, or null (in a query string: the word null)` };
  }
  // An organization id, the word null, or JSON null.
  return {
    type: 'string',
    nullable: true,
    anyOf: [{ format: 'uuid' }, { enum: ['null'] }],
    description: 'An organization id, or null (in a query string: the word null) for the records of no organization',
  };
}

const WHERE_TENANT = {
  type: 'string',
  format: 'uuid',
  description: "The caller's tenant, which every list is limited to anyway; another tenant is a 403.",
};

/**
 * A filter: its value (exact match), or an object of the operators the field allows, each with
 * the value it takes (engine/resource/filters.ts reads them).
 */
function filterSchemaOf(resource: CompiledResource, name: string): object {
  const value = filterValueSchema(resource, name);
  const operators = resource.filters.get(name)!.operators;
  const list = (size?: number) => ({
    anyOf: [
      { type: 'array', items: value, ...(size ? { minItems: size, maxItems: size } : { minItems: 1, maxItems: MAX_LIST_VALUES }) },
      // Not empty: where[f][in]= is a 400 (should not be empty), as an empty array is.
      { type: 'string', minLength: 1, description: 'comma-separated, as a query string may carry it' },
    ],
  });
  const schemas: Record<FilterOperator, object> = {
    eq: value,
    ne: value,
    in: list(),
    nin: list(),
    lt: value,
    lte: value,
    gt: value,
    gte: value,
    between: { ...list(2), description: 'from and to, both included' },
    ilike: { type: 'string', maxLength: MAX_PATTERN_LENGTH, description: 'a pattern, case-insensitive: % any run of characters, _ one character, a backslash makes the next one literal' },
    isNull: toOpenApiSchema(filterSchema({ type: 'boolean' })),
  };
  const byOperator = {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: Object.fromEntries(operators.map((op) => [op, schemas[op]])),
    description: `Operators, all of which must hold: ${operators.join(', ')}`,
  };
  return { anyOf: [value, byOperator] };
}

/** Component names of a resource's filter schemas (engine/openapi/components.ts adds them). */
export const filterSchemaNames = (resource: CompiledResource) => {
  const record = schemaName(resource, 'record');
  return { fields: `${record}FieldFilters`, group: `${record}WhereGroup`, where: `${record}Where` };
};

/** The resource's own filters (a related resource's where[relation][…] refers to these). */
export function fieldFiltersSchema(resource: CompiledResource): object {
  const properties = Object.fromEntries([...resource.filters.keys()].map((name) => [name, filterSchemaOf(resource, name)]));
  return { type: 'object', additionalProperties: false, minProperties: 1, properties, description: `Filters on ${resource.name} fields` };
}

/** One group of conditions: the tenant, the resource's filters, and where[relation][…] on related filters. */
function groupProperties(resource: CompiledResource): Record<string, object> {
  const properties: Record<string, object> = { tenantId: WHERE_TENANT };
  for (const name of resource.filters.keys()) properties[name] = filterSchemaOf(resource, name);
  for (const relation of resource.relations.values()) {
    properties[relation.name] = { allOf: [ref(filterSchemaNames(relation.target).fields)], description: `Filters on the related ${relation.target.name}` };
  }
  return properties;
}

/** An OR group: what where takes, but for `or` itself (one level deep). */
export function whereGroupSchema(resource: CompiledResource): object {
  return { type: 'object', additionalProperties: false, minProperties: 1, properties: groupProperties(resource) };
}

/** where[…]: a group of conditions, and where[or][n][…] groups of which one must hold. */
export function whereComponentSchema(resource: CompiledResource): object {
  const properties = groupProperties(resource);
  if (!resource.filters.has(OR_KEY)) {
    properties[OR_KEY] = {
      type: 'array',
      minItems: 1,
      maxItems: MAX_OR_GROUPS,
      items: ref(filterSchemaNames(resource).group),
      description: 'Groups of conditions of which at least one must hold (one level deep): where[or][0][field]=…&where[or][1][field]=…',
    };
  }
  return { type: 'object', additionalProperties: false, properties };
}

/** A list's where: the resource's Where component. */
export const whereSchema = (resource: CompiledResource): object => ref(filterSchemaNames(resource).where);
