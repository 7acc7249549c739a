// GET /api/report (the catalogue), GET /api/report/<slug> (a route per report, so that the
// OpenAPI document gives each its own parameters and answer) and GET /api/report/{any other
// name} (404). The order of the checks is the answer's: no token 401, role lacking any of the
// report's permissions (permissions.ts) 403, then every parameter problem at once as a 400.
import type Router from '@koa/router';
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { ANY_AUTHENTICATED } from '../../engine/caller.js';
import { badRequest, forbidden, HttpError } from '../../engine/errors.js';
import { authorize, callerOf, parameterLabel, parseQueryString } from '../../engine/http/context.js';
import { describe, REPORTS } from './catalogue.js';
import type { ReportDefinition, ReportResources } from './definition.js';
import { parseReportParameters } from './parameters.js';
import { mayRun, requiredPermissions } from './permissions.js';

export const REPORT_PATH = '/api/report';

type RouteResources = ReportResources & { db: Knex };

export const unknownReport = () => new HttpError(404, `No such report; reports: ${REPORTS.map((r) => r.slug).join(', ')}`);

function catalogue(ctx: Context, resources: ReportResources) {
  const caller = authorize(ctx, ANY_AUTHENTICATED);
  const keys = Object.keys(parseQueryString(ctx.querystring));
  if (keys.length) throw badRequest(keys.map((k) => `${parameterLabel(k)} is not a supported parameter of ${REPORT_PATH}; it takes none`));
  // Only the reports the caller's role may run: the catalogue is what this caller can ask for.
  const items = REPORTS.filter((r) => mayRun(caller, requiredPermissions(r, resources))).map((r) => describe(r, resources));
  ctx.body = { items, total: items.length };
}

async function runReport(ctx: Context, resources: RouteResources, report: ReportDefinition) {
  const caller = callerOf(ctx);
  if (!mayRun(caller, requiredPermissions(report, resources))) throw forbidden();
  const parameters = parseReportParameters(report, parseQueryString(ctx.querystring), resources.timeLog, caller.tenantId);
  const figures = await report.run({ ...resources, caller, parameters });
  ctx.body = {
    report: report.slug,
    groupBy: parameters.groupBy,
    startDate: parameters.start ?? null,
    endDate: parameters.end ?? null,
    ...figures,
  };
}

export function registerReportRoutes(router: Router, resources: RouteResources) {
  router.get(REPORT_PATH, (ctx) => catalogue(ctx, resources));
  for (const report of REPORTS) router.get(`${REPORT_PATH}/${report.slug}`, (ctx) => runReport(ctx, resources, report));
  // Registered after the reports' own paths, so it answers only the names that are not reports.
  router.get(`${REPORT_PATH}/:slug`, (ctx) => {
    callerOf(ctx);
    throw unknownReport();
  });
}
