// A request body read into memory, never past a limit: the JSON body parser and the import's raw
// body both read through here. One byte more than the limit is a 413 and reading stops there
// (what becomes of the rest, and of the connection, is settled in unread-body.ts).
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { badRequest, HttpError } from '../errors.js';

export const requestAborted = () => badRequest('the request was aborted');

const unreadableBody = () => badRequest('the request body could not be read');

/**
 * The bytes `source` yields, up to `max`; `tooLarge()` past it. An error of the stream is
 * `unreadable()` (an HttpError it carries is kept), a stream that closes before its end (the
 * client went away) a 400.
 */
export function readBodyBytes(source: Readable, max: number, tooLarge: () => HttpError, unreadable = unreadableBody): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      source.off('data', onData);
      if (err === undefined) return resolve(Buffer.concat(chunks, size));
      source.pause();
      reject(err instanceof HttpError ? err : unreadable());
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return finish(tooLarge());
      chunks.push(chunk);
    };
    source.on('data', onData);
    source.once('end', () => finish());
    source.once('error', finish);
    source.once('close', () => finish(requestAborted()));
  });
}

/** Content-Encoding values a body may come in; another is a 415. */
const DECOMPRESSORS: Record<string, () => zlib.Gzip | zlib.BrotliDecompress> = {
  gzip: () => zlib.createUnzip(),
  deflate: () => zlib.createUnzip(),
  br: () => zlib.createBrotliDecompress(),
};

export interface BodySource {
  stream: Readable;
  /** Bytes announced by Content-Length, when the body comes as it is (not compressed). */
  length?: number;
  /** Lets go of the request once read or refused: a decompressor is unhooked, so the rest can be dropped. */
  release(): void;
}

/** The request body as it was before Content-Encoding (gzip, deflate, br or none). */
export function decodedBody(req: IncomingMessage): BodySource {
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') {
    const length = req.headers['content-length'];
    return { stream: req, length: length === undefined ? undefined : Number(length), release: () => {} };
  }
  const create = DECOMPRESSORS[encoding];
  if (!create) throw new HttpError(415, `Unsupported content encoding ${encoding}: send the body as it is, or gzip, deflate or br`);
  const decompressor = create();
  const failed = () => decompressor.destroy(requestAborted());
  req.once('error', failed);
  req.pipe(decompressor);
  return {
    stream: decompressor,
    release: () => {
      req.off('error', failed);
      req.unpipe(decompressor);
      decompressor.destroy();
    },
  };
}
