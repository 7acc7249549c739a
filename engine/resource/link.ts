// The second pass over definitions: relations and references between resources, the body keys
// of writable relations (ids of many-to-many ones, child bodies of has-many ones), and every
// relations[] path a resource accepts.
import { problem, type Check } from './check.js';
import { MAX_RELATION_DEPTH, type CompiledRelation, type CompiledResource, type Registry } from './compiled.js';
import type { SourcedDefinition } from './load.js';

/**
 * The body key of a writable many-to-many relation's plain ids when the definition names none:
 * categories → categoryIds, tags → tagIds, staff → staffIds. English plurals are irregular
 * (statuses would give statuseIds): a definition names the key with idsKey where this rule is wrong.
 */
function derivedIdsKey(relation: string): string {
  if (relation.endsWith('ies')) return `${relation.slice(0, -3)}yIds`;
  if (relation.endsWith('s')) return `${relation.slice(0, -1)}Ids`;
  return `${relation}Ids`;
}

const knownResources = (registry: Registry) => `known: ${[...registry.keys()].sort().join(', ')}`;

/** A belongsTo's via (on this resource) or a hasMany's (on its target) holds record ids: a uuid field. */
function checkVia(check: Check, name: string, holder: CompiledResource, role: string) {
  const via = check.source.definition.relations![name].via!;
  const field = holder.fields.get(via);
  if (!field) problem(check, ['relations', name, 'via'], `"${via}" is not a field of ${holder.name}`);
  else if (field.definition.type !== 'uuid') {
    problem(check, ['relations', name, 'via'], `"${via}" is a ${field.definition.type} field of ${holder.name}; via must be a uuid field ${role}`);
  }
}

/**
 * A body holds the fields, each writable relation as [{id}] and its ids under idsKey: two of them
 * under one key could not both be read. A derived key that clashes asks for an explicit one.
 */
function checkIdsKeys(check: Check, resource: CompiledResource) {
  const taken = new Map<string, string>([
    ...[...resource.fields.keys()].map((f): [string, string] => [f, `the field "${f}"`]),
    ...[...resource.relations.keys()].map((r): [string, string] => [r, `the relation "${r}"`]),
  ]);
  for (const relation of resource.writableRelations) {
    if (relation.kind !== 'manyToMany') continue;
    const key = relation.idsKey!;
    const explicit = check.source.definition.relations![relation.name].idsKey !== undefined;
    const clash = taken.get(key);
    if (!clash) taken.set(key, `the ids key of "${relation.name}"`);
    else if (explicit) problem(check, ['relations', relation.name, 'idsKey'], `"${key}" is already the name of ${clash}`);
    else problem(check, ['relations', relation.name], `its ids key "${key}" (derived from the name) is already the name of ${clash}; name another with idsKey`);
  }
}

/**
 * Children sent with their parent get their via field from the engine, so the client must not be
 * the one to write it, and the engine must be able to: it is a writable field of the child. A
 * child that takes children of its own would make bodies nest without end: one level only.
 */
function checkWritableChildren(check: Check, name: string, parent: CompiledResource, child: CompiledResource) {
  const via = check.source.definition.relations![name].via!;
  // Children take their parent's organization, which may then be none.
  if (parent.organizationOptional && child.scope === 'organization' && !child.organizationOptional) {
    problem(check, ['relations', name, 'writable'], `${child.name} records written with a ${parent.name} take its organization, which may be none (organizationOptional): ${child.name} needs organizationOptional too`);
  }
  const field = child.fields.get(via);
  if (field && !field.writable) problem(check, ['relations', name, 'via'], `"${via}" of ${child.name} is not writable: the engine could not set it on the children`);
  // Writing children replaces them: a deleted child would be removed for good, or kept out of sight.
  if (child.softDelete) problem(check, ['relations', name, 'writable'], `${child.name} has softDelete: writable children are replaced when their parent is written, so they cannot be soft-deleted`);
  const nested = Object.entries(child.definition.relations ?? {}).find(([, r]) => r.hasMany && r.writable);
  if (nested) problem(check, ['relations', name, 'writable'], `${child.name} takes children itself (${nested[0]}): writable hasMany relations nest one level only`);
}

/** Second pass: relations and references between resources. */
export function link(resource: CompiledResource, source: SourcedDefinition, registry: Registry, problems: string[]) {
  const check: Check = { problems, source };
  for (const field of resource.fields.values()) {
    const target = field.definition.references;
    if (!target) continue;
    const resolved = registry.get(target);
    if (!resolved) problem(check, ['fields', field.name, 'references'], `references "${target}", which is not a resource (${knownResources(registry)})`);
    else resource.references.push({ field: field.name, target: resolved });
  }
  for (const field of resource.fields.values()) {
    const by = field.definition.referencesBy;
    if (!by) continue;
    const targets = new Map<string, CompiledResource>();
    for (const [value, targetName] of Object.entries(by.resources)) {
      const resolved = registry.get(targetName);
      if (!resolved) problem(check, ['fields', field.name, 'referencesBy', 'resources', value], `"${targetName}" is not a resource (${knownResources(registry)})`);
      else targets.set(value, resolved);
    }
    resource.referencesBy.push({ field: field.name, discriminator: by.field, targets });
  }
  for (const [name, def] of Object.entries(source.definition.relations ?? {})) {
    const kind = def.belongsTo ? 'belongsTo' : def.hasMany ? 'hasMany' : 'manyToMany';
    const targetName = (def.belongsTo ?? def.hasMany ?? def.manyToMany)!;
    const target = registry.get(targetName);
    if (!target) {
      problem(check, ['relations', name, kind], `"${targetName}" is not a resource (${knownResources(registry)})`);
      continue;
    }
    if (resource.fields.has(name)) problem(check, ['relations', name], `has the same name as a field`);
    if (kind === 'belongsTo') checkVia(check, name, resource, `holding the ${target.name} id`);
    if (kind === 'hasMany') checkVia(check, name, target, `pointing at ${resource.name}`);
    const writable = Boolean(def.writable);
    const takesIds = writable && kind === 'manyToMany';
    if (def.idsKey !== undefined && !takesIds) problem(check, ['relations', name, 'idsKey'], 'applies only to a writable manyToMany relation');
    if (writable && kind === 'hasMany') checkWritableChildren(check, name, resource, target);
    const relation: CompiledRelation = {
      name,
      kind,
      target,
      via: def.via,
      through: def.through,
      writable,
      loadable: def.loadable !== false,
      idsKey: takesIds ? def.idsKey ?? derivedIdsKey(name) : undefined,
    };
    resource.relations.set(name, relation);
    if (relation.writable) resource.writableRelations.push(relation);
    // Its children's own writes change the parent's version too (sql/version.ts).
    if (relation.writable && kind === 'hasMany') {
      if (target.fields.get(def.via!)?.hidden) problem(check, ['relations', name, 'via'], `a writable hasMany needs its field ${def.via} visible on ${target.name} (a child's write touches its parent by it)`);
      target.parentTouches.push({ parent: resource, via: def.via! });
    }
  }
  checkIdsKeys(check, resource);
  const tagFilter = source.definition.tagFilter;
  if (tagFilter) {
    const relation = resource.relations.get(tagFilter);
    if (relation?.kind !== 'manyToMany') problem(check, ['tagFilter'], `"${tagFilter}" must name a manyToMany relation`);
    else resource.tagRelation = relation;
  } else if (resource.relations.get(TAGS)?.kind === 'manyToMany') {
    // Without tagFilter, the tags[] parameter filters on the many-to-many relation of its name.
    resource.tagRelation = resource.relations.get(TAGS);
  }
}

/** The list parameter tags[], and the relation it filters on unless a definition's tagFilter names another. */
const TAGS = 'tags';

/**
 * Every relations[] path, to MAX_RELATION_DEPTH. A hasMany loads all the children of each parent:
 * first in a path its parents are the page (bounded by take); after another segment they are
 * not (organization.employees under each of a page's rows loads a whole organization per row),
 * so a hasMany is allowed only as the first segment. What follows it is not restricted further.
 */
export function collectRelationPaths(resource: CompiledResource): Set<string> {
  const paths = new Set<string>();
  const walk = (at: CompiledResource, prefix: string, depth: number) => {
    if (depth > MAX_RELATION_DEPTH) return;
    for (const relation of at.relations.values()) {
      if (prefix && relation.kind === 'hasMany') continue;
      if (!relation.loadable) continue;
      const path = prefix ? `${prefix}.${relation.name}` : relation.name;
      paths.add(path);
      walk(relation.target, path, depth + 1);
    }
  };
  walk(resource, '', 1);
  return paths;
}
