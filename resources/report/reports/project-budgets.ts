// project-budgets: each project of the tenant (organizationId and projectId[] narrow the list)
// with what was spent against its budget: hours tracked on it for an hours budget, or the cost
// (Σ seconds × the logging employee's bill rate / 3600) for a cost budget. startDate, endDate and
// employeeId[] narrow what counts as spent; with no range, everything ever tracked counts. Its
// rows are each employee's part of a project's time. organizationId and projectId[] only choose
// the projects: a project's spent is all time logged on it, whatever organization a log names.
//
// One statement, each step a single pass (hash joins and one GROUP BY each), so the cost grows
// with the logs and projects, not with their product:
//   with clipped as (…), pieces as (…)                           -- time-source.ts
//   , spent as (select projectId, employeeId, grouping(employeeId) as level, Σ… from pieces
//               group by grouping sets ((projectId, employeeId), (projectId)))
//   , parts as (select projectId, json_agg(employee row order by name) as rows
//               from spent left join employee … where level = 0 group by projectId)
//   select project figures from organization_project op join organization og …
//     left join spent sp on sp.projectId = op.id and sp.level = 1
//     left join parts pt on pt.projectId = op.id
//   where <tenant scope, organizationId, projectId[]> order by op.name, op.id
import type { ReportDefinition } from '../definition.js';
import { allTime } from '../period.js';
import { MONEY_PERMISSION } from '../permissions.js';
import { answerSchema, object, TIME_FIGURE_SCHEMAS } from '../schemas.js';
import { rowsOf } from '../statement.js';
import { piecesSource } from '../time-source.js';

const FIGURES = ['projectId', 'projectName', 'organizationId', 'budgetType', 'budget', 'currency', 'seconds', 'billableSeconds', 'hours', 'cost', 'spent', 'remaining', 'percentUsed', 'rows'];

/** GROUPING(employeeId) in the spent CTE: 0 for a project and employee, 1 for the project's sum. */
const EMPLOYEE_LEVEL = 0;
const PROJECT_LEVEL = 1;

const rounded = (description: string, nullable = false) => ({ type: 'number', nullable, description: `${description}, rounded to 2 decimals` });

function schema() {
  const project = object({
    projectId: { type: 'string', format: 'uuid' },
    projectName: { type: 'string' },
    organizationId: { type: 'string', format: 'uuid' },
    budgetType: { type: 'string', enum: ['hours', 'cost', null], nullable: true, description: 'A budget without a type is counted in hours' },
    budget: { type: 'number', nullable: true },
    currency: { type: 'string', description: "The project's currency, else its organization's (cost is not converted between currencies)" },
    ...TIME_FIGURE_SCHEMAS,
    hours: rounded('seconds / 3600'),
    cost: rounded("Σ seconds × the logging employee's billRateValue / 3600 (no rate counts as 0)"),
    spent: rounded('hours for an hours budget (or none), cost for a cost budget'),
    remaining: rounded('budget − spent; null without a budget', true),
    percentUsed: rounded('spent / budget × 100; null without a budget or with a budget of 0', true),
    rows: {
      type: 'array',
      description: "Each employee's part of the spent time (employees who logged nothing on the project are not listed)",
      items: object({
        employeeId: { type: 'string', format: 'uuid' },
        employeeName: { type: 'string', nullable: true },
        ...TIME_FIGURE_SCHEMAS,
        hours: rounded('seconds / 3600'),
        cost: rounded("seconds × the employee's billRateValue / 3600"),
      }),
    },
  }, 'One project');
  return answerSchema('project-budgets', ['project'], project, {
    total: object({ ...TIME_FIGURE_SCHEMAS, hours: rounded('seconds / 3600') }, 'Time of every listed project added up'),
  });
}

export const projectBudgets: ReportDefinition = {
  slug: 'project-budgets',
  name: 'Project budgets',
  description:
    'Each project with its budget (hours or cost), what was spent against it, what remains and the percentage used. ' +
    "Spent time is the tracked time on the project inside the range, of the employees asked for, whatever organization a log names " +
    "(organizationId and projectId choose the projects listed, not the logs); cost uses each logging employee's bill rate.",
  // Bill rates are employee data, budgets project data: a role must be able to read them.
  reads: ['employee', 'project'],
  permissions: [MONEY_PERMISSION],
  groupBy: ['project'],
  defaultGroupBy: 'project',
  period: allTime(),
  schema: schema(),
  async run(context) {
    const { db, caller, project, parameters } = context;
    // organizationId picks projects (below), not logs: a log may name another organization than its project's.
    const source = piecesSource({ ...context, parameters: { ...parameters, organizationId: undefined } }, { money: true });
    // The spent figures in the budget's unit, exact; rounded only when shown.
    const used = `case when op."budgetType" = 'cost' then coalesce(sp.cost, 0) / 3600 else coalesce(sp.seconds, 0)::numeric / 3600 end`;
    const projects = project.model
      .scoped(caller, db)
      .alias('op')
      .select('op.id as projectId', 'op.name as projectName', 'op.organizationId', 'op.budgetType')
      .select(db.raw(`op.budget::float8 as budget, coalesce(op.currency, og.currency) as currency,
        coalesce(sp.seconds, 0)::float8 as seconds, coalesce(sp.billable, 0)::float8 as "billableSeconds",
        round(coalesce(sp.seconds, 0)::numeric / 3600, 2)::float8 as hours,
        round(coalesce(sp.cost, 0) / 3600, 2)::float8 as cost,
        round(${used}, 2)::float8 as spent,
        case when op.budget is null then null else round(op.budget::numeric - ${used}, 2)::float8 end as remaining,
        case when op.budget is null or op.budget = 0 then null else round(${used} * 100 / op.budget::numeric, 2)::float8 end as "percentUsed",
        coalesce(sum(sp.seconds) over (), 0)::float8 as "totalSeconds",
        coalesce(sum(sp.billable) over (), 0)::float8 as "totalBillableSeconds",
        round(coalesce(sum(sp.seconds) over (), 0)::numeric / 3600, 2)::float8 as "totalHours"`))
      // Each employee's part, already summed by the spent CTE and gathered per project by parts.
      .select(db.raw(`coalesce(pt.rows, '[]'::json) as rows`))
      .join('organization as og', (on) => on.on('og.id', 'op.organizationId').andOn('og.tenantId', 'op.tenantId'))
      .leftJoin('spent as sp', (on) => on.on('sp.projectId', 'op.id').andOnVal('sp.level', '=', PROJECT_LEVEL))
      .leftJoin('parts as pt', 'pt.projectId', 'op.id')
      .orderBy([{ column: 'op.name' }, { column: 'op.id' }]);
    if (parameters.organizationId) projects.where('op.organizationId', parameters.organizationId);
    if (parameters.projectIds) projects.whereIn('op.id', parameters.projectIds);
    // Per project and employee, and per project: GROUPING() tells the two levels apart.
    const sql = `${source.sql}, spent as (
        select p."projectId", p."employeeId", grouping(p."employeeId") as level, sum(p.seconds) as seconds,
          coalesce(sum(p.seconds) filter (where p."isBillable"), 0) as billable,
          sum(p.seconds::numeric * coalesce(p.rate, 0)) as cost
        from pieces p where p."projectId" is not null
        group by grouping sets ((p."projectId", p."employeeId"), (p."projectId"))
      ), parts as (
        select sd."projectId", json_agg(json_build_object(
            'employeeId', sd."employeeId",
            'employeeName', case when e.id is null then null else e."firstName" || ' ' || e."lastName" end,
            'seconds', sd.seconds::float8,
            'billableSeconds', sd.billable::float8,
            'hours', round(sd.seconds::numeric / 3600, 2)::float8,
            'cost', round(sd.cost / 3600, 2)::float8
          ) order by e."firstName", e."lastName", sd."employeeId") as rows
        from spent sd left join employee e on e.id = sd."employeeId" and e."tenantId" = ?
        where sd.level = ?
        group by sd."projectId"
      ) ?`;
    const rows = rowsOf<Record<string, unknown>>(await db.raw(sql, [...source.bindings, caller.tenantId, EMPLOYEE_LEVEL, projects.toKnexQuery()] as any[]));
    const first = rows[0];
    return {
      groups: rows.map((row) => Object.fromEntries(FIGURES.map((f) => [f, row[f] ?? null]))),
      total: {
        seconds: first?.totalSeconds ?? 0,
        billableSeconds: first?.totalBillableSeconds ?? 0,
        hours: first?.totalHours ?? 0,
      },
    };
  },
};
