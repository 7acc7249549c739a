// List parameters (query string or search body) → a typed ListQuery, checked against the
// resource's compiled whitelists. Every problem is collected; any problem is a 400 naming it.
import { badRequest, forbidden } from '../errors.js';
import { parameterLabel } from '../http/context.js';
import { TENANT_PARAMETER } from '../http/tenant-named.js';
import { isPlainObject } from '../objects.js';
import { defaultTake, MAX_RELATION_DEPTH, type CompiledResource } from './compiled.js';
import { isDateOnly, isDateString, LATEST_INSTANT, toTimestamp, UUID_PATTERN } from './fields.js';
import { parseWhere, type FilterGroup } from './where.js';
import { parseSelection, type Selection } from './selection.js';
import { MAX_CURSOR_LENGTH } from './cursor.js';

export type Direction = 'ASC' | 'DESC';
export type { FilterGroup, NestedFilter } from './where.js';

export interface ListQuery extends FilterGroup {
  take: number;
  skip: number;
  order: Array<[string, Direction]>;
  /** Groups of which at least one must hold (where[or]), beside the conditions above. */
  or: FilterGroup[];
  /** select[]: the fields answered (selection.ts); every visible one when absent. */
  select?: Selection;
  /** cursor: continue after the item it names (cursor.ts); checked by the service, which sets `after`. */
  cursor?: string;
  /** The order values of the item a cursor names: the page starts after it. */
  after?: unknown[];
  /** count=none (or Prefer: count=none): no count; total is a lower bound (docs/query-language.md). */
  count?: 'none';
  relations: string[];
  search?: string;
  /** Ordered by how well the fulltext search matches (no order given): see effectiveOrder. */
  rank?: boolean;
  startDate?: string;
  /** Exclusive when the client gave a date only: the whole day is included. */
  endDate?: { at: string; exclusive: boolean };
  tags?: string[];
  /** withDeleted=true on a softDelete resource: deleted records are listed too (the route checks the permission). */
  withDeleted?: boolean;
}

export const MAX_SEARCH_LENGTH = 200;
const MAX_SKIP = 1_000_000_000;
const DAY_MS = 86_400_000;

/** More names or keys than any resource has: refused before each is looked at. */
export const MAX_NAMES = 50;

/** The sort directions order[field] takes (TypeORM's spellings; the OpenAPI enum is this list). */
export const ORDER_DIRECTIONS = ['ASC', 'DESC', 'asc', 'desc'] as const;

/** The parameters a resource accepts (compiled at start-up). */
export const supportedParameters = (resource: CompiledResource): string[] => [...resource.listParameters];

/**
 * relations[]=a, relations[0]=a, a JSON array and the comma-separated relations=a,b all become
 * ['a', 'b']; relations= names none. A name is taken as written: a blank one, or one with blanks
 * around it, is not a relation (the document's enum says the same). Exported for modules with a
 * relation whitelist of their own, so that they take the same spellings.
 */
export function relationNames(raw: unknown, problems: string[], label = 'relations', what = 'relations'): string[] {
  let values: unknown[];
  // relations[0]=a reaches here as an array; a named key (relations[x]=a, or an object in a body) is not a list.
  if (typeof raw === 'string') values = raw === '' ? [] : raw.split(',');
  else if (Array.isArray(raw)) values = raw;
  else {
    problems.push(`${label} must be an array of strings`);
    return [];
  }
  if (!values.every((value) => typeof value === 'string')) {
    problems.push(`${label} must be an array of strings`);
    return [];
  }
  // Repeats of one name count once (a query string holds at most MAX_QUERY_VALUES values anyway).
  const names = [...new Set(values as string[])];
  if (names.length > MAX_NAMES) {
    problems.push(`${label} must not name more than ${MAX_NAMES} ${what}`);
    return [];
  }
  return names;
}

/**
 * select[]=a&select[]=user.email (also select=a,b, a JSON array): the fields answered. A relation
 * it names is loaded as if relations[] named it. undefined when select is not given.
 */
export function parseSelect(resource: CompiledResource, raw: unknown, relations: string[], problems: string[]): Selection | undefined {
  if (raw === undefined) return undefined;
  const selection = parseSelection(resource, relationNames(raw, problems, 'select', 'fields'), problems);
  for (const path of selection?.keys() ?? []) if (path && !relations.includes(path)) relations.push(path);
  return selection;
}

/** The relation names that make an accepted path after a known one ('' is the resource itself). */
function allowedAfter(resource: CompiledResource, prefix: string): string {
  const depth = prefix ? prefix.split('.').length : 0;
  const names = [...resource.relationPaths]
    .map((path) => path.split('.'))
    .filter((parts) => parts.length === depth + 1 && parts.slice(0, depth).join('.') === prefix)
    .map((parts) => parts[depth]);
  return names.length ? names.join(', ') : 'none';
}

/** Checks relation paths against the resource's whitelist (dot notation, depth ≤ 3). */
export function parseRelations(resource: CompiledResource, raw: unknown, problems: string[]): string[] {
  if (raw === undefined) return [];
  const names = relationNames(raw, problems);
  for (const name of names) {
    const parts = name.split('.');
    if (parts.length > MAX_RELATION_DEPTH) {
      problems.push(`relations: '${name}' is deeper than ${MAX_RELATION_DEPTH} levels`);
    } else if (!resource.relationPaths.has(name)) {
      const known = parts.findIndex((_, i) => !resource.relationPaths.has(parts.slice(0, i + 1).join('.')));
      const prefix = parts.slice(0, known).join('.');
      problems.push(
        prefix
          ? `relations: '${name}' is not allowed; allowed after '${prefix}': ${allowedAfter(resource, prefix)}`
          : `relations: '${name}' is not allowed; allowed: ${allowedAfter(resource, '')}`,
      );
    }
  }
  return names;
}

/**
 * take and skip: an integer (a digit string from a query, a number from a body). A huge digit
 * string is still an integer, so it is clamped like any large value rather than refused.
 */
function integerParameter(name: string, raw: unknown, min: number, problems: string[]): number | undefined {
  const text = typeof raw === 'string' ? raw.trim() : '';
  const n =
    typeof raw === 'number' ? (Number.isInteger(raw) ? Math.max(Math.min(raw, Number.MAX_SAFE_INTEGER), Number.MIN_SAFE_INTEGER) : NaN)
    : /^\d+$/.test(text) ? Math.min(Number(text), Number.MAX_SAFE_INTEGER)
    : /^-\d+$/.test(text) ? Math.max(Number(text), Number.MIN_SAFE_INTEGER)
    : NaN;
  if (!Number.isSafeInteger(n)) {
    problems.push(`${name} must be an integer number`);
    return undefined;
  }
  if (n < min) {
    problems.push(`${name} must not be less than ${min}`);
    return undefined;
  }
  return n;
}

function parseOrder(resource: CompiledResource, raw: unknown, problems: string[]): Array<[string, Direction]> {
  if (!isPlainObject(raw)) {
    problems.push('order must be an object of field to ASC or DESC, e.g. order[createdAt]=DESC');
    return [];
  }
  if (Object.keys(raw).length > MAX_NAMES) {
    problems.push(`order must not name more than ${MAX_NAMES} fields`);
    return [];
  }
  const order: Array<[string, Direction]> = [];
  for (const [field, direction] of Object.entries(raw)) {
    if (!resource.sortable.has(field)) {
      problems.push(`order: '${field}' is not sortable; sortable: ${[...resource.sortable].join(', ')}`);
      continue;
    }
    if (!(ORDER_DIRECTIONS as readonly unknown[]).includes(direction)) problems.push(`order.${field} must be one of the following values: ASC, DESC`);
    else order.push([field, (direction as string).toUpperCase() as Direction]);
  }
  return order;
}

/** undefined when the parameter was repeated or nested (the problem is recorded once, here). */
function single(label: string, raw: unknown, problems: string[]): unknown {
  if (Array.isArray(raw) || isPlainObject(raw)) {
    problems.push(`${label} must be a single value`);
    return undefined;
  }
  return raw;
}

function parseDate(name: string, raw: unknown, problems: string[]): string | undefined {
  const v = single(name, raw, problems);
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !isDateString(v)) {
    problems.push(`${name} must be a valid ISO 8601 date string`);
    return undefined;
  }
  return v;
}

/** A date-only end means "to the end of that day": the next midnight, exclusive (none after 9999-12-31). */
function endBound(end: string): ListQuery['endDate'] {
  const at = toTimestamp(end);
  if (!isDateOnly(end)) return { at, exclusive: false };
  const next = Date.parse(at) + DAY_MS;
  return next > LATEST_INSTANT ? undefined : { at: new Date(next).toISOString(), exclusive: true };
}

function parseTags(raw: unknown, problems: string[]): string[] {
  // tags[0]=… reaches here as an array; a named key (tags[x]=…) is not a list, and its value no tag id.
  const values = typeof raw === 'string' ? [raw] : Array.isArray(raw) ? raw : [raw];
  const ids: string[] = [];
  values.forEach((v, i) => {
    if (typeof v === 'string' && UUID_PATTERN.test(v)) ids.push(v.toLowerCase());
    else problems.push(`tags.${i} must be a UUID`);
  });
  return ids;
}

/** withDeleted=true|false (a boolean in a search body); one value. */
export function parseWithDeleted(raw: unknown, problems: string[]): boolean | undefined {
  const value = single('withDeleted', raw, problems);
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  problems.push('withDeleted must be true or false');
  return undefined;
}

/**
 * @param input the parsed query string, or the search body (already unwrapped from findInput)
 * @param tenantId the caller's tenant: a where[tenantId] naming another tenant is a 403
 */
export function parseListQuery(resource: CompiledResource, input: Record<string, unknown>, tenantId: string): ListQuery {
  const problems: string[] = [];
  const supported = resource.listParameters;
  for (const key of Object.keys(input)) {
    if (key === TENANT_PARAMETER) {
      // A search body's tenantId (a query string's is checked and taken out with the token): the
      // caller's own is ignored, any other value is forbidden.
      if (typeof input[key] !== 'string' || (input[key] as string).toLowerCase() !== tenantId.toLowerCase()) throw forbidden();
    } else if (!supported.has(key)) {
      problems.push(`${parameterLabel(key)} is not a supported list parameter of ${resource.name}; supported: ${[...supported].join(', ')}`);
    }
  }
  // A resource whose own maximum is below the default page size gets its maximum by default.
  const query: ListQuery = { take: defaultTake(resource), skip: 0, order: [], where: [], nested: [], or: [], relations: [] };
  const take = input.take === undefined ? undefined : single('take', input.take, problems);
  if (take !== undefined) {
    const n = integerParameter('take', take, 1, problems);
    if (n !== undefined) query.take = Math.min(n, resource.maxTake);
  }
  const skip = input.skip === undefined ? undefined : single('skip', input.skip, problems);
  if (skip !== undefined) {
    const n = integerParameter('skip', skip, 0, problems);
    if (n !== undefined) query.skip = Math.min(n, MAX_SKIP);
  }
  if (input.order !== undefined) query.order = parseOrder(resource, input.order, problems);
  if (input.where !== undefined) Object.assign(query, parseWhere(resource, input.where, tenantId, problems));
  query.relations = parseRelations(resource, input.relations, problems);
  query.select = parseSelect(resource, input.select, query.relations, problems);
  if (input.cursor !== undefined) {
    const cursor = single('cursor', input.cursor, problems);
    if (typeof cursor !== 'string' || cursor === '') problems.push('cursor must be a non-empty string: the nextCursor of the page before');
    else if (cursor.length > MAX_CURSOR_LENGTH) problems.push(`cursor must be shorter than or equal to ${MAX_CURSOR_LENGTH} characters`);
    else query.cursor = cursor;
    if (input.skip !== undefined) problems.push('cursor and skip must not be sent together: a cursor page starts after the item the cursor names');
  }
  if (input.count !== undefined) {
    const count = single('count', input.count, problems);
    if (count === 'none') query.count = count;
    else problems.push('count must be none (leave it out for the total)');
  }
  if (input.search !== undefined && supported.has('search')) {
    const search = single('search', input.search, problems);
    if (typeof search !== 'string' && search !== undefined) problems.push('search must be a string');
    else if (typeof search === 'string' && search.length > MAX_SEARCH_LENGTH) problems.push(`search must be shorter than or equal to ${MAX_SEARCH_LENGTH} characters`);
    else if (search?.trim()) query.search = search.trim();
    // A fulltext search with no order asked for is ranked, best match first (cursor.ts: effectiveOrder).
    if (query.search && resource.searchModes.fulltext.length && !query.order.length) query.rank = true;
  }
  if (supported.has('startDate')) {
    const start = input.startDate === undefined ? undefined : parseDate('startDate', input.startDate, problems);
    const end = input.endDate === undefined ? undefined : parseDate('endDate', input.endDate, problems);
    if (start) query.startDate = toTimestamp(start);
    if (end) query.endDate = endBound(end);
    // Compared with the effective bounds: startDate=…T12:00Z&endDate=<same day> is a valid half day.
    if (query.startDate && query.endDate) {
      const from = Date.parse(query.startDate);
      const to = Date.parse(query.endDate.at);
      if (query.endDate.exclusive ? from >= to : from > to) problems.push('startDate must not be after endDate');
    }
  }
  if (input.tags !== undefined && supported.has('tags')) query.tags = parseTags(input.tags, problems);
  if (input.withDeleted !== undefined && supported.has('withDeleted')) query.withDeleted = parseWithDeleted(input.withDeleted, problems);
  if (problems.length) throw badRequest(problems);
  return query;
}
