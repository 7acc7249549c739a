// The OpenAPI operations of the upload and file routes (routes.ts declares them with these): the
// multipart body, the record answered, the image bytes served (one binary content per kind) and
// every error, under both spellings. The DELETE that also removes the file answers as the
// generated one documents it.
import { STATUS_CODES } from 'node:http';
import { ERROR_SCHEMA } from '../../engine/openapi/components.js';
import { errorResponses, idParameter, jsonResponse, multipartFileContent, organizationHeaderParameters, pascalCase, ref, schemaName } from '../../engine/openapi/fragments.js';
import type { CompiledResource } from '../../engine/resource/compiled.js';
import { etagHeader } from '../../engine/openapi/conditional-fragments.js';
import { IMAGE_KINDS, KINDS_IN_WORDS } from './kinds.js';
import { CACHE_SECONDS, FILE_FIELD, NAME_FIELD } from './wire.js';

const MEBIBYTE = 1024 * 1024;
const inWords = (bytes: number) => (bytes % MEBIBYTE === 0 ? `${bytes / MEBIBYTE} MiB` : `${bytes} bytes`);

/** An error answer with a description of this operation's own (the shared components speak of JSON bodies). */
function errorResponse(status: number, description: string, example: string) {
  return {
    description,
    // A 400 lists its problems; other statuses carry one sentence.
    content: { 'application/json': { schema: ref(ERROR_SCHEMA), example: { statusCode: status, message: status === 400 ? [example] : example, error: STATUS_CODES[status] } } },
  };
}

/** POST /api/{path}/upload, under the resource's first path (its aliases' routes are documented as this one). */
export function uploadDocs(resource: CompiledResource, maxBytes: number) {
  const nameMax = resource.fields.get(NAME_FIELD)?.definition.maxLength ?? 255;
  return {
    tags: [resource.name],
    operationId: `upload${pascalCase(resource.name)}`,
    summary: 'Upload an image: stores the file and creates its image-asset record',
    description:
      `Needs the ${resource.permissions.create} permission. Takes ${KINDS_IN_WORDS} of at most ${inWords(maxBytes)}, ` +
      "recognised by its bytes (the declared type and file name do not count). The record's width, height, size " +
      '(bytes) and mimeType come from the file; its url is the file route, GET /api/image-asset/{id}/file. ' +
      `Without a name, the record is named after the file (without any folder part, cut to ${nameMax} characters). ` +
      'The organization is chosen as for a create (Organization-Id header, else the caller\'s, or the tenant\'s only one; ' +
      'else none: an image of the whole tenant, organizationId null). The file is stored under a generated name; when the request ' +
      'fails, neither a file nor a record remains. DELETE /api/image-asset/{id} removes the file with its record.',
    deprecated: false,
    parameters: organizationHeaderParameters(resource),
    requestBody: {
      required: true,
      content: multipartFileContent(FILE_FIELD, `${KINDS_IN_WORDS}, at most ${inWords(maxBytes)}; sent once`, {
        [NAME_FIELD]: { type: 'string', maxLength: nameMax, description: "The record's name; blank or absent: the file's name" },
      }),
    },
    responses: {
      '201': { ...jsonResponse('The image-asset record of the stored file', ref(schemaName(resource, 'record'))), headers: etagHeader() },
      '400': errorResponse(
        400,
        'Malformed multipart body, no file, a field other than file and name, a second file, an empty file, an image whose header cannot be read (truncated or corrupt), an invalid name or Organization-Id',
        'file should not be empty: send the file in the field "file"',
      ),
      ...errorResponses(401, 403),
      '413': errorResponse(413, `The file is larger than ${inWords(maxBytes)} (a Content-Length that says so is refused before the body is read)`, `File is larger than the limit of ${inWords(maxBytes)}`),
      '415': errorResponse(
        415,
        `The body is not multipart/form-data, or the file is not ${KINDS_IN_WORDS} (whatever its declared type or name)`,
        `Unsupported media type: the file is image/bmp; send ${KINDS_IN_WORDS}`,
      ),
      ...errorResponses(500, 503),
    },
  };
}

/** GET and HEAD /api/{path}/{id}/file, under the resource's first path (its aliases' routes are documented as these). */
export function fileDocs(resource: CompiledResource) {
  const binary = Object.fromEntries(IMAGE_KINDS.map((kind) => [kind.mimeType, { schema: { type: 'string', format: 'binary' } }]));
  const headers = {
    'Content-Length': { description: 'The file size in bytes', schema: { type: 'integer', minimum: 1 } },
    'Content-Disposition': { description: 'inline, with the record\'s name as the file name (`filename*` for non-ASCII names)', schema: { type: 'string' } },
    'Cache-Control': { description: `private, max-age=${CACHE_SECONDS}`, schema: { type: 'string' } },
    'X-Content-Type-Options': { description: 'Always nosniff', schema: { type: 'string', enum: ['nosniff'] } },
  };
  const errors = {
    ...errorResponses(400, 401, 403),
    '404': errorResponse(404, "No image asset with that id in the caller's tenant, or the record has no stored file (it was created without an upload)", 'This image asset has no stored file'),
    ...errorResponses(500, 503),
  };
  const description =
    `Needs the ${resource.permissions.read} permission. The image as uploaded, with the media type recognised from ` +
    'its bytes (the record\'s mimeType at upload).';
  const common = { tags: [resource.name], deprecated: false, parameters: [idParameter()] };
  return {
    get: {
      ...common,
      operationId: `get${pascalCase(resource.name)}File`,
      summary: 'Download the stored image of an image asset',
      description,
      responses: { '200': { description: 'The image bytes', headers, content: binary }, ...errors },
    },
    head: {
      ...common,
      operationId: `head${pascalCase(resource.name)}File`,
      summary: 'The headers of the stored image, without its bytes',
      description,
      responses: { '200': { description: `The headers GET would send, Content-Type (${IMAGE_KINDS.map((k) => k.mimeType).join(', ')}) included, without the bytes`, headers }, ...errors },
    },
  };
}
