// The best-SQL yardstick's statements: for each scenario, the SQL a PostgreSQL expert would write
// by hand to answer that request, in one round trip. The answer's JSON is built by PostgreSQL
// (json_agg over the page, relations as lateral subqueries), the total counted in the same
// statement by the service's own count policy (exact up to the threshold, past it the planner's
// estimate, through planned_rows() below), and one row more than the page read to tell whether
// more follow. Only the indexes the service's migrations create are used.
//
// Nothing here comes from the service: the routes parse their own requests (query string, body,
// cursor), so that the yardstick does the work any server answering these requests must do.

/** The estimate of an estimated count: the planner's rows for a filtered select (no rows read; volatile, as PostgreSQL runs EXPLAIN in no other function). */
export const PLANNED_ROWS_FUNCTION = `
create or replace function bench_planned_rows(query text) returns bigint language plpgsql volatile as $$
declare plan json;
begin
  execute 'explain (format json) ' || query into plan;
  return (plan -> 0 -> 'Plan' ->> 'Plan Rows')::bigint;
end $$`;

/** The employee's count policy (resources/employee.yaml: count: { estimated: 10000 }). */
export const COUNT_THRESHOLD = 10_000;

const q = (name: string) => `"${name}"`;
const EMPLOYEE = ['id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt', 'firstName', 'lastName', 'userId', 'startedWorkOn', 'endWork', 'billRateValue', 'billRateCurrency', 'payPeriod', 'isActive'];
const USER = ['id', 'tenantId', 'createdAt', 'updatedAt', 'email', 'firstName', 'lastName', 'name', 'roleId', 'isActive', 'isEmailVerified', 'imageUrl'];
const TAG = ['id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt', 'name', 'color', 'textColor', 'description', 'isSystem'];
const TIME_LOG = ['id', 'tenantId', 'organizationId', 'createdAt', 'updatedAt', 'createdById', 'updatedById', 'employeeId', 'startedAt', 'stoppedAt', 'duration', 'logType', 'source', 'description', 'reason', 'isBillable', 'projectId', 'taskId', 'timesheetId', 'organizationTeamId'];

/** `json_build_object('a', t."a", …)`: one row's answer, built by PostgreSQL. */
const objectOf = (alias: string, columns: string[]) => `json_build_object(${columns.map((c) => `'${c}', ${alias}.${q(c)}`).join(', ')})`;
const VERSION = (alias: string, salt: string) => `to_hex(hashtextextended('${salt}' || ${alias}.xmin::text, 0))`;

export type Order = Array<[column: string, direction: 'asc' | 'desc']>;
export const DEFAULT_ORDER: Order = [['createdAt', 'desc'], ['id', 'desc']];

export interface ListShape {
  /** Conditions on the employee `e` besides the tenant's ($1), with $2… for the values. */
  where: string[];
  order: Order;
  /** The answer's columns (id always among them). */
  columns?: string[];
  /** user and tags loaded on each item. */
  relations?: boolean;
  /** No total counted (count=none). */
  uncounted?: boolean;
  /** Rows keyset-after the cursor's values (the order's columns, in order), as $n, $n+1… */
  after?: boolean;
  offset?: boolean;
  /**
   * Planned for each request's values, not prepared once: how many rows a range matches depends
   * on its bounds, and a generic plan made without them takes the range for a narrow one (it reads
   * the range's index and sorts every match, where the order's index stops after one page).
   */
  planEach?: boolean;
}

/**
 * One list: the page (take + 1 rows) read once, its first `take` as the items' JSON, the last shown
 * item's order values (the next cursor's content) as a JSON array, whether more follow, and the
 * total by the count policy. Values: $1 tenant, then the conditions', then the cursor's, then the
 * offset; the page's size is written in.
 */
export function listStatement(shape: ListShape, valuesBefore: number, take: number): string {
  const tenantWhere = ['e."tenantId" = $1', ...shape.where];
  let next = valuesBefore + 1;
  const pageWhere = [...tenantWhere];
  if (shape.after) {
    const columns = shape.order.map(([c]) => `e.${q(c)}`).join(', ');
    const values = shape.order.map(() => `$${next++}`).join(', ');
    // Every direction is the same in the bench's orders: one row comparison is the keyset.
    pageWhere.push(`(${columns}) ${shape.order[0][1] === 'desc' ? '<' : '>'} (${values})`);
  }
  // The page's size written in: the planner sees it (a bound LIMIT gets a generic plan made for a tenth of the table).
  if (!Number.isSafeInteger(take) || take < 1) throw new Error(`take must be a positive integer, got ${take}`);
  const offset = shape.offset ? ` offset $${next++}` : '';
  const orderOn = (alias: string, reverse = false) =>
    shape.order.map(([c, d]) => `${alias}.${q(c)} ${reverse ? (d === 'desc' ? 'asc' : 'desc') : d}`).join(', ');
  const answerColumns = shape.columns ?? EMPLOYEE;
  const pageColumns = [...new Set([...answerColumns, ...shape.order.map(([c]) => c), ...(shape.relations ? ['userId'] : [])])];
  const relations = shape.relations
    ? `, 'user', (select ${objectOf('u', USER)} from "user" u where u.id = p."userId" and u."tenantId" = $1)` +
      `, 'tags', coalesce((select json_agg(${objectOf('t', TAG)}) from tag_employee te join tag t on t.id = te."tagId" where te."employeeId" = p.id and t."tenantId" = $1), '[]')`
    : '';
  const itemObject = shape.relations
    ? `json_build_object(${answerColumns.map((c) => `'${c}', p.${q(c)}`).join(', ')}${relations})`
    : `json_build_object(${answerColumns.map((c) => `'${c}', p.${q(c)}`).join(', ')})`;
  const total = shape.uncounted
    ? 'null::bigint as "total", null::bigint as "counted"'
    : // The count policy: exact up to the threshold; past it the planner's estimate of the filtered
      // select, never below what was counted (the same rule as the service's).
      `(select case when c.n > ${COUNT_THRESHOLD} then greatest(bench_planned_rows(format(${literalTemplate(tenantWhere)})), c.n) else c.n end from counted c) as "total",
       (select n from counted) as "counted"`;
  const counted = shape.uncounted ? '' : `, counted as materialized (select count(*) as n from (select 1 from employee e where ${tenantWhere.join(' and ')} limit ${COUNT_THRESHOLD + 1}) m)`;
  return `with page as materialized (
  select ${pageColumns.map((c) => `e.${q(c)}`).join(', ')} from employee e where ${pageWhere.join(' and ')} order by ${orderOn('e')} limit ${take + 1}${offset}
), shown as materialized (select * from page p order by ${orderOn('p')} limit ${take})${counted}
select coalesce((select json_agg(${itemObject} order by ${orderOn('p')}) from shown p), '[]')::text as "items",
  (select count(*) from page) > ${take} as "more",
  (select count(*) from shown) as "shown",
  (select json_build_array(${shape.order.map(([c]) => `p.${q(c)}${c === 'id' ? '' : '::text'}`).join(', ')}) from shown p order by ${orderOn('p', true)} limit 1)::text as "last",
  ${total}`;
}

/**
 * The filtered select as a format() call with every value a literal (%L), for EXPLAIN: the
 * planner estimates the rows of these values as it would plan them.
 */
function literalTemplate(where: string[]): string {
  const values: string[] = [];
  const text = `select 1 from employee e where ${where.join(' and ')}`.replace(/\$(\d+)/g, (_, n) => {
    values.push(`$${n}`);
    return '%L';
  });
  return [`'${text.replace(/'/g, "''")}'`, ...values].join(', ');
}

/** One employee by id, with its version (the ETag). $1 id, $2 tenant. */
export const employeeById = (salt: string) =>
  `select ${objectOf('e', EMPLOYEE)}::text as "body", ${VERSION('e', salt)} as "version" from employee e where e.id = $1 and e."tenantId" = $2`;

/**
 * A time log's create, its references (organization, employee) checked in the statement: no row
 * when one is missing. $1 organization, $2 employee, $3 startedAt, $4 stoppedAt, $5 logType,
 * $6 description, $7 the caller (creator), $8 tenant.
 */
export const createTimeLog = (salt: string) => `insert into time_log ("organizationId", "employeeId", "startedAt", "stoppedAt", "logType", "source", "description", "isBillable", "updatedById", "createdById", "tenantId")
select $1, $2, $3, $4, $5, 'WEB_TIMER', $6, false, $7, $7, $8
where exists (select 1 from organization o where o.id = $1 and o."tenantId" = $8) and exists (select 1 from employee e where e.id = $2 and e."tenantId" = $8)
returning ${objectOf('time_log', TIME_LOG)}::text as "body", ${VERSION('time_log', salt)} as "version"`;

/** A change of an employee's last name. $1 lastName, $2 id, $3 tenant. */
export const patchEmployee = (salt: string) => `update employee e set "lastName" = $1, "updatedAt" = current_timestamp where e.id = $2 and e."tenantId" = $3
returning ${objectOf('e', EMPLOYEE)}::text as "body", ${VERSION('e', salt)} as "version"`;
