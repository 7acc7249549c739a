// GET /api/export/{resource}?format=csv|json and GET /api/export (a zip of one CSV per resource
// the caller may read). Both need EXPORT_ADD, and each resource its own read permission; rows
// are the caller's tenant's, with the owner rule, streamed in keyset batches.
//
// Once the first bytes are out the status cannot change: a failure after that (the database
// gone) destroys the response, so the client sees a truncated transfer, and Koa hands the error
// to the application's 'error' event, the log of errors raised after a response has started.
import type { Context } from 'koa';
import { ANY_AUTHENTICATED, type Caller } from '../../../engine/caller.js';
import { badRequest } from '../../../engine/errors.js';
import { authorize, callerOf, parameterLabel, parseQueryString } from '../../../engine/http/context.js';
import type { Engine } from '../../../engine/module.js';
import type { CompiledResource } from '../../../engine/resource/compiled.js';
import type { Route } from '../../../engine/route.js';
import { resourceNamed } from '../exchange.js';
import { exportAllDocs, exportResourceDocs } from './docs.js';
import { byteStream, CONTENT_TYPES, csvChunks, EXPORT_FORMATS, jsonChunks, primed, type ExportFormat } from './formats.js';
import { EXPORT_PATH, EXPORT_PERMISSION } from './names.js';
import { keysetBatches } from './rows.js';
import { zipStream } from './zip.js';

const mayRead = (caller: Caller, resource: CompiledResource) =>
  resource.permissions.read === ANY_AUTHENTICATED || caller.permissions.has(resource.permissions.read);

/** The resources a zip holds for this caller: every one it may read, by name. */
export const readableResources = (engine: Engine, caller: Caller) =>
  [...engine.registry.values()].filter((r) => mayRead(caller, r)).sort((a, b) => a.name.localeCompare(b.name));

/** The format asked for (csv unless told); any other parameter or value is a 400. */
function formatOf(ctx: Context): ExportFormat {
  const query = parseQueryString(ctx.querystring);
  const problems = Object.keys(query)
    .filter((key) => key !== 'format')
    .map((key) => `${parameterLabel(key)} is not a supported parameter of ${ctx.path}; supported: format`);
  const format = query.format ?? 'csv';
  if (!EXPORT_FORMATS.includes(format as ExportFormat)) problems.push(`format must be one of the following values: ${EXPORT_FORMATS.join(', ')}`);
  if (problems.length) throw badRequest(problems);
  return format as ExportFormat;
}

function noParameters(ctx: Context) {
  const query = parseQueryString(ctx.querystring);
  const keys = Object.keys(query);
  if (keys.length) throw badRequest(keys.map((key) => `${parameterLabel(key)} is not a supported parameter of ${ctx.path}; it takes none (every CSV of the zip is one resource's export)`));
}

/** 2026-01-05: the UTC day of the export, in the file name. */
const today = () => new Date().toISOString().slice(0, 10);

function download(ctx: Context, contentType: string, filename: string) {
  ctx.set('Content-Type', contentType);
  ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
  ctx.set('Cache-Control', 'no-store');
}

const chunksOf = (engine: Engine, resource: CompiledResource, caller: Caller, format: ExportFormat) => {
  const batches = keysetBatches(engine.db, resource, caller);
  return format === 'csv' ? csvChunks(resource.visibleColumns, batches) : jsonChunks(batches);
};

// Both handlers run after their declaration's check of EXPORT_PERMISSION (callerOf, not authorize).
async function exportOne(ctx: Context, engine: Engine) {
  const caller = callerOf(ctx);
  const resource = resourceNamed(engine, ctx.params.resource);
  authorize(ctx, resource.permissions.read);
  const format = formatOf(ctx);
  const chunks = await primed(chunksOf(engine, resource, caller, format));
  download(ctx, CONTENT_TYPES[format], `${resource.name}-${today()}.${format}`);
  ctx.body = byteStream(chunks);
}

async function exportAll(ctx: Context, engine: Engine) {
  const caller = callerOf(ctx);
  noParameters(ctx);
  const resources = readableResources(engine, caller);
  const open = (resource: CompiledResource) => primed(chunksOf(engine, resource, caller, 'csv'));
  // The first entry's first batch before any byte is sent: a database down is still a 503.
  const first = resources.length ? await open(resources[0]) : undefined;
  const entries = resources.map((resource, i) => ({
    name: `${resource.name}.csv`,
    open: async () => byteStream(i === 0 && first ? first : await open(resource)),
  }));
  download(ctx, 'application/zip', `export-${today()}.zip`);
  ctx.body = await zipStream(entries);
}

export function exportRoutes(engine: Engine): Route[] {
  return [
    { method: 'GET', path: EXPORT_PATH, permission: EXPORT_PERMISSION, handler: (ctx) => exportAll(ctx, engine), docs: exportAllDocs() },
    {
      method: 'GET',
      path: `${EXPORT_PATH}/:resource`,
      permission: EXPORT_PERMISSION,
      handler: (ctx) => exportOne(ctx, engine),
      docs: exportResourceDocs(engine),
    },
  ];
}
