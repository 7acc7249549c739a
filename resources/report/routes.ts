// GET /api/report (the catalogue), GET /api/report/<slug> (a route per report, so that the
// OpenAPI document gives each its own parameters and answer) and GET /api/report/{any other
// name} (404). The order of the checks is the answer's: no token 401, role lacking any of the
// report's permissions (permissions.ts) 403, then every parameter problem at once as a 400.
import type { Knex } from 'knex';
import type { Context } from 'koa';
import { ANY_AUTHENTICATED } from '../../engine/caller.js';
import { badRequest, forbidden, HttpError } from '../../engine/errors.js';
import { callerOf, parameterLabel, parseQueryString } from '../../engine/http/context.js';
import { errorResponses, jsonResponse, pascalCase } from '../../engine/openapi/fragments.js';
import type { Route } from '../../engine/route.js';
import { describe, REPORTS } from './catalogue.js';
import type { ReportDefinition, ReportResources } from './definition.js';
import { catalogueSchema, parametersOf, permissionRule, REPORT_TAG, runDescription } from './openapi.js';
import { parseReportParameters } from './parameters.js';
import { mayRun, requiredPermissions } from './permissions.js';

const REPORT_PATH = '/api/report';

type RouteResources = ReportResources & { db: Knex };

export const unknownReport = () => new HttpError(404, `No such report; reports: ${REPORTS.map((r) => r.slug).join(', ')}`);

function catalogue(ctx: Context, resources: ReportResources) {
  const caller = callerOf(ctx);
  const keys = Object.keys(parseQueryString(ctx.querystring));
  if (keys.length) throw badRequest(keys.map((k) => `${parameterLabel(k)} is not a supported parameter of ${REPORT_PATH}; it takes none`));
  // Only the reports the caller's role may run: the catalogue is what this caller can ask for.
  const items = REPORTS.filter((r) => mayRun(caller, requiredPermissions(r, resources))).map((r) => describe(r, resources));
  ctx.body = { items, total: items.length };
}

async function runReport(ctx: Context, resources: RouteResources, report: ReportDefinition) {
  const caller = callerOf(ctx);
  // Every one of the report's permissions, not one a declaration could name: checked here.
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

/** GET /api/report/{the report's slug}: its parameters, its answer. */
function reportRoute(report: ReportDefinition, resources: RouteResources): Route {
  return {
    method: 'GET',
    path: `${REPORT_PATH}/${report.slug}`,
    handler: (ctx) => runReport(ctx, resources, report),
    docs: {
      tags: [REPORT_TAG],
      operationId: `runReport${pascalCase(report.slug)}`,
      summary: `Run the ${report.slug} report: ${report.name}`,
      description: runDescription(report, resources),
      parameters: parametersOf(report),
      responses: {
        '200': jsonResponse(`The ${report.slug} report`, report.schema),
        ...errorResponses(400, 401, 403, 500, 503),
      },
    },
  };
}

export function reportRoutes(resources: RouteResources): Route[] {
  return [
    {
      method: 'GET',
      path: REPORT_PATH,
      permission: ANY_AUTHENTICATED,
      handler: (ctx) => catalogue(ctx, resources),
      docs: {
        tags: [REPORT_TAG],
        operationId: 'listReports',
        summary: 'The reports the caller may run',
        description: `The catalogue, limited to the reports the caller's role holds every permission of. Any signed-in user; takes no parameters. ${permissionRule(resources)}`,
        responses: {
          '200': jsonResponse('The catalogue', catalogueSchema),
          // 403: a Tenant-Id header naming another tenant than the token's (checked wherever a token is).
          ...errorResponses(400, 401, 403, 500, 503),
        },
      },
    },
    ...REPORTS.map((report) => reportRoute(report, resources)),
    // Declared after the reports' own paths, so it answers only the names that are not reports,
    // with a 404 naming them. Left out of the document: every answer of it is an error, so it is no
    // operation a client can call (a generated client would get a method that only fails), and its
    // template would also match each report's own path. No OpenAPI 3.0 schema of the name can say
    // "any name but a report's" as the router reads paths (case-insensitively, a trailing slash
    // ignored): like any other path the document does not list, it is a 404 (docs/modules.md).
    {
      method: 'GET',
      path: `${REPORT_PATH}/:slug`,
      handler: (ctx) => {
        callerOf(ctx);
        throw unknownReport();
      },
      docs: false,
    },
  ];
}
