// The OpenAPI operations of the export routes (routes.ts declares them with these): binary
// answers by content type, the resource as an enum of every name and one-segment alias, the
// errors each route can answer.
import type { Engine } from '../../../engine/module.js';
import { errorResponses } from '../../../engine/openapi/fragments.js';
import { EXPORT_FORMATS } from './formats.js';
import { EXPORT_PATH, EXPORT_PERMISSION } from './names.js';

const TAG = 'export';

const binary = { type: 'string', format: 'binary' };

const attachment = (example: string) => ({
  'Content-Disposition': { description: `Always an attachment, named like \`${example}\` (the UTC day of the export).`, schema: { type: 'string' } },
  'Cache-Control': { description: 'Always `no-store`.', schema: { type: 'string', enum: ['no-store'] } },
});

const STREAMING =
  'Streamed in batches by id, so memory stays flat whatever the row count. A failure after the first bytes ' +
  'cannot change the status any more: the transfer then ends unfinished (a truncated download), never as a complete-looking file.';

const CSV_RULES =
  "CSV: RFC 4180, UTF-8 without BOM, CRLF line ends, a header row of the resource's visible columns (never hidden fields such as password hashes). " +
  'Empty cell for null, ISO 8601 UTC timestamps, true/false, numbers as written, objects and arrays as JSON text. ' +
  "A cell starting with = + - @, tab or carriage return gets a leading apostrophe (`=1+1` → `'=1+1`), so a spreadsheet shows it as text; " +
  "so does one starting with an apostrophe, so that the import, which removes one, gets every value back.";

/** Every name a resource answers to in one path segment (an alias with a slash cannot be one). */
const resourceNames = (engine: Engine) =>
  [...new Set([...engine.registry.values()].flatMap((r) => [r.name, ...r.paths]))].filter((name) => !name.includes('/')).sort();

/** GET /api/export: a zip of every resource the caller may read. */
export const exportAllDocs = () => ({
  tags: [TAG],
  operationId: 'exportAll',
  summary: 'Export every resource the caller may read, as a zip of CSV files',
  description:
    `Needs ${EXPORT_PERMISSION}. One \`<resource>.csv\` per resource whose read permission the caller holds (the others are left out), ` +
    `each as GET ${EXPORT_PATH}/{resource} would answer it in CSV: the caller's tenant only, with the owner rule. ` +
    `Entries are written one after another. Takes no query parameters. ${STREAMING} ${CSV_RULES}`,
  responses: {
    '200': { description: 'A zip archive', headers: attachment('export-2026-01-05.zip'), content: { 'application/zip': { schema: binary } } },
    ...errorResponses(400, 401, 403, 500, 503),
  },
});

/** GET /api/export/{resource}: one resource as CSV or JSON. */
export function exportResourceDocs(engine: Engine) {
  return {
    tags: [TAG],
    operationId: 'exportResource',
    summary: "Export one resource's records as CSV or JSON",
    description:
      `Needs ${EXPORT_PERMISSION} and the resource's read permission. The caller's tenant only, with the owner rule ` +
      `(an EMPLOYEE gets only its own records), ordered by id. ${STREAMING} ${CSV_RULES} ` +
      "JSON: one array of records, each exactly as GET /api/{resource}/{id} answers it, nothing neutralised.",
    parameters: [
      { name: 'resource', in: 'path', required: true, description: 'A resource name or one of its aliases; any other is a 404.', schema: { type: 'string', enum: resourceNames(engine) } },
      { name: 'format', in: 'query', required: false, description: 'csv (default) or json; any other value, or any other parameter, is a 400.', schema: { type: 'string', enum: [...EXPORT_FORMATS], default: 'csv' } },
    ],
    responses: {
      '200': {
        description: 'The records, as a download',
        headers: attachment('tag-2026-01-05.csv'),
        content: {
          'text/csv': { schema: binary },
          'application/json': {
            schema: { type: 'array', items: { type: 'object', additionalProperties: true, description: "A record as the resource's record schema describes it" } },
          },
        },
      },
      ...errorResponses(400, 401, 403, 404, 500, 503),
    },
  };
}
