// Definitions → compiled resources, once at start-up. Cross-checks that the JSON Schema cannot
// express (a relation's target exists, a filter names a field, a permission is known) fail here
// with the file, line and path of the mistake.
import { Model } from 'objection';
import { compileValidator } from '../validation.js';
import {
  DEFAULT_MAX_TAKE,
  MAX_RELATION_DEPTH,
  type CompiledField,
  type CompiledRelation,
  type CompiledResource,
  type Operation,
  type Registry,
} from './compiled.js';
import { coercer } from './fields.js';
import { DefinitionError, type SourcedDefinition } from './load.js';
import { buildModel } from './model.js';
import { bodySchemas, recordSchema } from './schemas.js';
import type { FieldDefinition, ResourceDefinition } from './types.js';

const uuid: FieldDefinition = { type: 'uuid' };
const timestamp: FieldDefinition = { type: 'timestamp' };

/** The columns every record of a scope has, before the definition's own fields. */
function baseFields(scope: ResourceDefinition['scope'], organizationRoot?: string): Array<[string, FieldDefinition, boolean]> {
  const fields: Array<[string, FieldDefinition, boolean]> = [
    ['id', { ...uuid, readOnly: true }, false],
    ['tenantId', { ...uuid, readOnly: true }, false],
  ];
  if (scope === 'organization') fields.push(['organizationId', { ...uuid, references: organizationRoot }, true]);
  fields.push(['createdAt', { ...timestamp, readOnly: true }, false], ['updatedAt', { ...timestamp, readOnly: true }, false]);
  return fields;
}

const idsKeyOf = (relation: string) => `${relation.replace(/s$/, '')}Ids`;

interface Check {
  problems: string[];
  source: SourcedDefinition;
}

function problem(check: Check, at: Array<string | number>, fault: string) {
  check.problems.push(`${check.source.locate(at)}: ${fault}`);
}

function compileFields(check: Check, organizationRoot?: string): Map<string, CompiledField> {
  const { definition } = check.source;
  const fields = new Map<string, CompiledField>();
  if (definition.scope === 'organization' && !organizationRoot) {
    problem(check, ['scope'], 'scope "organization" needs a resource marked organizationRoot (the organizations records belong to)');
  }
  for (const [name, def, writable] of baseFields(definition.scope, organizationRoot)) {
    fields.set(name, { name, definition: def, base: true, writable, hidden: false });
  }
  for (const [name, def] of Object.entries(definition.fields)) {
    if (fields.has(name)) {
      problem(check, ['fields', name], `is added by scope "${definition.scope}" and cannot be redefined`);
      continue;
    }
    const stringy = def.type === 'string' || def.type === 'text';
    if (!stringy && (def.minLength !== undefined || def.maxLength !== undefined || def.enum || def.format)) {
      problem(check, ['fields', name], `minLength, maxLength, enum and format apply to string fields, not ${def.type}`);
    }
    if (def.required && (def.readOnly || def.hidden)) {
      problem(check, ['fields', name, 'required'], 'a required field cannot be readOnly or hidden');
    }
    if (def.references && def.type !== 'uuid') problem(check, ['fields', name, 'references'], 'only uuid fields can reference a resource');
    const withDefaults: FieldDefinition = stringy && def.required && def.minLength === undefined ? { ...def, minLength: 1 } : def;
    fields.set(name, {
      name,
      definition: withDefaults,
      base: false,
      writable: !def.readOnly && !def.hidden,
      hidden: Boolean(def.hidden),
    });
  }
  return fields;
}

function permissionsOf(check: Check, known: Set<string>): Record<Operation, string> {
  const p = check.source.definition.permissions;
  const resolved = {
    read: p.read,
    create: p.create ?? p.write,
    update: p.update ?? p.write,
    delete: p.delete ?? p.write,
  };
  // "write" stands for three operations: report a bad one once, where it is written.
  const reported = new Set<string>();
  for (const [operation, permission] of Object.entries(resolved)) {
    const key = operation in p ? operation : 'write';
    if (permission === undefined) {
      problem(check, ['permissions'], `needs "${operation}" or "write"`);
    } else if (permission !== 'authenticated' && !known.has(permission) && !reported.has(key)) {
      reported.add(key);
      problem(check, ['permissions', key], `"${permission}" is not a permission listed in roles.yaml`);
    }
  }
  return resolved as Record<Operation, string>;
}

/** First pass: everything that needs only the definition itself. */
function compileOne(source: SourcedDefinition, known: Set<string>, problems: string[], organizationRoot?: string): CompiledResource {
  const check: Check = { problems, source };
  const definition = source.definition;
  const fields = compileFields(check, organizationRoot);
  const fieldNamed = (name: string, at: Array<string | number>, what: string) => {
    const field = fields.get(name);
    if (!field) problem(check, at, `${what} "${name}" is not a field of ${definition.name}`);
    else if (field.hidden) problem(check, at, `${what} "${name}" is hidden and cannot be used`);
    return field && !field.hidden ? field : undefined;
  };

  const filters: CompiledResource['filters'] = new Map();
  for (const name of ['id', ...(definition.scope === 'organization' ? ['organizationId'] : [])]) {
    filters.set(name, coercer(fields.get(name)!.definition, `where.${name}`));
  }
  (definition.filters ?? []).forEach((name, i) => {
    const field = fieldNamed(name, ['filters', i], 'filter');
    if (field) filters.set(name, coercer(field.definition, `where.${name}`));
  });
  const sortable = new Set(['id', 'createdAt', 'updatedAt']);
  (definition.sort ?? []).forEach((name, i) => fieldNamed(name, ['sort', i], 'sort field') && sortable.add(name));
  (definition.search ?? []).forEach((name, i) => {
    const field = fieldNamed(name, ['search', i], 'search field');
    if (field && field.definition.type !== 'string' && field.definition.type !== 'text') {
      problem(check, ['search', i], `search field "${name}" must be a string field`);
    }
  });
  if (definition.dateRange) {
    const field = fieldNamed(definition.dateRange, ['dateRange'], 'dateRange field');
    if (field && field.definition.type !== 'date' && field.definition.type !== 'timestamp') {
      problem(check, ['dateRange'], `dateRange field "${definition.dateRange}" must be a date or timestamp field`);
    }
  }
  if (definition.owner) {
    const field = fieldNamed(definition.owner, ['owner'], 'owner field');
    if (field && field.definition.type !== 'uuid') problem(check, ['owner'], `owner field "${definition.owner}" must be a uuid field`);
  }
  (definition.unique ?? []).forEach((u, i) => u.fields.forEach((name, j) => fieldNamed(name, ['unique', i, 'fields', j], 'unique field')));

  const all = [...fields.values()];
  const defaults: Record<string, unknown> = {};
  for (const f of all) if (f.definition.default !== undefined) defaults[f.name] = f.definition.default;
  const path = definition.path ?? definition.name;

  return {
    name: definition.name,
    definition,
    file: source.file,
    table: definition.table ?? definition.name.replace(/-/g, '_'),
    paths: [path, ...(definition.aliases ?? [])],
    scope: definition.scope,
    routes: definition.routes !== false,
    fields,
    visibleColumns: all.filter((f) => !f.hidden).map((f) => f.name),
    hiddenFields: all.filter((f) => f.hidden).map((f) => f.name),
    readOnlyFields: all.filter((f) => !f.writable && !f.hidden).map((f) => f.name),
    writableFields: all.filter((f) => f.writable),
    defaults,
    references: [],
    relations: new Map(),
    writableRelations: [],
    relationPaths: new Set(),
    filters,
    sortable,
    search: definition.search ?? [],
    dateRange: definition.dateRange,
    maxTake: definition.maxTake ?? DEFAULT_MAX_TAKE,
    owner: definition.owner,
    permissions: permissionsOf(check, known),
    uniqueMessages: (definition.unique ?? []).map((u) => ({
      fields: u.fields,
      message: u.message ?? `A ${definition.name} with the same ${u.fields.join(' and ')} already exists`,
    })),
    // Filled in by the second pass, once every resource exists.
    validators: undefined as unknown as CompiledResource['validators'],
    schemas: undefined as unknown as CompiledResource['schemas'],
    model: undefined as unknown as CompiledResource['model'],
  };
}

const knownResources = (registry: Registry) => `known: ${[...registry.keys()].sort().join(', ')}`;

/** Second pass: relations and references between resources. */
function link(resource: CompiledResource, source: SourcedDefinition, registry: Registry, problems: string[]) {
  const check: Check = { problems, source };
  for (const field of resource.fields.values()) {
    const target = field.definition.references;
    if (!target) continue;
    const resolved = registry.get(target);
    if (!resolved) problem(check, ['fields', field.name, 'references'], `references "${target}", which is not a resource (${knownResources(registry)})`);
    else resource.references.push({ field: field.name, target: resolved });
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
    if (kind === 'belongsTo' && !resource.fields.has(def.via!)) {
      problem(check, ['relations', name, 'via'], `"${def.via}" is not a field of ${resource.name}`);
    }
    if (kind === 'hasMany' && !target.fields.has(def.via!)) {
      problem(check, ['relations', name, 'via'], `"${def.via}" is not a field of ${target.name}`);
    }
    const relation: CompiledRelation = {
      name,
      kind,
      target,
      via: def.via,
      through: def.through,
      writable: Boolean(def.writable),
      idsKey: def.writable ? idsKeyOf(name) : undefined,
    };
    if (relation.idsKey && resource.fields.has(relation.idsKey)) {
      problem(check, ['relations', name], `its ids key "${relation.idsKey}" clashes with a field`);
    }
    resource.relations.set(name, relation);
    if (relation.writable) resource.writableRelations.push(relation);
  }
  const tagFilter = source.definition.tagFilter;
  if (tagFilter) {
    const relation = resource.relations.get(tagFilter);
    if (relation?.kind !== 'manyToMany') problem(check, ['tagFilter'], `"${tagFilter}" must name a manyToMany relation`);
    else resource.tagRelation = relation;
  }
}

function collectRelationPaths(resource: CompiledResource): Set<string> {
  const paths = new Set<string>();
  const walk = (at: CompiledResource, prefix: string, depth: number) => {
    if (depth > MAX_RELATION_DEPTH) return;
    for (const relation of at.relations.values()) {
      const path = prefix ? `${prefix}.${relation.name}` : relation.name;
      paths.add(path);
      walk(relation.target, path, depth + 1);
    }
  };
  walk(resource, '', 1);
  return paths;
}

/** The one resource marked organizationRoot, of scope tenant; its name, if there is one. */
function findOrganizationRoot(sources: SourcedDefinition[], problems: string[]): string | undefined {
  const roots = sources.filter((s) => s.definition.organizationRoot);
  for (const extra of roots.slice(1)) {
    problems.push(`${extra.locate(['organizationRoot'])}: only one resource can be the organization root; ${roots[0].definition.name} (${roots[0].file}) already is`);
  }
  const [root] = roots;
  if (root && root.definition.scope !== 'tenant') {
    problems.push(`${root.locate(['scope'])}: the organization root must have scope "tenant"`);
  }
  return root?.definition.name;
}

export interface CompileOptions {
  /** Every permission roles.yaml knows. */
  permissions: Set<string>;
  /** Model base class bound to the app's database. */
  baseModel?: typeof Model;
}

export function compileDefinitions(sources: SourcedDefinition[], options: CompileOptions): Registry {
  const problems: string[] = [];
  const registry: Registry = new Map();
  const seenPaths = new Map<string, { name: string; file: string }>();
  const organizationRoot = findOrganizationRoot(sources, problems);
  for (const source of sources) {
    const { name } = source.definition;
    if (registry.has(name)) {
      problems.push(`${source.locate(['name'])}: resource "${name}" is already defined in ${registry.get(name)!.file}`);
      continue;
    }
    const resource = compileOne(source, options.permissions, problems, organizationRoot);
    resource.paths.forEach((path, i) => {
      const owner = seenPaths.get(path);
      // The canonical path comes from `path`, or from `name` when the definition has no `path`.
      const at = i > 0 ? ['aliases', i - 1] : source.definition.path !== undefined ? ['path'] : ['name'];
      if (owner) problems.push(`${source.locate(at)}: path "/api/${path}" is already used by ${owner.name} (${owner.file})`);
      else seenPaths.set(path, { name, file: source.file });
    });
    registry.set(name, resource);
  }
  const byName = new Map(sources.map((s) => [s.definition.name, s]));
  for (const resource of registry.values()) link(resource, byName.get(resource.name)!, registry, problems);
  if (problems.length) throw new DefinitionError(problems);

  const root = organizationRoot ? registry.get(organizationRoot) : undefined;
  for (const resource of registry.values()) {
    if (resource.scope !== 'organization' || !root) continue;
    resource.organizationRoot = root;
    resource.organizationHeader = root.definition.organizationRoot?.header;
  }

  const base = options.baseModel ?? Model;
  for (const resource of registry.values()) {
    resource.relationPaths = collectRelationPaths(resource);
    const schemas = bodySchemas(resource);
    resource.schemas = { record: recordSchema(resource), ...schemas };
    resource.validators = {
      create: compileValidator(schemas.create),
      replace: compileValidator(schemas.replace),
      patch: compileValidator(schemas.patch),
    };
    resource.model = buildModel(resource, base);
  }
  return registry;
}
