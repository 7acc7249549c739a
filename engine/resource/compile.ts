// Definitions → compiled resources, once at start-up. Cross-checks that the JSON Schema cannot
// express (a relation's target exists, a filter names a field, a permission is known) fail here
// with the file, line and path of the mistake.
import { Model } from 'objection';
import type { OwnerRule } from '../caller.js';
import { compileValidator } from '../validation.js';
import { problem, type Check } from './check.js';
import { compileFields } from './compile-fields.js';
import { DEFAULT_MAX_TAKE, tenantWideUniqueColumns, type CompiledField, type CompiledResource, type CountPolicy, type Operation, type Registry, type SearchModes } from './compiled.js';
import { compileFilter, DEFAULT_OPERATORS, possibleOperators } from './filters.js';
import { collectRelationPaths, link } from './link.js';
import { DefinitionError, type SourcedDefinition } from './load.js';
import { buildModel } from './model.js';
import { bodySchemas, recordSchema } from './schemas.js';
import type { FieldDefinition, ReferencesByDefinition } from './types.js';
import { ruleConstraintName } from '../db/migrations.js';


function permissionsOf(check: Check, known: ReadonlySet<string>): Record<Operation, string> {
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

/** The definition's `count:` (the schema has checked the types), exact when absent. */
function countPolicyOf(check: Check, maxTake: number): CountPolicy {
  const count = check.source.definition.count;
  if (count === undefined || count === 'exact') return { kind: 'exact' };
  if (typeof count === 'string') {
    problem(check, ['count'], `"${count}" is not a count policy: write exact, { capped: N } or { estimated: N }`);
    return { kind: 'exact' };
  }
  const kinds = Object.keys(count);
  if (kinds.length !== 1) {
    problem(check, ['count'], `needs exactly one of capped or estimated${kinds.length ? ` (this one has ${kinds.join(' and ')})` : ''}`);
    return { kind: 'exact' };
  }
  if ('capped' in count) {
    // A smaller cap would answer a full page with a total below its own length.
    if (count.capped < maxTake) problem(check, ['count', 'capped'], `must be at least maxTake (${maxTake}): a page could hold more records than the total`);
    return { kind: 'capped', limit: count.capped };
  }
  return { kind: 'estimated', threshold: count.estimated };
}

/**
 * referencesBy's field names the kind of record: another field of the resource, a string with an
 * enum, every value of which is mapped to a resource, and nothing else is (the resources
 * themselves are looked up in the second pass, link.ts).
 */
function checkReferencesBy(
  check: Check,
  name: string,
  by: ReferencesByDefinition,
  fieldNamed: (name: string, at: Array<string | number>, what: string) => CompiledField | undefined,
) {
  const at = ['fields', name, 'referencesBy'];
  if (by.field === name) {
    problem(check, [...at, 'field'], 'must name another field: the one whose value says which resource this field references');
    return;
  }
  const kind = fieldNamed(by.field, [...at, 'field'], 'referencesBy field');
  if (!kind) return;
  const values = kind.definition.enum;
  if ((kind.definition.type !== 'string' && kind.definition.type !== 'text') || !values) {
    problem(check, [...at, 'field'], `"${by.field}" must be a string field with an enum: its values name the resources ${name} may reference`);
    return;
  }
  const unmapped = values.filter((value) => !Object.hasOwn(by.resources, value));
  if (unmapped.length) problem(check, [...at, 'resources'], `every value of ${by.field} needs a resource; missing: ${unmapped.join(', ')}`);
  for (const key of Object.keys(by.resources)) {
    if (!values.includes(key)) problem(check, [...at, 'resources', key], `"${key}" is not a value of ${by.field} (${values.join(', ')})`);
  }
}

/** First pass: everything that needs only the definition itself. */
function compileOne(source: SourcedDefinition, known: ReadonlySet<string>, problems: string[], organizationRoot?: string): CompiledResource {
  const check: Check = { problems, source };
  const definition = source.definition;
  const fields = compileFields(check, organizationRoot);
  const fieldNamed = (name: string, at: Array<string | number>, what: string) => {
    const field = fields.get(name);
    if (!field) problem(check, at, `${what} "${name}" is not a field of ${definition.name}`);
    else if (field.hidden) problem(check, at, `${what} "${name}" is hidden and cannot be used`);
    return field && !field.hidden ? field : undefined;
  };

  const organizationOptional = definition.organizationOptional === true;
  if (organizationOptional && definition.scope !== 'organization') {
    problem(check, ['organizationOptional'], 'applies to scope "organization" only: records of scope "tenant" have no organization');
  }
  const filters: CompiledResource['filters'] = new Map();
  const byDefault = (field: FieldDefinition, matchesNull = false) => compileFilter(field, DEFAULT_OPERATORS[field.type], matchesNull);
  filters.set('id', byDefault(fields.get('id')!.definition));
  if (definition.scope === 'organization') {
    // where[organizationId]=null lists the records of no organization, where there can be any.
    filters.set('organizationId', byDefault(fields.get('organizationId')!.definition, organizationOptional));
  }
  // Who created, changed or deleted a record, and when it was deleted: filterable without being named.
  for (const name of ['createdById', 'updatedById', 'deletedAt', 'deletedById']) {
    const field = fields.get(name);
    if (field?.base) filters.set(name, byDefault(field.definition, true));
  }
  (definition.filters ?? []).forEach((entry, i) => {
    const name = typeof entry === 'string' ? entry : entry.field;
    const field = fieldNamed(name, typeof entry === 'string' ? ['filters', i] : ['filters', i, 'field'], 'filter');
    if (!field) return;
    // id and organizationId are filterable anyway: naming one only matters with its operators.
    if (typeof entry === 'string') return void (filters.has(name) || filters.set(name, byDefault(field.definition)));
    const possible = possibleOperators(field.definition.type);
    const impossible = entry.operators.filter((op) => !possible.includes(op));
    if (impossible.length) return problem(check, ['filters', i, 'operators'], `${impossible.join(', ')} cannot filter a ${field.definition.type} field; it takes ${possible.join(', ')}`);
    filters.set(name, compileFilter(field.definition, entry.operators, filters.get(name)?.matchesNull));
  });
  const sortable = new Set(['id', 'createdAt', 'updatedAt']);
  (definition.sort ?? []).forEach((name, i) => fieldNamed(name, ['sort', i], 'sort field') && sortable.add(name));
  const searchModes: SearchModes = { fulltext: [], substring: [] };
  (definition.search ?? []).forEach((entry, i) => {
    const { field: name, mode } = typeof entry === 'string' ? { field: entry, mode: 'substring' as const } : entry;
    const field = fieldNamed(name, ['search', i], 'search field');
    if (field && field.definition.type !== 'string' && field.definition.type !== 'text') {
      problem(check, ['search', i], `search field "${name}" must be a string field`);
    }
    if (searchModes.fulltext.includes(name) || searchModes.substring.includes(name)) return problem(check, ['search', i], `search field "${name}" is named twice`);
    searchModes[mode].push(name);
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
  for (const [name, def] of Object.entries(definition.fields)) {
    (def.computed?.secondsBetween ?? []).forEach((other, i) => {
      const field = fieldNamed(other, ['fields', name, 'computed', 'secondsBetween', i], 'secondsBetween field');
      if (field && field.definition.type !== 'timestamp') problem(check, ['fields', name, 'computed', 'secondsBetween', i], `"${other}" must be a timestamp field`);
    });
  }
  for (const [name, def] of Object.entries(definition.fields)) if (def.referencesBy) checkReferencesBy(check, name, def.referencesBy, fieldNamed);
  const table = definition.table ?? definition.name.replace(/-/g, '_');
  const ruleMessages = new Map<string, string>();
  (definition.rules ?? []).forEach((rule, i) => {
    const a = fieldNamed(rule.field, ['rules', i, 'field'], 'rule field');
    const b = fieldNamed(rule.atLeast, ['rules', i, 'atLeast'], 'rule field');
    if (!a || !b) return;
    const kind = (t: string) => (t === 'date' || t === 'timestamp' ? 'time' : t === 'integer' || t === 'number' ? 'number' : t);
    if (kind(a.definition.type) !== kind(b.definition.type) || !['time', 'number'].includes(kind(a.definition.type))) {
      problem(check, ['rules', i], `"${rule.field}" and "${rule.atLeast}" must both be dates/timestamps or both numbers`);
      return;
    }
    const earlier = kind(a.definition.type) === 'time' ? 'earlier than' : 'less than';
    ruleMessages.set(ruleConstraintName(table, rule.field, rule.atLeast), rule.message ?? `${rule.field} must not be ${earlier} ${rule.atLeast}`);
  });

  const all = [...fields.values()];
  const defaults: Record<string, unknown> = {};
  for (const f of all) if (f.definition.default !== undefined) defaults[f.name] = f.definition.default;
  const path = definition.path ?? definition.name;

  return {
    name: definition.name,
    definition,
    file: source.file,
    table,
    paths: [path, ...(definition.aliases ?? [])],
    scope: definition.scope,
    organizationOptional: organizationOptional && definition.scope === 'organization',
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
    referencesBy: [],
    relations: new Map(),
    writableRelations: [],
    parentTouches: [],
    versionSalt: '',
    relationPaths: new Set(),
    filters,
    sortable,
    search: [...searchModes.fulltext, ...searchModes.substring],
    searchModes,
    dateRange: definition.dateRange,
    maxTake: definition.maxTake ?? DEFAULT_MAX_TAKE,
    count: countPolicyOf(check, definition.maxTake ?? DEFAULT_MAX_TAKE),
    requireIfMatch: definition.ifMatch === 'required',
    softDelete: definition.softDelete === true,
    changedBy: definition.changedBy === true,
    owner: definition.owner,
    permissions: permissionsOf(check, known),
    ruleMessages,
    callerDefaults: all.filter((f) => f.definition.callerDefault).map((f) => ({ field: f.name, claim: f.definition.callerDefault! })),
    keptOnReplace: new Set(['organizationId', ...(definition.owner ? [definition.owner] : []), ...all.filter((f) => f.definition.callerDefault).map((f) => f.name)]),
    uniqueMessages: (definition.unique ?? []).map((u) => ({
      fields: u.fields,
      message: u.message ?? `A ${definition.name} with the same ${u.fields.join(' and ')} already exists`,
      tenantWide: tenantWideUniqueColumns(organizationOptional, u.fields),
    })),
    // Filled in by the second pass, once every resource exists.
    validators: undefined as unknown as CompiledResource['validators'],
    schemas: undefined as unknown as CompiledResource['schemas'],
    model: undefined as unknown as CompiledResource['model'],
  };
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
  const names = ['take', 'skip', 'order', 'where', 'relations', 'select', 'cursor', 'count'];
  if (resource.search.length) names.push('search');
  if (resource.dateRange) names.push('startDate', 'endDate');
  if (resource.tagRelation) names.push('tags');
  if (resource.softDelete) names.push('withDeleted');
  return names;
}

export interface CompileOptions {
  /** Every permission the role table knows. */
  permissions: ReadonlySet<string>;
  /** The owner rule of the application's roles, applied to every resource with an owner field. */
  owner?: OwnerRule;
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
    if (resource.owner) resource.ownerRule = options.owner;
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
