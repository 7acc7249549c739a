// The file an import brings, as text, and whether it is CSV or JSON: a multipart/form-data upload
// (field `file`) or the raw body (text/csv, application/json). Both are read into memory up to
// IMPORT_MAX_BYTES, never further: the rows are validated all together before anything is written.
import type { Readable } from 'node:stream';
import type { Context } from 'koa';
import type { Config } from '../../../engine/config/config.js';
import { badRequest, HttpError } from '../../../engine/errors.js';
import { readBodyBytes } from '../../../engine/http/body-bytes.js';
import { readMultipart, tooLarge } from '../../../engine/http/multipart.js';
import { otherCharset, utf8Text } from '../../../engine/http/text.js';

export const FORMATS = ['csv', 'json'] as const;
export type ImportFormat = (typeof FORMATS)[number];

export const FILE_FIELD = 'file';

export interface ImportFile {
  text: string;
  format: ImportFormat;
}

const CSV_TYPES = ['text/csv', 'application/csv'];
const JSON_TYPES = ['application/json'];

const unsupported = () =>
  new HttpError(415, `Unsupported media type: send multipart/form-data with the file in the field "${FILE_FIELD}", or a text/csv or application/json body`);

const emptyFile = () => badRequest(`${FILE_FIELD} should not be empty: send a CSV file with a header row, or a JSON array`);

/** A declared media type (essence only, no parameters) as a format, if it names one. */
function formatOfType(type: string): ImportFormat | undefined {
  const essence = type.split(';')[0].trim().toLowerCase();
  if (CSV_TYPES.includes(essence)) return 'csv';
  if (JSON_TYPES.includes(essence)) return 'json';
  return undefined;
}

function formatOfName(filename: string): ImportFormat | undefined {
  const ext = /\.([a-z]+)$/i.exec(filename)?.[1]?.toLowerCase();
  return ext === 'csv' || ext === 'json' ? ext : undefined;
}

/** Bytes as UTF-8 text; a byte-order mark is dropped, anything that is not UTF-8 is a 400. */
function decode(bytes: Buffer): string {
  let text = utf8Text(bytes, FILE_FIELD);
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (!text.trim()) throw emptyFile();
  return text;
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function hasBody(ctx: Context): boolean {
  const length = ctx.request.length;
  return (length !== undefined && length > 0) || (length === undefined && ctx.get('transfer-encoding') !== '');
}

async function multipartFile(ctx: Context, config: Config, requested?: ImportFormat): Promise<ImportFile> {
  const { file } = await readMultipart(ctx, { fileField: FILE_FIELD, textFields: [], maxFileBytes: config.importMaxBytes }, async (incoming) => ({
    bytes: await collect(incoming.stream),
    filename: incoming.filename,
    declaredType: incoming.declaredType,
  }));
  // The file's name says more than the type a browser guesses for it (a .csv is often sent as
  // application/vnd.ms-excel); ?format settles any doubt.
  const format = requested ?? formatOfName(file.filename) ?? formatOfType(file.declaredType);
  if (!format) {
    throw new HttpError(415, `Unsupported file type: send a .csv or .json file (text/csv or application/json), or name the format with ?format=csv|json`);
  }
  return { text: decode(file.bytes), format };
}

async function rawBody(ctx: Context, config: Config, requested?: ImportFormat): Promise<ImportFile> {
  const format = formatOfType(ctx.get('content-type'));
  if (!format) throw unsupported();
  const charset = otherCharset(ctx);
  if (charset) throw charset;
  if (requested && requested !== format) throw badRequest(`format=${requested} does not match the Content-Type ${ctx.request.type}`);
  const length = ctx.request.length;
  if (length !== undefined && length > config.importMaxBytes) {
    // Refused before a byte is read (engine/http/unread-body.ts closes the connection rather than read it).
    throw tooLarge(config.importMaxBytes, 'Request body');
  }
  return { text: decode(await readBodyBytes(ctx.req, config.importMaxBytes, () => tooLarge(config.importMaxBytes, 'Request body'))), format };
}

/** The import's file and format; 415 for another content type, 413 past the limit, 400 when empty. */
export async function readImportFile(ctx: Context, config: Config, requested?: ImportFormat): Promise<ImportFile> {
  if (ctx.is('multipart/form-data')) return multipartFile(ctx, config, requested);
  if (!hasBody(ctx)) throw emptyFile();
  return rawBody(ctx, config, requested);
}
