// The OpenAPI operation of POST /api/import/<resource>, one per importable resource (route.ts
// declares each with this): the three ways to send the file, the rows as that resource's create
// bodies, the success answer and the 400 that lists the failed rows. The two answers are named
// schemas (importSchemas), shared by every resource's operation rather than repeated in each.
import { errorResponses, jsonResponse, multipartFileContent, organizationHeaderParameters, pascalCase, ref, schemaName } from '../../../engine/openapi/fragments.js';
import type { CompiledResource } from '../../../engine/resource/compiled.js';
import { ERROR_SCHEMA } from '../../../engine/openapi/components.js';
import { FILE_FIELD } from './body.js';
import { IMPORT_PERMISSION } from './names.js';
import { MAX_LISTED_ERRORS } from './write.js';

const IMPORTED_SCHEMA = 'ImportResult';
const FAILED_SCHEMA = 'ImportFailure';

const rowError = {
  type: 'object',
  required: ['row', 'message'],
  properties: {
    row: { type: 'integer', minimum: 1, description: 'The row, counted from 1 among the data rows (the CSV header is not one; a JSON array index + 1)' },
    message: { type: 'string', description: 'One broken rule of that row', example: 'name should not be empty' },
  },
};

const errorsList = {
  type: 'array',
  maxItems: MAX_LISTED_ERRORS,
  items: rowError,
  description: `One entry per broken rule of each failed row, the first ${MAX_LISTED_ERRORS} only`,
};

const imported = {
  type: 'object',
  required: ['imported', 'errors'],
  properties: {
    imported: { type: 'integer', minimum: 0, description: 'Rows written: every row of the file' },
    errors: { type: 'array', maxItems: 0, items: rowError },
  },
  example: { imported: 2, errors: [] },
};

const failed = {
  allOf: [
    ref(ERROR_SCHEMA),
    {
      type: 'object',
      properties: {
        imported: { type: 'integer', enum: [0], description: 'Present when rows failed: nothing was written' },
        failedRows: { type: 'integer', minimum: 1, description: 'Rows that failed, listed or not' },
        errors: errorsList,
      },
    },
  ],
  example: {
    statusCode: 400,
    message: ['2 of 3 rows failed; nothing was imported'],
    error: 'Bad Request',
    imported: 0,
    failedRows: 2,
    errors: [
      { row: 1, message: 'name should not be empty' },
      { row: 3, message: 'stoppedAt must not be earlier than startedAt' },
    ],
  },
};

const description = (resource: CompiledResource) =>
  `Needs the ${IMPORT_PERMISSION} permission and ${resource.name}'s create permission. ` +
  `The file is CSV with a header row (the columns of GET /api/export/${resource.name}: an empty cell is an absent field, ` +
  "booleans true/false, dates ISO 8601, JSON text for the writable relations' id lists such as tagIds, a leading apostrophe " +
  `before = + - @ is dropped) or a JSON array of create bodies (${schemaName(resource, 'create')}). id, tenantId, organizationId, createdAt, updatedAt and ` +
  "read-only fields are ignored: each row is a new record of the caller's tenant, in the organization a create would choose " +
  "(Organization-Id header, else the caller's, or the tenant's only one; else none where the resource allows records of no " +
  `organization, organizationId null). Every row is validated like POST /api/${resource.paths[0]}; if any fails, the answer is a 400 ` +
  'listing the failed rows and nothing is written; otherwise all rows are written in one transaction. ' +
  'Size limit IMPORT_MAX_BYTES (413), row limit IMPORT_MAX_ROWS (400). A header-only CSV or an empty array imports 0 rows.';

/** The answers' schemas, as components (the module's openapiSchemas). */
export const importSchemas = () => ({ [IMPORTED_SCHEMA]: imported, [FAILED_SCHEMA]: failed });

/** The header that chooses the organization every row lands in (the rows' own organizationId is ignored), where the resource reads one. */
function organizationHeader(resource: CompiledResource): object[] {
  return (organizationHeaderParameters(resource) as Array<Record<string, unknown>>).map((header) => ({
    ...header,
    description: "The organization every row lands in (an organizationId in the file is ignored); else the caller's, or the tenant's only one; else none where the resource allows records of no organization",
  }));
}

/** POST /api/import/<resource's name>: its rows are its create bodies, nothing else. */
export function importDocs(resource: CompiledResource) {
  return {
    tags: ['import'],
    operationId: `import${pascalCase(resource.name)}`,
    summary: `Import ${resource.name} records from CSV or a JSON array: all rows or none`,
    description: description(resource),
    parameters: [
      {
        name: 'format',
        in: 'query',
        required: false,
        description: "The uploaded file's format when its name (.csv, .json) and type do not say; a raw body's Content-Type must agree",
        schema: { type: 'string', enum: ['csv', 'json'] },
      },
      ...organizationHeader(resource),
    ],
    requestBody: {
      required: true,
      content: {
        ...multipartFileContent(FILE_FIELD, 'A .csv or .json file'),
        // No example: one CSV text would fit one resource's columns only.
        'text/csv': { schema: { type: 'string', description: `CSV with a header row: the columns of GET /api/export/${resource.name}` } },
        'application/json': {
          schema: { type: 'array', items: ref(schemaName(resource, 'create')), description: `Create bodies of ${resource.name} (its ${schemaName(resource, 'create')} schema)` },
        },
      },
    },
    responses: {
      '201': jsonResponse('Every row was written', ref(IMPORTED_SCHEMA)),
      '400': { description: 'The file cannot be read (not CSV or JSON, unknown column, too many rows), or rows failed: then nothing was written and errors lists them', content: { 'application/json': { schema: ref(FAILED_SCHEMA) } } },
      ...errorResponses(401, 403, 404, 413, 415, 500, 503),
    },
  };
}
