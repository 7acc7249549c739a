// A refused body never poisons its connection. On one keep-alive connection, as a pooling client
// or a load balancer uses it, a request whose body is refused (too large, too deep, the wrong type,
// or before it is read at all: 401, 403, 415, 429, 404) gets its answer in full; then the
// connection either serves the next request, or the answer said `Connection: close` and the
// server ends the connection right after it. Never the old failure: a 413 that said keep-alive,
// after which the next request on the connection hung until the connection was reset.
// Through the production HTTP server (engine/http/stoppable-server.ts) over the in-process app.
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createStoppableServer, type StoppableServer } from '../../engine/http/stoppable-server.js';
import { DRAIN_BYTES } from '../../engine/http/unread-body.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { png } from '../helpers/images.js';
import { siblingApps } from '../helpers/ratelimit.js';
import { chunked, head, RawConnection, type RawResponse } from '../helpers/raw-connection.js';
import { closing, MULTIPART, partBytes } from '../helpers/upload.js';

const BODY_LIMIT = 4096;
const FILE_LIMIT = 100_000;
/** Far past every limit, and past what the kernel buffers of one connection take at once. */
const BIG = 4 * 1024 * 1024;

let t: TestApp;
let a: Session & { organizationId: string };
const servers: StoppableServer[] = [];
let port: number;
const siblings = siblingApps(() => t, { env: { RATE_LIMIT_SCALE: '0.01' } });

async function serve(callback: Parameters<typeof createStoppableServer>[0]): Promise<number> {
  const stoppable = createStoppableServer(callback, { requestTimeoutMs: 60_000 });
  servers.push(stoppable);
  await new Promise<void>((resolve) => stoppable.server.listen(0, '127.0.0.1', resolve));
  return (stoppable.server.address() as AddressInfo).port;
}

test.before(async () => {
  t = await createTestApp({
    env: { BODY_LIMIT: String(BODY_LIMIT), JSON_MAX_ARRAY: '10', IMPORT_MAX_BYTES: String(FILE_LIMIT), UPLOAD_MAX_BYTES: String(FILE_LIMIT) },
  });
  a = await newTenant(t);
  port = await serve(t.koa.callback());
});
test.after(async () => {
  for (const { server } of servers) {
    server.closeAllConnections();
    server.close();
  }
  await siblings.closeAll();
  await t.close();
});

const tags = async () => Number((await t.db('tag').where({ tenantId: a.tenantId }).count({ n: '*' }))[0].n);
const json = (bytes: number) => Buffer.from(JSON.stringify({ name: 'n', color: '#1', description: 'x'.repeat(bytes) }));
const bearer = () => ({ Authorization: a.auth.Authorization });
const closes = (res: RawResponse) => /\bclose\b/i.test(res.headers.connection ?? '');

interface Outcome {
  first: RawResponse;
  /** The server closed the connection after the first answer (which said so). */
  closed: boolean;
}

/**
 * Sends `request` (head and body, written without waiting for the server to take it) on a fresh
 * connection and reads the answer; then either the answer said `Connection: close` and the server
 * ends the connection (nothing more arrives), or a second request on the same connection is
 * answered. Either wait is bounded: a hang fails the test.
 */
async function refusedThenReused(request: Buffer, onPort = port): Promise<Outcome> {
  const connection = new RawConnection(onPort);
  try {
    void connection.write(request);
    const first = await connection.response();
    if (closes(first)) {
      await connection.end();
      assert.is(connection.leftover, 0, 'nothing after the answer');
      return { first, closed: true };
    }
    await connection.write(head('GET', '/api/health', {}));
    const second = await connection.response();
    assert.is(second.status, 200, JSON.stringify(second.body));
    return { first, closed: false };
  } finally {
    connection.close();
  }
}

const post = (path: string, headers: Record<string, string | number>, body: Buffer, asChunks = true) =>
  Buffer.concat([
    head('POST', path, { ...headers, ...(asChunks ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': body.length }) }),
    asChunks ? chunked(...split(body)) : body,
  ]);

/** A body in chunks of 64 KiB, as a streaming client sends it. */
function split(body: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  for (let i = 0; i < body.length; i += 65536) pieces.push(body.subarray(i, i + 65536));
  return pieces;
}

test('JSON body past BODY_LIMIT, chunked: 413, then the connection closes (it no longer hangs the next request)', async () => {
  const before = await tags();
  const { first, closed } = await refusedThenReused(post('/api/tags', { ...bearer(), 'Content-Type': 'application/json' }, json(BIG)));
  assertError(first, 413, 'Request body is larger than the limit');
  assert.ok(closed, 'a body of unknown length, cut short: the connection closes');
  assert.is(await tags(), before);
});

test('JSON body past BODY_LIMIT with a Content-Length: a large one closes the connection; a small one is drained and it stays', async () => {
  const large = await refusedThenReused(post('/api/tags', { ...bearer(), 'Content-Type': 'application/json' }, json(BIG), false));
  assertError(large.first, 413, 'Request body is larger than the limit');
  assert.ok(large.closed, 'more than DRAIN_BYTES left: closed rather than read');
  const small = await refusedThenReused(post('/api/tags', { ...bearer(), 'Content-Type': 'application/json' }, json(DRAIN_BYTES / 2), false));
  assertError(small.first, 413, 'Request body is larger than the limit');
  assert.not.ok(small.closed, 'a small announced rest is read and dropped; the connection is reused');
});

test('JSON depth and array limits: 400, and the connection serves the next request', async () => {
  const deep = Buffer.from(`{"a":${'['.repeat(40)}${']'.repeat(40)}}`);
  const depth = await refusedThenReused(post('/api/tags', { ...bearer(), 'Content-Type': 'application/json' }, deep));
  assertError(depth.first, 400, /nested deeper than/);
  const long = Buffer.from(JSON.stringify({ name: 'n', color: '#1', tagIds: Array.from({ length: 11 }, () => randomUUID()) }));
  const array = await refusedThenReused(post('/api/tags', { ...bearer(), 'Content-Type': 'application/json' }, long));
  assertError(array.first, 400, /more than 10 items/);
});

test('import past IMPORT_MAX_BYTES (raw CSV chunked, CSV with a length, multipart): 413, never a hung connection', async () => {
  const before = await tags();
  const csv = Buffer.concat([Buffer.from('name,color\n'), Buffer.alloc(BIG, 'x')]);
  const tooLarge = `Request body is larger than the limit of ${FILE_LIMIT} bytes`;
  assertError((await refusedThenReused(post('/api/import/tags', { ...bearer(), 'Content-Type': 'text/csv' }, csv))).first, 413, tooLarge);
  assertError((await refusedThenReused(post('/api/import/tags', { ...bearer(), 'Content-Type': 'text/csv' }, csv, false))).first, 413, tooLarge);
  const multipart = Buffer.concat([partBytes({ name: 'file', filename: 'big.csv', type: 'text/csv', data: csv }), closing()]);
  const viaForm = await refusedThenReused(post('/api/import/tags', { ...bearer(), 'Content-Type': MULTIPART }, multipart));
  assertError(viaForm.first, 413, /larger than the limit/);
  assert.is(await tags(), before);
});

test('image upload past UPLOAD_MAX_BYTES, or not an image: 413 / 415 mid-body, never a hung connection', async () => {
  const image = Buffer.concat([png(2, 2), Buffer.alloc(BIG)]);
  const upload = (data: Buffer, asChunks = true) =>
    post('/api/image-asset/upload', { ...bearer(), 'Content-Type': MULTIPART }, Buffer.concat([partBytes({ name: 'file', filename: 'a.png', type: 'image/png', data }), closing()]), asChunks);
  assertError((await refusedThenReused(upload(image))).first, 413, /larger than the limit/);
  assertError((await refusedThenReused(upload(image, false))).first, 413, /larger than the limit/);
  assertError((await refusedThenReused(upload(Buffer.alloc(BIG, 'text ')))).first, 415, /Unsupported media type/);
  assert.is(Number((await t.db('image_asset').count({ n: '*' }))[0].n), 0);
});

test('refusals before the body is read (401, 403, 415, 404): the large body does not hold the connection', async () => {
  const body = json(BIG);
  const noToken = await refusedThenReused(post('/api/tags', { 'Content-Type': 'application/json' }, body));
  assertError(noToken.first, 401, 'Unauthorized');
  const otherTenant = await refusedThenReused(post('/api/tags', { ...bearer(), 'Tenant-Id': randomUUID(), 'Content-Type': 'application/json' }, body));
  assertError(otherTenant.first, 403, 'Forbidden resource');
  const text = await refusedThenReused(post('/api/tags', { ...bearer(), 'Content-Type': 'text/plain' }, body));
  assertError(text.first, 415, /Unsupported media type/);
  const nowhere = await refusedThenReused(post('/api/no-such-route', { ...bearer(), 'Content-Type': 'text/plain' }, body));
  assertError(nowhere.first, 404, 'Cannot POST /api/no-such-route');
  // Each of them, a body too large to drain: the connection closed after the answer.
  for (const outcome of [noToken, otherTenant, text, nowhere]) assert.ok(outcome.closed);
});

test('429 before the body is read: the large body does not hold the connection', async () => {
  const limited = siblings.create();
  const limitedPort = await serve(limited.koa.callback());
  // The anonymous tier, scaled to one request a minute: the first is counted, the second refused.
  const counted = await refusedThenReused(head('GET', '/api/tags', {}), limitedPort);
  assertError(counted.first, 401);
  const refused = await refusedThenReused(post('/api/tags', { 'Content-Type': 'application/json' }, json(BIG)), limitedPort);
  assertError(refused.first, 429);
  assert.ok(refused.first.headers['retry-after']);
});

test('a client that reads only after sending its whole body still gets the answer in full (the close lingers)', async () => {
  for (const request of [
    post('/api/tags', { ...bearer(), 'Content-Type': 'application/json' }, json(BIG)),
    post('/api/import/tags', { ...bearer(), 'Content-Type': 'text/csv' }, Buffer.alloc(BIG, 'x'), false),
    // Refused while it inflates: the rest is piped into the decompressor, which no longer reads.
    // (Random text barely compresses: megabytes on the wire too.)
    post('/api/tags', { ...bearer(), 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' }, gzipSync(JSON.stringify({ description: randomBytes(BIG).toString('base64') })), false),
  ]) {
    const connection = new RawConnection(port);
    try {
      // Nothing is read until the last byte of the body has been taken: a reset from a server
      // that closed with the body unread would throw the answer away before it was read.
      connection.socket.pause();
      await connection.write(request);
      connection.socket.resume();
      const answer = await connection.response();
      assertError(answer, 413);
      assert.ok(closes(answer));
      await connection.end();
      assert.is(connection.error, undefined, `no reset: ${connection.error?.code}`);
    } finally {
      connection.close();
    }
  }
});

test.run();
