// multipart/form-data requests (uploads, imports) read with busboy: one file field, handed to the
// route as a stream while it arrives (never buffered here), and a few short text fields. Every way
// a body can be wrong becomes our envelope: 415 for another content type, 413 for a file over the
// limit (the rest of the body is not read: see unread-body.ts for the connection), 400 for anything else.
import type { Readable } from 'node:stream';
import busboy from 'busboy';
import type { Context } from 'koa';
import { badRequest, HttpError } from '../errors.js';
import { decodedWhole } from './text.js';

export interface MultipartOptions {
  /** The one file field taken (`file`). */
  fileField: string;
  /** Text fields taken beside it; any other field is a 400. */
  textFields: string[];
  /** Largest file accepted, in bytes; a larger one is a 413. */
  maxFileBytes: number;
  /** Longest text field value, in bytes (1 KiB by default). */
  maxFieldBytes?: number;
}

export interface IncomingFile {
  stream: Readable;
  /** As the client named it: for messages only, never a path to write to. */
  filename: string;
  /** As the client declared it: not to be trusted. */
  declaredType: string;
}

export interface MultipartResult<T> {
  fields: Record<string, string>;
  /** What `consume` made of the file. */
  file: T;
}

/** Room for the part headers and the text fields around the file, when judging Content-Length. */
const ENVELOPE_BYTES = 64 * 1024;

const MEBIBYTE = 1024 * 1024;

export function tooLarge(maxBytes: number, what = 'File'): HttpError {
  const size = maxBytes % MEBIBYTE === 0 ? `${maxBytes / MEBIBYTE} MiB` : `${maxBytes} bytes`;
  return new HttpError(413, `${what} is larger than the limit of ${size}`);
}

const notMultipart = () => badRequest('Request body is not valid multipart/form-data');

/**
 * Reads a multipart/form-data request. `consume` receives the file's stream as soon as its part
 * begins and must read it to the end (or fail); when anything goes wrong, the stream is destroyed
 * with the error and the returned promise rejects only after `consume` has settled, so a route
 * that cleans up in `consume` has cleaned up before the error is answered.
 */
export async function readMultipart<T>(
  ctx: Context,
  options: MultipartOptions,
  consume: (file: IncomingFile) => Promise<T>,
): Promise<MultipartResult<T>> {
  const { fileField, textFields, maxFileBytes } = options;
  const maxFieldBytes = options.maxFieldBytes ?? 1024;
  if (!ctx.is('multipart/form-data')) {
    throw new HttpError(415, `Unsupported media type: send multipart/form-data with the file in the field "${fileField}"`);
  }
  const length = ctx.request.length;
  if (length !== undefined && length > maxFileBytes + ENVELOPE_BYTES) {
    // Refused before a byte of the body is read (unread-body.ts closes the connection rather than read it).
    throw tooLarge(maxFileBytes);
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: ctx.req.headers,
      // Browsers send a non-ASCII file name as raw UTF-8 in filename="…"; busboy's default reads it as Latin-1.
      defParamCharset: 'utf8',
      // busboy reports its limit when a file reaches it: one byte more lets a file of exactly maxFileBytes through.
      limits: { fileSize: maxFileBytes + 1, fieldSize: maxFieldBytes, parts: textFields.length + 8 },
    });
  } catch {
    // busboy refuses a multipart content type without a boundary before reading anything.
    throw notMultipart();
  }

  return new Promise<MultipartResult<T>>((resolve, reject) => {
    const fields: Record<string, string> = {};
    let current: Readable | undefined;
    let consumed: Promise<T> | undefined;
    let failed = false;

    const fail = (err: unknown) => {
      if (failed) return;
      failed = true;
      ctx.req.unpipe(parser);
      if (current && !current.destroyed) current.destroy(err as Error);
      // Answer only once the route's own clean-up (a half-written file) is done.
      Promise.resolve(consumed)
        .catch(() => {})
        .finally(() => reject(err));
    };

    parser.on('file', (name, stream, info) => {
      // busboy destroys a file stream whose part is cut short (a malformed body): that is the
      // client's 400, answered before the reader's own failure (a plain Error) could become a 500.
      // A reader that stops early aborts the stream itself (AbortError): its own error is the answer.
      // The listener also keeps an error after the reader has let go of the stream (a bad field
      // after the file) from crashing the process.
      stream.on('error', (err: Error & { code?: string }) => {
        if (err instanceof HttpError) fail(err);
        else if (err.code !== 'ABORT_ERR') fail(notMultipart());
      });
      if (failed) return void stream.resume();
      if (name !== fileField) {
        stream.resume();
        return fail(badRequest(`property ${name} should not exist; the file goes in the field "${fileField}"`));
      }
      if (consumed) {
        stream.resume();
        return fail(badRequest(`only one file may be sent, in the field "${fileField}"`));
      }
      if (info.filename && !decodedWhole(info.filename)) {
        stream.resume();
        return fail(badRequest(`the name of the file in "${fileField}" must be UTF-8 text`));
      }
      current = stream;
      consumed = consume({ stream, filename: info.filename ?? '', declaredType: info.mimeType ?? '' });
      consumed.catch(fail);
      // At the limit busboy ends the stream cut short; the reader decides first, so a refusal it
      // found in the bytes it already has (a file of the wrong kind: 415) is the answer.
      const settled = consumed;
      stream.on('limit', () => void settled.then(() => fail(tooLarge(maxFileBytes)), fail));
    });
    parser.on('field', (name, value, info) => {
      if (failed) return;
      if (name === fileField) return fail(badRequest(`${fileField} must be a file, not a text field`));
      if (!textFields.includes(name)) {
        const allowed = textFields.length ? `; allowed beside "${fileField}": ${textFields.join(', ')}` : '';
        return fail(badRequest(`property ${name} should not exist${allowed}`));
      }
      if (info.valueTruncated) return fail(badRequest(`${name} must be shorter than or equal to ${maxFieldBytes} bytes`));
      if (!decodedWhole(value)) return fail(badRequest(`${name} must be UTF-8 text`));
      if (name in fields) return fail(badRequest(`${name} must be sent once`));
      fields[name] = value;
    });
    parser.on('partsLimit', () => fail(badRequest('the multipart body has too many parts')));
    parser.on('error', () => fail(notMultipart()));
    parser.on('close', () => {
      if (failed) return;
      if (!consumed) return fail(badRequest(`${fileField} should not be empty: send the file in the field "${fileField}"`));
      consumed.then((file) => resolve({ fields, file }), fail);
    });
    // A client that goes away mid-upload: the route's clean-up still runs.
    ctx.req.on('aborted', () => fail(badRequest('the request was aborted')));
    ctx.req.on('error', fail);
    ctx.req.pipe(parser);
  });
}
