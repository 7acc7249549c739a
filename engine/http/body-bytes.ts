// A request body read into memory, never past a limit, for a route that reads its own body (the
// import's raw CSV or JSON file; JSON bodies are koa-bodyparser's). One byte more than the limit is
// a 413 and reading stops there (what becomes of the rest, and of the connection, is settled in
// unread-body.ts).
import type { Readable } from 'node:stream';
import { badRequest, HttpError } from '../errors.js';

export const requestAborted = () => badRequest('the request was aborted');

export const unreadableBody = () => badRequest('the request body could not be read');

/**
 * The bytes `source` yields, up to `max`; `tooLarge()` past it. An error of the stream is a 400
 * (an HttpError it carries is kept), and so is a stream that closes before its end (the client
 * went away).
 */
export function readBodyBytes(source: Readable, max: number, tooLarge: () => HttpError): Promise<Buffer> {
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
      reject(err instanceof HttpError ? err : unreadableBody());
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
