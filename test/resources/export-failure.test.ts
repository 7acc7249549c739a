// An export whose database fails. Before the first byte the client still gets the error envelope;
// once the download has started the status cannot change, so the response is cut off (the client
// sees a truncated transfer, never a complete-looking file) and the error reaches the app's
// 'error' event. The database "fails" by the exported table being renamed between two batches,
// while the client holds the download back: the rows are far more than the socket buffers hold,
// so the server is waiting for the client, with batches still to fetch, when the table goes.
import { randomBytes } from 'node:crypto';
import { createServer, get as httpGet, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertNoLeak } from '../helpers/error-envelope.js';
import { waitFor } from '../helpers/wait.js';

let t: TestApp;
let server: Server;
let base: string;
let tenant: Session & { organizationId: string };
const reported: unknown[] = [];

/**
 * 20,000 rows of about 1.1 kB: some 22 MB of CSV, well past what loopback sockets buffer (a few
 * MB). The descriptions are random hex, which deflate only halves, so the zip is large too: a
 * thousand of them, each used by every thousandth row; the export's order (by id) puts the repeats
 * at random distances, nearly all past deflate's 32 kB window. Random bytes made here cost the
 * embedded database a fraction of hashing them in SQL.
 */
const ROWS = 20_000;
const NOISE = Array.from({ length: 1000 }, () => randomBytes(496).toString('hex'));

test.before(async () => {
  t = await createTestApp();
  tenant = await newTenant(t);
  await t.db.raw(
    `insert into tag ("tenantId", "organizationId", name, color, description) select ?, ?, 'tag-' || n, 'red', noise.text from generate_series(1, ${ROWS}) as n join unnest(?::text[]) with ordinality as noise(text, k) on k = n % 1000 + 1`,
    [tenant.tenantId, tenant.organizationId, NOISE],
  );
  // Errors raised after a response has started go to the app's 'error' event: collect them here
  // instead of Koa's default printing.
  t.koa.off('error', t.koa.onerror);
  t.koa.on('error', (err) => reported.push(err));
  server = createServer(t.koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

const rename = (from: string, to: string) => t.db.raw('alter table ?? rename to ??', [from, to]);

/** Starts a download and resolves with the response once its first bytes are in, paused. */
function startDownload(path: string): Promise<{ res: IncomingMessage; received: () => number }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${base}${path}`, { headers: tenant.auth }, (res) => {
      let bytes = 0;
      res.once('data', (chunk: Buffer) => {
        bytes += chunk.length;
        res.pause();
        res.on('data', (more: Buffer) => (bytes += more.length));
        resolve({ res, received: () => bytes });
      });
    });
    req.on('error', reject);
  });
}

/** How the download ended: 'end' (complete) or the error or abort that cut it. */
function outcome(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    res.once('end', () => resolve('end'));
    res.once('error', (err) => resolve(`error: ${err.message}`));
    res.once('aborted', () => resolve('aborted'));
    res.resume();
  });
}

async function assertCutOff(path: string, contentType: string) {
  reported.length = 0;
  const { res, received } = await startDownload(path);
  assert.is(res.statusCode, 200);
  assert.is(res.headers['content-type'], contentType);
  await rename('tag', 'tag_gone');
  try {
    const ended = await outcome(res);
    assert.is.not(ended, 'end', 'the download ended as if complete');
    assert.ok(received() < ROWS * 992, `received ${received()} bytes, the whole export`);
  } finally {
    await rename('tag_gone', 'tag');
  }
  // The error reached the app's error event (what the server logs), with its database cause.
  await waitFor(() => reported.length > 0, 'the failure to be reported');
  assert.match(String((reported[0] as Error).message), /tag/);
}

test('a failure mid-download cuts the CSV transfer off and is reported, the status having been sent', async () => {
  await assertCutOff('/api/export/tag', 'text/csv; charset=utf-8');
});

test('the same for JSON', async () => {
  await assertCutOff('/api/export/tag?format=json', 'application/json; charset=utf-8');
});

test('the same for the zip, when the failing resource is not its first entry', async () => {
  await assertCutOff('/api/export', 'application/zip');
});

test('a failure before the first byte is still an error envelope, with nothing of the database in it', async () => {
  await rename('tag', 'tag_gone');
  try {
    for (const path of ['/api/export/tag', '/api/export/tag?format=json']) {
      const res = await t.http.get(path).set(tenant.auth);
      assertError(res, 500, 'Internal server error');
      assertNoLeak(res);
    }
  } finally {
    await rename('tag_gone', 'tag');
  }
  // Healthy again: the whole export arrives.
  const res = await t.http.get('/api/export/tag?format=json').set(tenant.auth);
  assert.is(res.status, 200);
  assert.is(res.body.length, ROWS);
});

test.run();
