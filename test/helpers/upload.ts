// Upload test tools: multipart bodies written by hand (so a test can send exactly what a broken
// or hostile client would), raw requests over a real socket (chunked bodies, announced lengths,
// aborted uploads), and what the upload folder holds.
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { createServer, request, type ClientRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TestApp } from './app.js';

export const BOUNDARY = 'upload-test-boundary-7d1f0c';
export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

export type Part =
  | { name: string; value: string }
  | { name: string; filename: string; type?: string; data: Buffer };

/** One part's header and body, with the CRLF that ends it. */
export function partBytes(part: Part): Buffer {
  const disposition = 'filename' in part
    ? `form-data; name="${part.name}"; filename="${part.filename}"`
    : `form-data; name="${part.name}"`;
  const head = [`--${BOUNDARY}`, `Content-Disposition: ${disposition}`];
  if ('filename' in part) head.push(`Content-Type: ${part.type ?? 'application/octet-stream'}`);
  const body = 'filename' in part ? part.data : Buffer.from(part.value, 'utf8');
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'utf8'), body, Buffer.from('\r\n')]);
}

export const closing = () => Buffer.from(`--${BOUNDARY}--\r\n`);

/** A complete multipart/form-data body (boundary BOUNDARY). */
export function multipartBody(...parts: Part[]): Buffer {
  return Buffer.concat([...parts.map(partBytes), closing()]);
}

/** Every file under a folder, as paths relative to it (folders themselves do not count). */
export function filesIn(dir: string): string[] {
  const found: string[] = [];
  const walk = (sub: string) => {
    let entries;
    try {
      entries = readdirSync(path.join(dir, sub), { withFileTypes: true });
    } catch (err: any) {
      if (err.code === 'ENOENT') return;
      throw err;
    }
    for (const entry of entries) {
      const name = path.join(sub, entry.name);
      if (entry.isDirectory()) walk(name);
      else found.push(name);
    }
  };
  walk('');
  return found.sort();
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

/** A listening server of the test app, for requests supertest cannot make; close it after the suite. */
export async function listen(t: TestApp): Promise<{ server: Server; port: number }> {
  const server = createServer(t.koa.callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

/**
 * A POST whose body is written chunk by chunk (chunked encoding unless the headers give a
 * Content-Length). The answer is read whenever it comes, even while the body is still being
 * written; writing stops quietly when the server has closed the connection.
 */
export function rawPost(port: number, path: string, headers: Record<string, string>, chunks: Iterable<Buffer>): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = request({ host: '127.0.0.1', port, method: 'POST', path, headers, agent: false }, (res) => {
      answered = true;
      const body: Buffer[] = [];
      res.on('data', (chunk: Buffer) => body.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(body).toString('utf8');
        resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined });
      });
      res.on('error', reject);
    });
    // After the answer the server closes the connection; a write then fails, which is expected.
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    (async () => {
      for (const chunk of chunks) {
        if (answered || req.destroyed) return;
        if (!req.write(chunk)) await drained(req);
      }
      if (!answered && !req.destroyed) req.end();
    })().catch(() => {});
  });
}

/** Until the request can take more, or is gone (listeners removed either way). */
function drained(req: ClientRequest): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      req.off('drain', done);
      req.off('close', done);
      resolve();
    };
    req.on('drain', done);
    req.on('close', done);
  });
}

/** `total` bytes of `fill`, as chunks of 64 KiB. */
export function* repeated(total: number, fill = 0x61): Generator<Buffer> {
  const chunk = Buffer.alloc(64 * 1024, fill);
  for (let left = total; left > 0; left -= chunk.length) yield left >= chunk.length ? chunk : chunk.subarray(0, left);
}
