// The import's limits, made small through the environment: IMPORT_MAX_ROWS (a 400 naming it) and
// IMPORT_MAX_BYTES (a 413, raw or multipart). Nothing is written when a limit is passed.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

const MAX_ROWS = 3;
const MAX_BYTES = 300;

let t: TestApp;
let a: Session & { organizationId: string };
test.before(async () => {
  t = await createTestApp({ env: { IMPORT_MAX_ROWS: String(MAX_ROWS), IMPORT_MAX_BYTES: String(MAX_BYTES) } });
  a = await newTenant(t);
});
test.after(async () => {
  await t.close();
});

async function tagCount(): Promise<number> {
  const [{ n }] = await t.db('tag').where({ tenantId: a.tenantId }).count({ n: '*' });
  return Number(n);
}

/** A POST whose body is sent in pieces, without a Content-Length (Transfer-Encoding: chunked). */
async function chunkedPost(path: string, headers: Record<string, string>, pieces: string[]): Promise<{ status: number; body: any }> {
  const server = http.createServer(t.koa.callback());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve, reject) => {
      const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      });
      req.on('error', reject);
      for (const piece of pieces) req.write(piece);
      req.end();
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

const csvOf = (rows: number, prefix = 'T') => ['name,color', ...Array.from({ length: rows }, (_, i) => `${prefix}${i},#1`)].join('\n');

function assertError(res: { status: number; body: any }, status: number, message: string | string[]) {
  assert.is(res.status, status, JSON.stringify(res.body));
  assert.equal(res.body, { statusCode: status, message, error: status === 413 ? 'Payload Too Large' : 'Bad Request' });
}

test('IMPORT_MAX_ROWS: as many rows import; one more is a 400 naming the limit, CSV and JSON alike', async () => {
  const tooMany = [`the file has more than ${MAX_ROWS} rows, the most one import takes (IMPORT_MAX_ROWS)`];
  assertError(await t.http.post('/api/import/tags').set(a.auth).set('Content-Type', 'text/csv').send(csvOf(MAX_ROWS + 1)), 400, tooMany);
  const json = Array.from({ length: MAX_ROWS + 1 }, (_, i) => ({ name: `J${i}`, color: '#1' }));
  assertError(await t.http.post('/api/import/tags').set(a.auth).send(json), 400, tooMany);
  assert.is(await tagCount(), 0);
  // Blank lines are not rows.
  const res = await t.http.post('/api/import/tags').set(a.auth).set('Content-Type', 'text/csv').send(`${csvOf(MAX_ROWS)}\n\n\n`);
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal(res.body, { imported: MAX_ROWS, errors: [] });
  assert.is(await tagCount(), MAX_ROWS);
});

test('IMPORT_MAX_BYTES: a larger raw body is a 413, whether its length is announced or not; nothing written', async () => {
  const before = await tagCount();
  const big = `name,color\n${'x'.repeat(MAX_BYTES)},#1\n`;
  assertError(await t.http.post('/api/import/tags').set(a.auth).set('Content-Type', 'text/csv').send(big), 413, `Request body is larger than the limit of ${MAX_BYTES} bytes`);
  // Chunked: no Content-Length, so the limit is found while reading.
  const chunked = await chunkedPost('/api/import/tags', { ...a.auth, 'Content-Type': 'text/csv' }, [big.slice(0, 100), big.slice(100)]);
  assertError(chunked, 413, `Request body is larger than the limit of ${MAX_BYTES} bytes`);
  assert.is(await tagCount(), before);
});

test('IMPORT_MAX_BYTES: a larger multipart file is a 413; one within the limit imports', async () => {
  const before = await tagCount();
  const big = `name,color\n${'y'.repeat(MAX_BYTES)},#1\n`;
  const res = await t.http.post('/api/import/tags').set(a.auth).attach('file', Buffer.from(big), { filename: 'big.csv', contentType: 'text/csv' });
  assertError(res, 413, `File is larger than the limit of ${MAX_BYTES} bytes`);
  assert.is(await tagCount(), before);
  const ok = await t.http.post('/api/import/tags').set(a.auth).attach('file', Buffer.from('name,color\nSmall,#1\n'), { filename: 'small.csv', contentType: 'text/csv' });
  assert.is(ok.status, 201, JSON.stringify(ok.body));
  assert.is(await tagCount(), before + 1);
});

test.run();
