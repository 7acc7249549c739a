// The schemas of a list's where: per field, its value or an object of exactly its operators
// (engine/resource/filters.ts), and per resource the FieldFilters, WhereGroup and Where
// components (engine/openapi/components.ts adds them) that every list and search refers to.
import type { CompiledResource } from '../resource/compiled.js';
import { filterItemPattern, filterSchema } from '../resource/fields.js';
import { MAX_LIST_VALUES, MAX_PATTERN_LENGTH, type FilterOperator } from '../resource/filters.js';
import { MAX_OR_GROUPS, OR_KEY } from '../resource/where.js';
import { ref, schemaName } from './fragments.js';
import { toOpenApiSchema } from './schema-conversion.js';

/**
 * What a filter takes, from the field it filters (the server's own rule: engine/resource/fields.ts
 * filterSchema); a nullable base id (organizationId where records may have none, who changed or
 * deleted a record) may also be null.
 */
function filterValueSchema(resource: CompiledResource, name: string): object {
  const field = resource.fields.get(name);
  if (!field) return { type: 'string' };
  // Null is a value only where the server's filter reads it so: an id (engine/resource/fields.ts
  // coercer); deletedAt=null is refused there, and isNull says it instead.
  const filter = resource.filters.get(name);
  if (!field.nullableBase || !filter?.matchesNull || filter.type !== 'uuid') return toOpenApiSchema(filterSchema(field.definition));
  // Who created, changed or deleted a record: their id, the word null, or JSON null.
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
 * One value of an in, nin or between list: the field's value, never null (the server answers
 * "use isNull"), as a JSON item and as one item of the comma-separated text.
 */
function listItem(resource: CompiledResource, name: string): { schema: object; pattern: string } {
  const field = resource.fields.get(name);
  if (!field) return { schema: { type: 'string' }, pattern: '[^,]*' };
  return { schema: toOpenApiSchema(filterSchema(field.definition)), pattern: filterItemPattern(field.definition) ?? '[^,]*' };
}

/**
 * The comma-separated text of a list: `size` items (between), else 1 to MAX_LIST_VALUES, each as
 * the server reads it (engine/resource/filters.ts splits on every comma).
 */
const listPattern = (item: string, size?: number) => `^${item}(?:,${item}){${size ? `${size - 1}` : `0,${MAX_LIST_VALUES - 1}`}}$`;

/**
 * A filter: its value (exact match), or an object of the operators the field allows, each with
 * the value it takes (engine/resource/filters.ts reads them).
 */
function filterSchemaOf(resource: CompiledResource, name: string): object {
  const value = filterValueSchema(resource, name);
  const item = listItem(resource, name);
  const operators = resource.filters.get(name)!.operators;
  const list = (size?: number) => ({
    anyOf: [
      { type: 'array', items: item.schema, ...(size ? { minItems: size, maxItems: size } : { minItems: 1, maxItems: MAX_LIST_VALUES }) },
      // Not empty: where[f][in]= is a 400 (should not be empty), as an empty array is.
      { type: 'string', minLength: 1, pattern: listPattern(item.pattern, size), description: 'comma-separated, as a query string may carry it' },
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
