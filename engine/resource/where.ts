// where[…] of a list: one group of conditions (fields with exact values or operators, related
// fields), and where[or][n][…] groups of which one must hold. Read and checked here against the
// resource's filters (filters.ts reads each field's operators); every problem is collected.
import { forbidden } from '../errors.js';
import { isPlainObject } from '../objects.js';
import type { CompiledRelation, CompiledResource } from './compiled.js';
import { parseConditions, type Condition } from './filters.js';
import { MAX_NAMES } from './list-query.js';

export interface NestedFilter {
  relation: CompiledRelation;
  conditions: Condition[];
}

/** Conditions that must all hold: on the record's fields, and on related records. */
export interface FilterGroup {
  where: Condition[];
  nested: NestedFilter[];
}

/** where's key for groups of conditions of which any one may hold. */
export const OR_KEY = 'or';
/** The most OR groups a where takes. */
export const MAX_OR_GROUPS = 20;

/**
 * One group of conditions, all of which must hold: fields (exact values or operators), related
 * fields, and (at the top only) the OR groups. `label` is how the client wrote its position.
 */
function parseGroup(resource: CompiledResource, raw: unknown, label: string, tenantId: string, problems: string[], top: boolean): FilterGroup & { or: FilterGroup[] } {
  const group: FilterGroup & { or: FilterGroup[] } = { where: [], nested: [], or: [] };
  if (!isPlainObject(raw)) {
    problems.push(`${label} must be an object of field to value, e.g. where[isActive]=true`);
    return group;
  }
  if (Object.keys(raw).length > MAX_NAMES) {
    problems.push(`${label} must not name more than ${MAX_NAMES} fields`);
    return group;
  }
  for (const [key, value] of Object.entries(raw)) {
    if (key === 'tenantId') {
      // The tenant always comes from the token: the same value is redundant, another is forbidden.
      if (typeof value !== 'string' || value.toLowerCase() !== tenantId.toLowerCase()) throw forbidden();
      continue;
    }
    if (key === OR_KEY && !resource.filters.has(OR_KEY)) {
      if (top) group.or = parseOrGroups(resource, value, `${label}.${OR_KEY}`, tenantId, problems);
      else problems.push(`${label}.${OR_KEY} is not allowed: OR groups are one level deep`);
      continue;
    }
    const filter = resource.filters.get(key);
    if (filter) {
      group.where.push(...parseConditions(filter, key, value, `${label}.${key}`, problems));
      continue;
    }
    const relation = resource.relations.get(key);
    if (relation) {
      const nested = parseRelated(relation, value, `${label}.${key}`, problems);
      if (nested) group.nested.push(nested);
      continue;
    }
    const relations = resource.relations.size ? `; relations: ${[...resource.relations.keys()].join(', ')}` : '';
    problems.push(`${label}: '${key}' is not filterable; filterable: ${[...resource.filters.keys()].join(', ')}${relations}`);
  }
  return group;
}

/** where[relation][field]…: conditions on the related records, one of which must match them all. */
function parseRelated(relation: CompiledRelation, raw: unknown, label: string, problems: string[]): NestedFilter | undefined {
  if (!isPlainObject(raw)) {
    problems.push(`${label} must be an object of ${relation.target.name} fields, e.g. where[${relation.name}][id]=…`);
    return undefined;
  }
  // An empty condition would match everything: say so rather than widen the list silently.
  const size = Object.keys(raw).length;
  if (size === 0 || size > MAX_NAMES) {
    problems.push(size ? `${label} must not name more than ${MAX_NAMES} fields` : `${label} should not be empty`);
    return undefined;
  }
  const conditions: Condition[] = [];
  for (const [field, value] of Object.entries(raw)) {
    const filter = relation.target.filters.get(field);
    if (!filter) problems.push(`${label}: '${field}' is not filterable; filterable: ${[...relation.target.filters.keys()].join(', ')}`);
    else conditions.push(...parseConditions(filter, field, value, `${label}.${field}`, problems));
  }
  return conditions.length ? { relation, conditions } : undefined;
}

/**
 * where[or][0][…]…where[or][n][…] (a query string: an array, or an object of the indexes when
 * they skip or run past the parser's array limit) or "or": [{…}, …] (a body): groups of which at
 * least one must hold.
 */
function parseOrGroups(resource: CompiledResource, raw: unknown, label: string, tenantId: string, problems: string[]): FilterGroup[] {
  const indexed = isPlainObject(raw) && Object.keys(raw).every((key) => /^\d+$/.test(key));
  const groups = Array.isArray(raw) ? raw : indexed ? Object.values(raw as Record<string, unknown>) : undefined;
  if (!groups) {
    problems.push(`${label} must be a list of groups, e.g. where[or][0][name]=a&where[or][1][name]=b`);
    return [];
  }
  if (!groups.length || groups.length > MAX_OR_GROUPS) {
    problems.push(groups.length ? `${label} must not hold more than ${MAX_OR_GROUPS} groups` : `${label} should not be empty`);
    return [];
  }
  return groups.map((group, i) => {
    const parsed = parseGroup(resource, group, `${label}.${i}`, tenantId, problems, false);
    if (isPlainObject(group) && !Object.keys(group).length) problems.push(`${label}.${i} should not be empty`);
    return { where: parsed.where, nested: parsed.nested };
  });
}

/** where[…] as the client sent it: the conditions, the related ones and the OR groups. */
export function parseWhere(resource: CompiledResource, raw: unknown, tenantId: string, problems: string[]): FilterGroup & { or: FilterGroup[] } {
  return parseGroup(resource, raw, 'where', tenantId, problems, true);
}
