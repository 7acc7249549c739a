// JSON Schemas of a resource's bodies and records, derived from its compiled fields. The same
// objects feed Ajv (what the server enforces) and the OpenAPI document (what it promises).
import type { CompiledField, CompiledRelation, CompiledResource } from './compiled.js';
import { valueSchema } from './fields.js';

/** Writable many-to-many relations may carry up to this many ids in one body. */
export const MAX_RELATION_IDS = 1000;

const uuidSchema = { type: 'string', format: 'uuid' };

/**
 * Whether null is a value of the field, in bodies and in records alike. A defaulted field's column
 * is NOT NULL (PUT resets it to its default, never to null), a required one always has a value,
 * and the scope's columns always name something, but for the organizationId of a resource whose
 * records may belong to no organization (organizationOptional).
 */
export function acceptsNull(field: CompiledField): boolean {
  if (field.base) return field.nullableBase === true;
  return !field.definition.required && field.definition.default === undefined;
}

/** Children sent with their parent in one body: at most this many per relation. */
export const MAX_CHILDREN = 500;

/**
 * The fields of a child the engine fills from its parent, so a child body sent with the parent
 * leaves them out: the one pointing at the parent, and the organization when both have one
 * (children live in their parent's organization).
 */
export function filledFromParent(parent: CompiledResource, relation: CompiledRelation): string[] {
  const both = parent.scope === 'organization' && relation.target.scope === 'organization';
  return [relation.via!, ...(both ? ['organizationId'] : [])];
}

/** A field's value schema; a referencesBy field's description says which records it may name. */
function fieldSchema(field: CompiledField, nullable: boolean): Record<string, unknown> {
  const schema = valueSchema(field.definition, nullable);
  const by = field.definition.referencesBy;
  if (!by) return schema;
  const kinds = Object.entries(by.resources).map(([value, resource]) => `${value}: ${resource}`).join(', ');
  const note = `The id of a record of the caller's tenant, of the resource that ${by.field} names (${kinds}); any other id is a 400`;
  return { ...schema, description: schema.description ? `${schema.description}. ${note}` : note };
}

function bodySchema(resource: CompiledResource, requireRequired: boolean, omit: string[] = []) {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  for (const field of resource.writableFields) {
    if (omit.includes(field.name)) continue;
    const isRequired = Boolean(field.definition.required);
    properties[field.name] = fieldSchema(field, acceptsNull(field));
    if (isRequired && requireRequired) required.push(field.name);
  }
  for (const relation of resource.writableRelations) {
    if (relation.kind === 'hasMany') {
      // A child's own create body minus what the parent fills (link.ts allows one level only).
      properties[relation.name] = {
        type: 'array',
        maxItems: MAX_CHILDREN,
        description: `${relation.target.name} records written with this one, in the same transaction (without ${relation.via}, filled in by the server); a list sent replaces the existing ones, none sent leaves them as they are`,
        items: bodySchema(relation.target, true, filledFromParent(resource, relation)),
      };
      continue;
    }
    properties[relation.name] = {
      type: 'array',
      maxItems: MAX_RELATION_IDS,
      description: `${relation.target.name} records to link, by id`,
      items: { type: 'object', required: ['id'], properties: { id: uuidSchema } },
    };
    properties[relation.idsKey!] = {
      type: 'array',
      maxItems: MAX_RELATION_IDS,
      description: `ids of ${relation.target.name} records to link`,
      items: uuidSchema,
    };
  }
  return { type: 'object', additionalProperties: false, properties, ...(required.length ? { required } : {}) };
}

export function bodySchemas(resource: CompiledResource) {
  return {
    create: bodySchema(resource, true),
    replace: bodySchema(resource, true),
    patch: bodySchema(resource, false),
  };
}

/** A record as the service returns it (relations are added by the OpenAPI builder). */
export function recordSchema(resource: CompiledResource) {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  for (const field of resource.fields.values()) {
    if (field.hidden) continue;
    const nullable = acceptsNull(field);
    const schema: Record<string, unknown> = fieldSchema(field, nullable);
    if (field.definition.type === 'date' || field.definition.type === 'timestamp') schema.format = 'date-time';
    if (!field.writable) schema.readOnly = true;
    properties[field.name] = schema;
    if (!nullable) required.push(field.name);
  }
  return { type: 'object', properties, required };
}
