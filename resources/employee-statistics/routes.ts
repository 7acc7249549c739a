// GET /api/employee/{id}/statistics: the figures are time logs summed up, so the caller needs the
// time-log read permission first (a role refused /api/time-log learns nothing here); then it must
// be able to read the employee record (its read permission, tenant and owner rule), or be an
// EMPLOYEE asking for its own employee record, which its role cannot read otherwise. Another tenant's employee, or another employee for an EMPLOYEE, is
// a 404, as a read of the record would be.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { ANY_AUTHENTICATED, type Caller } from '../../engine/caller.js';
import { badRequest, forbidden, notFound } from '../../engine/errors.js';
import { callerOf, parameterLabel, parseQueryString } from '../../engine/http/context.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { checkId } from '../../engine/resource/service.js';
import { employeeStatistics, type StatisticsSources } from './statistics-query.js';

/** The route's path (OpenAPI spelling), under the employee's canonical path: /api/employee/{id}/statistics. */
export const statisticsPath = (employee: CompiledResource) => `/api/${employee.paths[0]}/{id}/statistics`;

/** The clock the months are counted from; tests may fix it. Never taken from the request. */
export type Clock = () => Date;

const hasPermission = (caller: Caller, permission: string) => permission === ANY_AUTHENTICATED || caller.permissions.has(permission);

/** The route takes no query parameters: any one is refused, not ignored. */
function refuseParameters(ctx: Context) {
  const names = Object.keys(parseQueryString(ctx.querystring));
  if (names.length) throw badRequest(names.map((name) => `${parameterLabel(name)} is not a supported parameter of ${ctx.path}; it takes none`));
}

export function registerStatisticsRoutes(router: Router, db: Knex, sources: StatisticsSources, now: Clock) {
  router.get(statisticsPath(sources.employee).replace('{id}', ':id'), async (ctx) => {
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
  });
}
