// GET /api/employee/{id}/statistics: the figures are time logs summed up, so the caller needs the
// time-log read permission first (a role refused /api/time-log learns nothing here); then it must
// be able to read the employee record (its read permission, tenant and owner rule), or be an
// EMPLOYEE asking for its own employee record, which its role cannot read otherwise. Another tenant's employee, or another employee for an EMPLOYEE, is
// a 404, as a read of the record would be.
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { ANY_AUTHENTICATED, type Caller } from '../../engine/caller.js';
import { badRequest, forbidden, notFound } from '../../engine/errors.js';
import { callerOf, parameterLabel, parseQueryString } from '../../engine/http/context.js';
import { errorResponses, idParameter, jsonResponse, ref } from '../../engine/openapi/fragments.js';
import { checkId } from '../../engine/resource/service.js';
import type { Route } from '../../engine/route.js';
import { STATISTICS_SCHEMA } from './openapi.js';
import { employeeStatistics, type StatisticsSources } from './statistics-query.js';

/** The clock the months are counted from; tests may fix it. Never taken from the request. */
export type Clock = () => Date;

const hasPermission = (caller: Caller, permission: string) => permission === ANY_AUTHENTICATED || caller.permissions.has(permission);

/** The route takes no query parameters: any one is refused, not ignored. */
function refuseParameters(ctx: Context) {
  const names = Object.keys(parseQueryString(ctx.querystring));
  if (names.length) throw badRequest(names.map((name) => `${parameterLabel(name)} is not a supported parameter of ${ctx.path}; it takes none`));
}

const DESCRIPTION =
  "Time tracked by one employee of the caller's tenant, computed in one query. Running time logs add no seconds " +
  'but count in timeLogCount; months are UTC and counted from the server\'s clock. An employee without time logs ' +
  'answers zeros. Needs the time-log read permission (TIME_TRACKER), and either the employee read permission (the ' +
  "owner rule applies) or the EMPLOYEE role asking for its own employee record; another tenant's employee, or another employee for an EMPLOYEE, is a 404. " +
  'No query parameters are taken: any one is a 400.';

/** The route, under the employee's canonical path: /api/employee/:id/statistics. */
export function statisticsRoute(db: Knex, sources: StatisticsSources, now: Clock): Route {
  return {
    method: 'GET',
    path: `/api/${sources.employee.paths[0]}/:id/statistics`,
    // Two permissions, the second with the owner rule's way round it: checked here, not declared.
    async handler(ctx) {
      const caller = callerOf(ctx);
      if (!hasPermission(caller, sources.timeLog.permissions.read)) throw forbidden();
      const permitted = hasPermission(caller, sources.employee.permissions.read);
      // The owner rule (config/roles.yaml) on employee records: the owner-scoped role sees its own.
      const rule = sources.employee.ownerRule;
      const ownsOnly = !permitted && rule !== undefined && caller.role === rule.role;
      if (!permitted && !ownsOnly) throw forbidden();
      refuseParameters(ctx);
      const id = checkId(ctx.params.id);
      // Without the permission only its own record: said here, not left to the employee's owner
      // field alone (the query's scope applies the owner rule as well).
      if (ownsOnly && id !== caller.claims[rule.claim]) throw notFound();
      const statistics = await employeeStatistics(db, sources, caller, id, now());
      if (!statistics) throw notFound();
      ctx.body = statistics;
    },
    docs: {
      tags: [sources.employee.name],
      operationId: 'getEmployeeStatistics',
      summary: "An employee's tracked time: totals, tasks assigned and the last 12 months",
      description: DESCRIPTION,
      parameters: [idParameter()],
      responses: {
        '200': jsonResponse("The employee's statistics", ref(STATISTICS_SCHEMA)),
        ...errorResponses(400, 401, 403, 404, 500, 503),
      },
    },
  };
}
