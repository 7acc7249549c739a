// REQUEST_TIMEOUT_MS on the real server process (`npm start`): a client has that long to send a
// whole request, headers and body. One that trickles its body, or its headers, slower than that
// is answered 408 and its connection closed within about the limit (not Node's default check
// every 30 s), while the server goes on serving everyone else. What Node answers itself (408,
// a request it cannot parse, headers too large) comes in the error envelope too.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { checkIntervalMs } from '../../engine/http/stoppable-server.js';
import { newOwner, openRequest, send, sleep, type Owner } from '../helpers/http-client.js';
import { migratedDataFolder } from '../helpers/migrated-folder.js';
import { killServers, startServer, type ServerProcess, dropSchema } from '../helpers/server-process.js';

const DATABASE_URL = process.env.DATABASE_URL;
const LIMIT_MS = 1000;
/**
 * What the server may take beyond the limit: its check interval, and a loaded machine's delays
 * (generous: what this catches is a check every 30 s, Node's default, or none).
 */
const SLACK_MS = checkIntervalMs(LIMIT_MS) + 3000;
const cwd = mkdtempSync(path.join(tmpdir(), 'request-timeout-test-'));
const schema = `request_timeout_test_${randomBytes(4).toString('hex')}`;
let server: ServerProcess;
let owner: Owner;

test.before(async () => {
  const env = DATABASE_URL ? { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' } : { DATA_DIR: await migratedDataFolder(path.join(cwd, 'data')) };
  server = await startServer({ ...env, REQUEST_TIMEOUT_MS: String(LIMIT_MS) }, cwd);
  owner = await newOwner(server.url);
});

test.after(async () => {
  if (server) assert.is(await server.stop(), 0, server.stderr());
  killServers();
  rmSync(cwd, { recursive: true, force: true });
  if (DATABASE_URL) await dropSchema(DATABASE_URL, schema);
});

interface Trickle {
  /** What the server sent back before the connection ended. */
  received: string;
  /** Milliseconds from the first byte sent to the end of the connection. */
  endedAfterMs: number;
  /** How many bytes had been trickled by then. */
  sentBytes: number;
}

/** Sends `head` at once, then one byte of `rest` every `everyMs` until the server ends the connection. */
function trickle(head: string, rest: string, everyMs: number): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let received = '';
    let sent = 0;
    let startedAt = 0;
    let timer: NodeJS.Timeout | undefined;
    socket.on('connect', () => {
      startedAt = Date.now();
      socket.write(head);
      timer = setInterval(() => {
        if (sent < rest.length && socket.writable) socket.write(rest[sent++]);
      }, everyMs);
    });
    socket.on('data', (chunk) => (received += chunk.toString()));
    // A reset after the answer is a way of ending too; what counts is what came before it.
    socket.on('error', () => {});
    socket.on('close', () => {
      clearInterval(timer);
      resolve({ received, endedAfterMs: Date.now() - startedAt, sentBytes: sent });
    });
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`the connection was still open after 20 s; received: ${JSON.stringify(received)}`));
    }, 20_000).unref();
  });
}

/** Health checks one after the other while `during` runs: every one must be answered (30 s: a guard against a hang). */
async function othersServedDuring<T>(during: Promise<T>): Promise<{ result: T; answered: number[] }> {
  const answered: number[] = [];
  let over = false;
  const checks = (async () => {
    while (!over) {
      const began = Date.now();
      const res = await send(`${server.url}/api/health`, { timeoutMs: 30_000 });
      assert.is(res.status, 200, JSON.stringify(res.body));
      answered.push(Date.now() - began);
      await sleep(100);
    }
  })();
  const result = await during.finally(() => (over = true));
  await checks;
  return { result, answered };
}

/** A raw HTTP answer: this status, closing the connection, with the error envelope as its body. */
function assertEnvelope(raw: string, status: number, message: string | string[]) {
  const [head, body] = raw.split('\r\n\r\n');
  assert.match(head, new RegExp(`^HTTP/1\\.1 ${status} ${STATUS_CODES[status]}\r\n`), raw);
  assert.match(head, /\r\nConnection: close(\r\n|$)/i, raw);
  assert.match(head, /\r\nContent-Type: application\/json/i, raw);
  // The security headers of the app's own answers.
  assert.match(head, /\r\nX-Content-Type-Options: nosniff\r\n/, raw);
  assert.match(head, /\r\nContent-Security-Policy: default-src 'none';frame-ancestors 'none'\r\n/, raw);
  assert.match(head, /\r\nX-Frame-Options: DENY\r\n/, raw);
  assert.equal(JSON.parse(body), { statusCode: status, message, error: STATUS_CODES[status] });
}

/** What the server answers to `raw` sent at once on a connection of its own, until it closes it. */
function exchange(raw: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(server.port, '127.0.0.1', () => socket.write(raw));
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString()));
    socket.on('error', () => {});
    socket.on('close', () => resolve(received));
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after 10 s: ${JSON.stringify(received)}`));
    }, 10_000).unref();
  });
}

function assertTimedOut(t: Trickle, what: string) {
  assert.ok(t.endedAfterMs >= LIMIT_MS - 50, `${what}: ended after ${t.endedAfterMs} ms, before the limit`);
  assert.ok(t.endedAfterMs <= LIMIT_MS + SLACK_MS, `${what}: ended after ${t.endedAfterMs} ms (limit ${LIMIT_MS} ms)`);
  // The 408 comes before the close; a reset racing that answer may hide it, never a success.
  if (t.received) assertEnvelope(t.received, 408, 'The request was not received in time');
  assert.not.match(t.received, /^HTTP\/1\.1 2/, what);
}

test('a body trickled slower than REQUEST_TIMEOUT_MS: 408 and the connection closed within about the limit; others are served meanwhile', async () => {
  const body = JSON.stringify({ name: 'Slow', color: '#000000', organizationId: owner.organizationId });
  const head =
    `POST /api/tags HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${owner.auth.Authorization}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const { result, answered } = await othersServedDuring(trickle(head, body, 200));
  assertTimedOut(result, 'slow body');
  assert.ok(result.sentBytes < body.length, 'the body was still incomplete');
  // The slow request was in flight for at least the limit: checks after the first were answered beside it.
  assert.ok(answered.length >= 2, `health checks answered meanwhile: ${answered.length}`);
  console.log(`slow body: connection ended ${result.endedAfterMs} ms after its first byte (limit ${LIMIT_MS} ms), ${JSON.stringify(result.received.split('\r\n')[0])}; health meanwhile ${Math.max(...answered)} ms at most`);
});

test('headers trickled slower than the limit: 408 and closed within about the limit', async () => {
  const rest = Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: ${i}\r\n`).join('');
  const { result } = await othersServedDuring(trickle('GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n', rest, 100));
  assertTimedOut(result, 'slow headers');
});

test('a body that takes less than the limit is answered as usual; the server still serves after the 408s', async () => {
  const body = JSON.stringify({ name: 'Unhurried', color: '#ffffff', organizationId: owner.organizationId });
  const req = openRequest(`${server.url}/api/tags`, { headers: owner.auth, contentLength: body.length });
  req.write(body.slice(0, 20));
  await req.received;
  // A client that pauses, well within the limit (what is tested is that the pause is allowed).
  await sleep(LIMIT_MS / 4);
  req.end(body.slice(20));
  const res = await req.answer;
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is((await send(`${server.url}/api/health`)).status, 200);
});

test('a request Node cannot parse: 400, headers too large: 431, both in the error envelope; the server serves on', async () => {
  assertEnvelope(await exchange('NOT HTTP AT ALL\r\n\r\n'), 400, ['The request is not valid HTTP/1.1']);
  const huge = `GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`;
  assertEnvelope(await exchange(huge), 431, 'The request headers are too large');
  assert.is((await send(`${server.url}/api/health`)).status, 200);
});

test.run();
