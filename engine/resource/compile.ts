// Definitions → compiled resources, once at start-up. Cross-checks that the JSON Schema cannot
// express (a relation's target exists, a filter names a field, a permission is known) fail here
// with the file, line and path of the mistake.
import { Model } from 'objection';
import { ajv, compileValidator, messagesFor } from '../validation.js';
import {
  DEFAULT_MAX_TAKE,
  MAX_RELATION_DEPTH,
  type CompiledField,
  type CompiledRelation,
  type CompiledResource,
  type Operation,
  type Registry,
} from './compiled.js';
import { coercer, valueSchema } from './fields.js';
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

interface Check {
  problems: string[];
  source: SourcedDefinition;
}

function problem(check: Check, at: Array<string | number>, fault: string) {
  check.problems.push(`${check.source.locate(at)}: ${fault}`);
}

const STRING_RULES = ['minLength', 'maxLength', 'enum', 'format'] as const;
const NUMBER_RULES = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'] as const;

/** Pairs of bounds that, crossed, leave no value able to pass; the boolean says both are inclusive. */
const BOUND_PAIRS = [
  ['minimum', 'maximum', true],
  ['minimum', 'exclusiveMaximum', false],
  ['exclusiveMinimum', 'maximum', false],
  ['exclusiveMinimum', 'exclusiveMaximum', false],
  ['minLength', 'maxLength', true],
] as const;

/**
 * A rule of another type would be dropped without a word by valueSchema (a minimum on a string),
 * and crossed bounds would refuse every value: both are mistakes in the definition, not in requests.
 */
function checkRules(check: Check, name: string, def: FieldDefinition): boolean {
  const before = check.problems.length;
  const stringy = def.type === 'string' || def.type === 'text';
  const numeric = def.type === 'integer' || def.type === 'number';
  for (const key of STRING_RULES) {
    if (!stringy && def[key] !== undefined) problem(check, ['fields', name, key], `applies to string and text fields, not ${def.type}`);
  }
  for (const key of NUMBER_RULES) {
    if (!numeric && def[key] !== undefined) problem(check, ['fields', name, key], `applies to integer and number fields, not ${def.type}`);
  }
  for (const [low, high, inclusive] of BOUND_PAIRS) {
    const [a, b] = [def[low], def[high]];
    if (a === undefined || b === undefined || (inclusive ? a <= b : a < b)) continue;
    problem(check, ['fields', name, low], `${low} ${a} is ${inclusive ? 'greater than' : 'not less than'} ${high} ${b}: no value can pass`);
  }
  return check.problems.length === before;
}

/** The default and every enum value must pass the field's other rules, as a body's value would. */
function checkValues(check: Check, name: string, def: FieldDefinition) {
  const report = (rules: FieldDefinition, value: unknown, at: Array<string | number>) => {
    const validate = ajv.compile(valueSchema(rules, false));
    if (!validate(value)) for (const message of messagesFor(validate.errors, JSON.stringify(value))) problem(check, at, message);
  };
  // Only a string field's enum is a rule (another type's is reported by checkRules).
  if (def.enum && (def.type === 'string' || def.type === 'text')) {
    const { enum: values, ...others } = def;
    values.forEach((value, i) => report(others, value, ['fields', name, 'enum', i]));
  }
  if (def.default !== undefined) report(def, def.default, ['fields', name, 'default']);
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
    const consistent = checkRules(check, name, def);
    if (def.required && (def.readOnly || def.hidden)) {
      problem(check, ['fields', name, 'required'], 'a required field cannot be readOnly or hidden');
    }
    if (def.references && def.type !== 'uuid') problem(check, ['fields', name, 'references'], 'only uuid fields can reference a resource');
    const stringy = def.type === 'string' || def.type === 'text';
    const withDefaults: FieldDefinition = stringy && def.required && def.minLength === undefined ? { ...def, minLength: 1 } : def;
    // Values checked against rules that contradict themselves would only repeat the same fault.
    if (consistent) checkValues(check, name, withDefaults);
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
  const table = definition.table ?? definition.name.replace(/-/g, '_');

  return {
    name: definition.name,
    definition,
    file: source.file,
    table,
    paths: [path, ...(definition.aliases ?? [])],
    scope: definition.scope,
    routes: definition.routes !== false,
    fields,
    visibleColumns: all.filter((f) => !f.hidden).map((f) => f.name),
    selectColumns: all.filter((f) => !f.hidden).map((f) => `${table}.${f.name}`),
    listParameters: new Set(), // once relations are linked (tags[] needs the tag relation)
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
    const key = relation.idsKey!;
    const explicit = check.source.definition.relations![relation.name].idsKey !== undefined;
    const clash = taken.get(key);
    if (!clash) taken.set(key, `the ids key of "${relation.name}"`);
    else if (explicit) problem(check, ['relations', relation.name, 'idsKey'], `"${key}" is already the name of ${clash}`);
    else problem(check, ['relations', relation.name], `its ids key "${key}" (derived from the name) is already the name of ${clash}; name another with idsKey`);
  }
}

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
    if (kind === 'belongsTo') checkVia(check, name, resource, `holding the ${target.name} id`);
    if (kind === 'hasMany') checkVia(check, name, target, `pointing at ${resource.name}`);
    const writable = Boolean(def.writable);
    if (def.idsKey !== undefined && !writable) problem(check, ['relations', name, 'idsKey'], 'applies only to a writable manyToMany relation');
    const relation: CompiledRelation = {
      name,
      kind,
      target,
      via: def.via,
      through: def.through,
      writable,
      idsKey: writable ? def.idsKey ?? derivedIdsKey(name) : undefined,
    };
    resource.relations.set(name, relation);
    if (relation.writable) resource.writableRelations.push(relation);
  }
  checkIdsKeys(check, resource);
  const tagFilter = source.definition.tagFilter;
  if (tagFilter) {
    const relation = resource.relations.get(tagFilter);
    if (relation?.kind !== 'manyToMany') problem(check, ['tagFilter'], `"${tagFilter}" must name a manyToMany relation`);
    else resource.tagRelation = relation;
  }
}

/**
 * Every relations[] path, to MAX_RELATION_DEPTH. A hasMany loads all the children of each parent:
 * first in a path its parents are the page (bounded by take); after another segment they are
 * not (organization.employees under each of a page's rows loads a whole organization per row),
 * so a hasMany is allowed only as the first segment. What follows it is not restricted further.
 */
function collectRelationPaths(resource: CompiledResource): Set<string> {
  const paths = new Set<string>();
  const walk = (at: CompiledResource, prefix: string, depth: number) => {
    if (depth > MAX_RELATION_DEPTH) return;
    for (const relation of at.relations.values()) {
      if (prefix && relation.kind === 'hasMany') continue;
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

/** The parameters a resource accepts: always the base ones, the rest only when it supports them. */
function listParametersOf(resource: CompiledResource): string[] {
  const names = ['take', 'skip', 'order', 'where', 'relations'];
  if (resource.search.length) names.push('search');
  if (resource.dateRange) names.push('startDate', 'endDate');
  if (resource.tagRelation) names.push('tags');
  return names;
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
    resource.listParameters = new Set(listParametersOf(resource));
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
