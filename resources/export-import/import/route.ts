// POST /api/import/<resource>: CSV or a JSON array, as a multipart upload or the raw body; every
// row validated by the resource's create rules, then all written in one transaction, or none.
// One route per importable resource, so that the document gives each its own rows schema (an
// alias of the name as an alias route), then the template for any other name: its 404.
import type { Context } from 'koa';
import { badRequest, errorBody } from '../../../engine/errors.js';
import { authorize, parameterLabel, parseQueryString } from '../../../engine/http/context.js';
import type { Engine } from '../../../engine/module.js';
import { UUID_PATTERN } from '../../../engine/resource/fields.js';
import { writeContext } from '../../../engine/resource/routes.js';
import { documentedOnce, type Route } from '../../../engine/route.js';
import { FORMATS, readImportFile, type ImportFormat } from './body.js';
import { importDocs } from './docs.js';
import { importableNames, importTarget, type ImportTarget } from './importable.js';
import { IMPORT_PATH, IMPORT_PERMISSION } from './names.js';
import { importRows } from './rows.js';
import { importAll } from './write.js';

/** The one query parameter: format, when a multipart file's name and type do not tell. */
function requestedFormat(ctx: Context): ImportFormat | undefined {
  const query = parseQueryString(ctx.querystring);
  const unknown = Object.keys(query).filter((k) => k !== 'format');
  if (unknown.length) throw badRequest(unknown.map((k) => `${parameterLabel(k)} is not a supported parameter of an import; supported: format`));
  const format = query.format;
  if (format === undefined) return undefined;
  if (typeof format !== 'string' || !(FORMATS as readonly string[]).includes(format)) throw badRequest(`format must be one of the following values: ${FORMATS.join(', ')}`);
  return format as ImportFormat;
}

const summary = (failed: number, total: number) => `${failed} of ${total} ${total === 1 ? 'row' : 'rows'} failed; nothing was imported`;

export function importRoutes(engine: Engine): Route[] {
  // Runs after the declaration's check of IMPORT_PERMISSION; the resource's create permission is its own.
  async function importInto(ctx: Context, target: ImportTarget) {
    const caller = authorize(ctx, target.resource.permissions.create);
    const format = requestedFormat(ctx);
    const context = writeContext(ctx, target.resource);
    // Checked once here rather than failing every row alike.
    if (context.organizationHeader !== undefined && !UUID_PATTERN.test(context.organizationHeader)) {
      throw badRequest(`${target.resource.organizationHeader} header must be a UUID`);
    }
    const file = await readImportFile(ctx, engine.config, format);
    const rows = importRows(target.resource, file.format, file.text, engine.config.importMaxRows);
    const outcome = await importAll(target, caller, rows, context);
    if ('errors' in outcome) {
      ctx.status = 400;
      ctx.body = { ...errorBody(400, [summary(outcome.failedRows, outcome.totalRows)]), imported: 0, failedRows: outcome.failedRows, errors: outcome.errors };
      return;
    }
    ctx.status = 201;
    ctx.body = { imported: outcome.imported, errors: [] };
  }
  // The router takes a trailing slash too (/api/import/tags/). Multipart, CSV or JSON, larger
  // than the JSON limit: read by body.ts.
  const declared = { method: 'POST', permission: IMPORT_PERMISSION, body: 'own' } as const;
  const named = importableNames(engine).flatMap(({ resource, names }) => {
    const target = importTarget(engine, resource.name);
    const canonical = `${IMPORT_PATH}/${resource.name}`;
    return names.map((name): Route => {
      const path = `${IMPORT_PATH}/${name}`;
      return { ...declared, path, handler: (ctx) => importInto(ctx, target), ...documentedOnce(path, canonical, () => importDocs(resource)) };
    });
  });
  return [
    ...named,
    // Declared after the names' own routes, which the router tries first. What still reaches it
    // is an unknown name or a resource the API does not create (404), or a name spelled with
    // percent escapes (served as the name). Left out of the document: its one schema of rows
    // could not tell which resource's create they must fit.
    { ...declared, path: `${IMPORT_PATH}/:resource`, handler: (ctx) => importInto(ctx, importTarget(engine, ctx.params.resource)), docs: false },
  ];
}
