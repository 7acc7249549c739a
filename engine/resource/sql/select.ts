// The engine's reads as SQL text: one record by id, a page of a list, and the filter a list's
// count shares with its page: the caller's scope on every table touched (the rule of
// engine/resource/model.ts, which models apply to their queries), nested filters as EXISTS,
// search, date range, tags, written straight to text: a request's statement costs a few string joins, and the same
// shape of request always gives the same text (one prepared statement; a list by a range or of a
// page size other than the default runs unnamed instead: pageStatement).
import type { Caller } from '../../caller.js';
import { defaultTake, type CompiledResource } from '../compiled.js';
import type { FilterGroup, ListQuery } from '../list-query.js';
import { effectiveOrder, RANK_KEY } from '../cursor.js';
import { countLimit, PAGE_TOTAL_COLUMN } from '../count.js';
import type { TotalMark } from '../total-cache.js';
import { countColumns } from './kept-count.js';
import { conditionSql } from './conditions.js';
import { scopeSql } from './scope.js';
import { rankSql, searchSql } from './search.js';
import type { Statement } from './runner.js';
import { col, id, SqlText } from './text.js';
import { versionColumn } from './version.js';

/** `select "t"."a", "t"."b" …` of a resource's visible columns, made once per resource and reference. */
const selectLists = new WeakMap<CompiledResource, Map<string, string>>();

export function selectList(resource: CompiledResource, ref = resource.table, columns: readonly string[] = resource.visibleColumns): string {
  // A selection (select[]) is written each time; every visible column, once.
  if (columns !== resource.visibleColumns) return columns.map((c) => col(ref, c)).join(', ');
  let byRef = selectLists.get(resource);
  if (!byRef) selectLists.set(resource, (byRef = new Map()));
  let list = byRef.get(ref);
  if (list === undefined) byRef.set(ref, (list = resource.visibleColumns.map((c) => col(ref, c)).join(', ')));
  return list;
}

/** `exists (select 1 from target as alias … where <related to the outer row> and <scope>` — left open for more conditions. */
function openRelatedExists(sql: SqlText, resource: CompiledResource, relationName: string, caller: Caller, alias: string) {
  const relation = resource.relations.get(relationName)!;
  const target = relation.target;
  const table = resource.table;
  sql.sql(`exists (select 1 from ${id(target.table)} as ${id(alias)}`);
  if (relation.kind === 'belongsTo') sql.sql(` where ${col(alias, 'id')} = ${col(table, relation.via!)}`);
  else if (relation.kind === 'hasMany') sql.sql(` where ${col(alias, relation.via!)} = ${col(table, 'id')}`);
  else {
    const t = relation.through!;
    const link = `${alias}_j`;
    sql.sql(` inner join ${id(t.table)} as ${id(link)} on ${col(link, t.to)} = ${col(alias, 'id')} where ${col(link, t.from)} = ${col(table, 'id')}`);
  }
  sql.sql(' and ');
  return scopeSql(sql, target, caller, alias);
}

/**
 * A group's conditions, each after ` and `: the record's own, then one EXISTS per related filter
 * (`prefix` keeps the aliases of different groups apart).
 */
function groupSql(sql: SqlText, resource: CompiledResource, caller: Caller, group: FilterGroup, prefix: string): SqlText {
  const table = resource.table;
  for (const condition of group.where) conditionSql(sql.sql(' and '), col(table, condition.field), condition);
  group.nested.forEach((filter, i) => {
    const alias = `${prefix}${i}_${filter.relation.name}`;
    sql.sql(' and ');
    openRelatedExists(sql, resource, filter.relation.name, caller, alias);
    for (const condition of filter.conditions) conditionSql(sql.sql(' and '), col(alias, condition.field), condition);
    sql.sql(')');
  });
  return sql;
}

/** ` where …`: everything of a list but paging and order, shared by its page and its count. */
export function whereSql(sql: SqlText, resource: CompiledResource, caller: Caller, query: ListQuery): SqlText {
  const table = resource.table;
  sql.sql(' where ');
  scopeSql(sql, resource, caller, table, query.withDeleted);
  groupSql(sql, resource, caller, query, 'r');
  if (query.or.length) {
    // Each group opens with `true` so that its conditions all follow an ` and `.
    sql.sql(' and (');
    query.or.forEach((group, g) => groupSql(sql.sql(g ? ' or (true' : '(true'), resource, caller, group, `o${g}_`).sql(')'));
    sql.sql(')');
  }
  if (query.search) searchSql(sql, resource, query.search);
  if (resource.dateRange) {
    if (query.startDate) sql.sql(` and ${col(table, resource.dateRange)} >= `).value(query.startDate);
    if (query.endDate) sql.sql(` and ${col(table, resource.dateRange)} ${query.endDate.exclusive ? '<' : '<='} `).value(query.endDate.at);
  }
  if (query.tags?.length && resource.tagRelation) {
    // Same path as where[tags][id]: a link to another tenant's tag (a corrupt row) never matches.
    const alias = `filtered_${resource.tagRelation.name}`;
    sql.sql(' and ');
    openRelatedExists(sql, resource, resource.tagRelation.name, caller, alias);
    sql.sql(` and ${col(alias, 'id')} = any(`).value(query.tags).sql('))');
  }
  return sql;
}

/**
 * ` order by …`: the fields asked for (createdAt DESC by default), then the id to break ties, so
 * pages never overlap or skip a record. PostgreSQL's default places empty values last going up,
 * first going down; the keyset below follows the same rule.
 */
function orderSql(resource: CompiledResource, query: ListQuery, term: OrderTerm): string {
  return ` order by ${effectiveOrder(query).map(([field, direction]) => `${term(field)} ${direction.toLowerCase()}`).join(', ')}`;
}

/** An order field as SQL: its column, or the rank of a fulltext search. */
type OrderTerm = (field: string) => string;

/**
 * The page's order terms. A ranked search's rank reads the search text at the statement's first
 * placeholder (pushed here, before anything else is written): the select list, the keyset and the
 * order then write the same expression, which PostgreSQL computes once per row.
 */
function orderTerms(sql: SqlText, resource: CompiledResource, query: ListQuery): OrderTerm {
  const column = (field: string) => col(resource.table, field);
  if (!query.rank || !query.search) return column;
  sql.values.push(query.search);
  const rank = rankSql(resource, `$${sql.values.length}`);
  return (field) => (field === RANK_KEY ? rank : column(field));
}

/** Column alias of the i-th order value, read for the next cursor. */
export const orderKeyAlias = (i: number) => `@k${i}`;

const isTime = (resource: CompiledResource, field: string) => {
  const type = resource.fields.get(field)?.definition.type;
  return type === 'date' || type === 'timestamp';
};

/**
 * What a page reads beside its columns for the next cursor: a date or time order field as text
 * (the driver's Date would drop its microseconds), another only when the columns leave it out
 * (select[]); the driver gives every other type back exactly.
 */
function orderKeys(resource: CompiledResource, query: ListQuery, columns: readonly string[], term: OrderTerm): string {
  return effectiveOrder(query)
    .map(([field], i) => {
      if (isTime(resource, field)) return `, ${term(field)}::text as ${id(orderKeyAlias(i))}`;
      // A rank (real) as the text of its exact double: whatever extra_float_digits says, it reads back as the same real.
      if (field === RANK_KEY) return `, ${term(field)}::float8::text as ${id(orderKeyAlias(i))}`;
      return columns.includes(field) ? '' : `, ${term(field)} as ${id(orderKeyAlias(i))}`;
    })
    .join('');
}

/** The last row's order values, as the cursor keeps them: from the aliases of orderKeys, or the row's own fields. */
export function orderValuesOf(resource: CompiledResource, query: ListQuery, row: Record<string, unknown>): unknown[] {
  return effectiveOrder(query).map(([field], i) => (orderKeyAlias(i) in row ? row[orderKeyAlias(i)] : row[field]));
}

/** A field no record leaves empty: the id, a search's rank, the base columns but a nullable organizationId, a required field. */
function neverEmpty(resource: CompiledResource, field: string): boolean {
  const compiled = resource.fields.get(field);
  return field === 'id' || field === RANK_KEY || (!!compiled && ((compiled.base && !compiled.nullableBase) || compiled.definition.required === true));
}

/**
 * ` and …`: the rows after the one whose order values are `after`, in the order of the page.
 * When every order field is never empty and all go one way, one row comparison, which an index
 * on those fields answers as a range ((createdAt, id) < ($2, $3) for the default order): a page
 * deep in the list costs what the first one does. Otherwise: after on the first field, or equal
 * on it and after on the second, and so on to the id, with empty values where the order puts them;
 * a bound on the first field keeps that to a range of its index where the values allow one.
 */
function keysetSql(sql: SqlText, resource: CompiledResource, query: ListQuery, after: unknown[], term: OrderTerm): SqlText {
  const order = effectiveOrder(query);
  const [[first, direction]] = order;
  const down = direction === 'DESC';
  if (order.every(([field, d]) => d === direction && neverEmpty(resource, field)) && after.every((value) => value !== null)) {
    sql.sql(` and (${order.map(([field]) => term(field)).join(', ')}) ${down ? '<' : '>'} (`);
    after.forEach((value, i) => sql.sql(i ? ', ' : '').value(value));
    return sql.sql(')');
  }
  if (after[0] !== null && (down || neverEmpty(resource, first))) sql.sql(` and ${term(first)} ${down ? '<=' : '>='} `).value(after[0]);
  sql.sql(' and (');
  order.forEach(([field, direction], i) => {
    sql.sql(i ? ' or (' : '');
    for (let j = 0; j < i; j++) {
      const column = term(order[j][0]);
      if (after[j] === null) sql.sql(`${column} is null and `);
      else sql.sql(`${column} = `).value(after[j]).sql(' and ');
    }
    const column = term(field);
    const value = after[i];
    // The id is never empty; another field may be.
    if (field === 'id') sql.sql(`${column} ${direction === 'ASC' ? '>' : '<'} `).value(value);
    else if (direction === 'ASC') {
      if (value === null) sql.sql('false');
      else sql.sql(`(${column} > `).value(value).sql(` or ${column} is null)`);
    } else if (value === null) sql.sql(`${column} is not null`);
    else sql.sql(`${column} < `).value(value);
    if (i) sql.sql(')');
  });
  return sql.sql(')');
}

const RANGE_OPERATORS = new Set(['lt', 'lte', 'gt', 'gte', 'between']);
const hasRange = (group: FilterGroup) => group.where.some((c) => RANGE_OPERATORS.has(c.op)) || group.nested.some((n) => n.conditions.some((c) => RANGE_OPERATORS.has(c.op)));

/**
 * A list filtered by a range (an operator or a date range) is planned for its own values, not
 * by a prepared statement's generic plan: how many rows a range holds depends on its bounds, and
 * the generic plan, made without them, takes it for a narrow one. It then reads the range's index
 * and sorts every match where the order's index would stop after a page (at 10,000 employees a
 * page and count of `billRateValue between 40 and 60` ran at half the rate planned either way).
 * Equalities, sets and patterns keep their prepared plans: a generic plan serves them as well.
 */
function plannedPerValues(query: ListQuery): boolean {
  return Boolean(query.startDate || query.endDate) || hasRange(query) || query.or.some(hasRange);
}

/** The column of a page's rows that holds its list's count (pageStatement's `count`), dropped from the answer. */
export const TOTAL_COLUMN = PAGE_TOTAL_COLUMN;

/** A count asked of pageStatement: of every match, or of at most `bound` (count.ts: countBound). */
export interface PageCount {
  bound: number | undefined;
  /** The table's mark is read beside the count, and the count runs only when it moved (total-cache.ts). */
  mark?: TotalMark;
}

/** Appends `, <expression> as "name"` columns correlated to the row at `ref` (sql/relations.ts). */
export type RelatedColumns = (sql: SqlText, ref: string) => SqlText;

/** The page's alias in the outer select that adds its related columns. */
const PAGE = '@page';

/**
 * One page of a list: `columns` its visible columns, or those a selection reads (selection.ts),
 * then the order values the cursor needs (orderKeys). `oneMore`: a row past the page is read,
 * whether it is there saying whether more follow (where no exact total tells). After a cursor
 * (`query.after`), the keyset replaces the offset. `count`: the list's matches counted in the same
 * statement (TOTAL_COLUMN), as count.ts counts them alone. `related`: columns read for each row
 * of the page (its relations, sql/relations.ts), after the page is cut: an outer select over it,
 * so that rows skipped by an offset or past the page cost nothing.
 */
export function pageStatement(resource: CompiledResource, caller: Caller, query: ListQuery, columns: readonly string[] = resource.visibleColumns, oneMore = true, count?: PageCount, related?: RelatedColumns): Statement {
  const sql = new SqlText();
  // A subquery with a LIMIT is never merged into its outer select, whose rows keep its order.
  if (related) related(sql.sql(`select ${id(PAGE)}.*`), PAGE).sql(' from (');
  const term = orderTerms(sql, resource, query);
  sql.sql(`select ${selectList(resource, resource.table, columns)}${orderKeys(resource, query, columns, term)}`);
  if (count) {
    // The list's count in the page's own round trip: an uncorrelated subquery, run once (an
    // InitPlan), its value on every row. Its table name shadows the page's: its own filters apply.
    countColumns(sql.sql(', '), count.mark, TOTAL_COLUMN, (s) => {
      whereSql(s.sql(`(select count(*) from (select 1 from ${id(resource.table)}`), resource, caller, query);
      s.sql(`${countLimit(count.bound)}) as "matches")`);
    });
  }
  sql.sql(` from ${id(resource.table)}`);
  whereSql(sql, resource, caller, query);
  if (query.after) keysetSql(sql, resource, query, query.after, term);
  // A bound LIMIT is invisible to a prepared statement's generic plan, which is then made for a
  // tenth of the table (sorting every match where an index walk stops after a page). The default
  // page size is written into the statement (the resource's integer); any other take is bound and
  // the statement runs unnamed, planned for its values, so that a client varying take cannot fill
  // the per-process cap of prepared-statement names (runner.ts) with texts. No offset on a first
  // page; a skip is bound (any number).
  const limit = oneMore ? query.take + 1 : query.take;
  const usualSize = query.take === defaultTake(resource);
  sql.sql(orderSql(resource, query, term));
  if (usualSize) sql.sql(` limit ${checkedInteger(limit)}`);
  else sql.sql(' limit ').value(limit);
  if (query.skip) sql.sql(' offset ').value(query.skip);
  if (related) sql.sql(`) as ${id(PAGE)}`);
  return { ...sql.statement(), ...(!usualSize || plannedPerValues(query) ? { once: true } : {}) };
}

const checkedInteger = (n: number) => {
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`a page size must be a positive integer, got ${n}`);
  return n;
};

/** Every match of a list, as `select 1 …`: what its count (engine/resource/count.ts) counts; planned per use as its page is. */
export function matchesStatement(resource: CompiledResource, caller: Caller, query: ListQuery): Statement {
  const sql = new SqlText().sql(`select 1 from ${id(resource.table)}`);
  return { ...whereSql(sql, resource, caller, query).statement(), ...(plannedPerValues(query) ? { once: true } : {}) };
}

/** One record by id, inside the caller's scope (deleted ones too, `withDeleted`), its version (version.ts) and the `related` columns. */
export function readStatement(resource: CompiledResource, caller: Caller, recordId: string, columns: readonly string[] = resource.visibleColumns, withDeleted = false, related?: RelatedColumns): Statement {
  const sql = new SqlText().sql(`select ${selectList(resource, resource.table, columns)}${versionColumn(resource)}`);
  related?.(sql, resource.table);
  sql.sql(` from ${id(resource.table)} where ${col(resource.table, 'id')} = `).value(recordId).sql(' and ');
  return scopeSql(sql, resource, caller, resource.table, withDeleted).statement();
}

/** The ids of at most `limit` records in the caller's scope (any order). */
export function someIdsStatement(resource: CompiledResource, caller: Caller, limit: number): Statement {
  const sql = new SqlText().sql(`select ${col(resource.table, 'id')} from ${id(resource.table)} where `);
  return scopeSql(sql, resource, caller).sql(' limit ').value(limit).statement();
}

/** A keyset batch: the caller's records after the id `after` (from the first without it), `limit` of them, in id order. */
export function keysetStatement(resource: CompiledResource, caller: Caller, after: string | undefined, limit: number): Statement {
  const table = resource.table;
  const sql = new SqlText().sql(`select ${selectList(resource)} from ${id(table)} where `);
  scopeSql(sql, resource, caller);
  if (after !== undefined) sql.sql(` and ${col(table, 'id')} > `).value(after);
  return sql.sql(` order by ${col(table, 'id')} asc limit `).value(limit).statement();
}
