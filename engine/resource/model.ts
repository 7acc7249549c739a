// An Objection model per resource, declared as data: table, relations, and a JSON formatter
// that drops hidden fields even if a query selected them.
import { Model, type ModelClass, type RelationMappings } from 'objection';
import type { CompiledResource } from './compiled.js';

const RELATION_CLASSES = {
  belongsTo: Model.BelongsToOneRelation,
  hasMany: Model.HasManyRelation,
  manyToMany: Model.ManyToManyRelation,
} as const;

function mappings(resource: CompiledResource): RelationMappings {
  const result: RelationMappings = {};
  const table = resource.table;
  for (const relation of resource.relations.values()) {
    const targetTable = relation.target.table;
    const join =
      relation.kind === 'belongsTo'
        ? { from: `${table}.${relation.via}`, to: `${targetTable}.id` }
        : relation.kind === 'hasMany'
          ? { from: `${table}.id`, to: `${targetTable}.${relation.via}` }
          : {
              from: `${table}.id`,
              through: { from: `${relation.through!.table}.${relation.through!.from}`, to: `${relation.through!.table}.${relation.through!.to}` },
              to: `${targetTable}.id`,
            };
    result[relation.name] = {
      relation: RELATION_CLASSES[relation.kind],
      // A thunk: the target's model may be built after this one.
      modelClass: () => relation.target.model,
      join,
    } as RelationMappings[string];
  }
  return result;
}

export function buildModel(resource: CompiledResource, base: typeof Model): ModelClass<Model> {
  const hidden = resource.hiddenFields;
  const relationMappings = () => mappings(resource);
  class ResourceModel extends base {
    static override get tableName() {
      return resource.table;
    }
    static override get idColumn() {
      return 'id';
    }
    static override relationMappings = relationMappings;
    override $formatJson(json: Record<string, unknown>) {
      const formatted = super.$formatJson(json);
      for (const field of hidden) delete formatted[field];
      return formatted;
    }
  }
  Object.defineProperty(ResourceModel, 'name', { value: resource.name.replace(/(^|-)(\w)/g, (_, __, c: string) => c.toUpperCase()) });
  return ResourceModel as unknown as ModelClass<Model>;
}
