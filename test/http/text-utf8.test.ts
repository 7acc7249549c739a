// Text is valid UTF-8 or refused, never stored damaged. Bytes that are not UTF-8 in a JSON body,
// a lone surrogate escape ("\ud800", which JSON.parse takes), a charset other than UTF-8, a URL
// whose percent-escapes are not UTF-8 (query or path), form text fields and import files: each a
// 400 (415 for the charset) in the envelope, and nothing written. Before, each was a 201 that
// stored U+FFFD in place of what was sent.
import { request as httpRequest, type Server } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { LONE_SURROGATE } from '../../engine/http/body.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { filesIn, listen, MULTIPART, multipartBody } from '../helpers/upload.js';
import { png } from '../helpers/images.js';

let t: TestApp;
let a: Session & { organizationId: string };
let server: Server;
let port: number;

test.before(async () => {
  t = await createTestApp();
  a = await newTenant(t);
  ({ server, port } = await listen(t));
});
test.after(async () => {
  server.close();
  await t.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** A request with exactly these body bytes (supertest would turn a Buffer into JSON of its own). */
function sendBytes(method: string, path: string, headers: Record<string, string>, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers: { ...a.auth, 'Content-Length': String(body.length), ...headers }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const tags = async () => Number((await t.db('tag').where({ tenantId: a.tenantId }).count({ n: '*' }))[0].n);
const images = async () => Number((await t.db('image_asset').where({ tenantId: a.tenantId }).count({ n: '*' }))[0].n);
const bytes = (...parts: Array<string | number[]>) => Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
const postTag = (body: Buffer | string, type = 'application/json', headers: Record<string, string> = {}) =>
  sendBytes('POST', '/api/tags', { 'Content-Type': type, ...headers }, Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'));

const NOT_UTF8 = 'Request body must be UTF-8 text';
const BAD_URL = 'the URL must be UTF-8 once its percent-escapes are decoded';

test('JSON body: bytes that are not UTF-8 are a 400, whatever the kind of damage; nothing written', async () => {
  const before = await tags();
  const damaged = [
    [0xff], // never valid
    [0xc3], // a sequence cut short (then an ASCII quote)
    [0xc0, 0xaf], // an overlong "/"
    [0xed, 0xa0, 0x80], // a surrogate, encoded
    [0xf4, 0x90, 0x80, 0x80], // past U+10FFFF
  ];
  for (const bad of damaged) {
    assertError(await postTag(bytes('{"name":"a', bad, '","color":"#1"}')), 400, NOT_UTF8);
    // The bytes are named before the JSON they also break.
    assertError(await postTag(bytes('{"name":', bad, '}')), 400, NOT_UTF8);
  }
  // Compressed, the check is on what the body decompresses to.
  const gzipped = await postTag(gzipSync(bytes('{"name":"a', [0xff], '","color":"#1"}')), 'application/json', { 'Content-Encoding': 'gzip' });
  assertError(gzipped, 400, NOT_UTF8);
  assert.is(await tags(), before);
});

test('JSON body: every byte UTF-8 uses outside ASCII comes through exactly, compressed or not', async () => {
  // U+0080-U+00BF spell every continuation byte (80-BF after C2); then one character for each
  // lead byte of two (C3-DF), three (E0-EF) and four (F0-F4) bytes.
  const codePoints = [
    ...Array.from({ length: 0x40 }, (_, i) => 0x80 + i),
    ...Array.from({ length: 0x1d }, (_, i) => (i + 3) << 6),
    ...Array.from({ length: 0x10 }, (_, i) => Math.max(i << 12, 0x800)),
    ...Array.from({ length: 5 }, (_, i) => Math.max(i << 18, 0x10000)),
  ];
  const text = String.fromCodePoint(...codePoints);
  const used = new Set(Buffer.from(text, 'utf8'));
  for (let byte = 0x80; byte <= 0xf4; byte++) assert.is(used.has(byte), byte !== 0xc0 && byte !== 0xc1, `byte ${byte.toString(16)}`);
  for (const [i, encode] of [(b: Buffer) => b, (b: Buffer) => gzipSync(b)].entries()) {
    const body = Buffer.from(JSON.stringify({ name: `every byte ${i}`, color: '#1', description: text }), 'utf8');
    const res = await postTag(encode(body), 'application/json', i ? { 'Content-Encoding': 'gzip' } : {});
    assert.is(res.status, 201, JSON.stringify(res.body));
    assert.is(res.body.description, text);
    assert.is((await t.db('tag').where({ id: res.body.id }).first()).description, text);
  }
});

test('JSON body: a lone surrogate escape, in a value or a key, at any depth, is a 400; a pair is text', async () => {
  const before = await tags();
  for (const raw of [
    '{"name":"a\\ud800","color":"#1"}',
    '{"name":"a\\udc00b","color":"#1"}',
    '{"name":"\\ude00\\ud83d","color":"#1"}',
    '{"name":"a","color":"#1","description":"\\ud83d"}',
    '{"name":"a","color":"#1","\\ud800":1}',
    '{"name":"a","color":"#1","tags":[{"id":"\\udfff"}]}',
  ]) {
    assertError(await postTag(raw), 400, `body: ${LONE_SURROGATE}`);
  }
  const tag = await sendBytes('PATCH', '/api/tags/00000000-0000-4000-8000-000000000000', { 'Content-Type': 'application/json' }, Buffer.from('{"name":"\\ud800"}'));
  assertError(tag, 400, `body: ${LONE_SURROGATE}`);
  assert.is(await tags(), before);
  // A surrogate pair (escaped or not) and plain non-ASCII text are stored as sent.
  const ok = await postTag('{"name":"\\ud83d\\ude00 é 😀 日本","color":"#1"}');
  assert.is(ok.status, 201, JSON.stringify(ok.body));
  assert.is(ok.body.name, '😀 é 😀 日本');
  assert.is((await t.db('tag').where({ id: ok.body.id }).first()).name, '😀 é 😀 日本');
});

test('Content-Type charset: UTF-8 (any case, utf8 or quoted) is read; another is a 415 and nothing written', async () => {
  const before = await tags();
  for (const charset of ['latin1', 'ISO-8859-1', 'utf-16', 'windows-1252', 'us-ascii']) {
    const body = Buffer.from('{"name":"caf\xe9","color":"#1"}', 'latin1');
    assertError(await postTag(body, `application/json; charset=${charset}`), 415, `Unsupported charset ${charset}: send UTF-8 text`);
  }
  assert.is(await tags(), before);
  for (const [i, charset] of ['utf-8', 'UTF-8', 'utf8', '"utf-8"'].entries()) {
    const res = await postTag(`{"name":"café ${i}","color":"#1"}`, `application/json; charset=${charset}`);
    assert.is(res.status, 201, `${charset}: ${JSON.stringify(res.body)}`);
    assert.is(res.body.name, `café ${i}`);
  }
});

test('URL: a query or path whose percent-escapes are not UTF-8 is a 400 on every route, before anything runs', async () => {
  const before = await tags();
  for (const path of [
    '/api/tags?search=%FF',
    '/api/tags?where[name]=%ED%A0%80',
    '/api/tags?search=caf%E9',
    '/api/tags?search=%C3',
    '/api/tags/getByName/%FF',
    '/api/tags/%E9',
    '/api/health?x=%80',
    '/api/no-such-route/%FF',
  ]) {
    assertError(await t.http.get(path).set(a.auth), 400, BAD_URL);
  }
  // Before authentication too: the request is malformed whoever sends it.
  assertError(await t.http.get('/api/tags?search=%FF'), 400, BAD_URL);
  // A write with such a query string writes nothing.
  assertError(await t.http.post('/api/tags?x=%FE').set(a.auth).send({ name: 'q', color: '#1' }), 400, BAD_URL);
  assert.is(await tags(), before);
  // UTF-8 escapes, ASCII escapes and a lone % are fine.
  for (const path of ['/api/tags?search=caf%C3%A9', '/api/tags?where%5Bname%5D=%F0%9F%98%80', '/api/tags?search=100%', '/api/tags?search=%zz']) {
    const res = await t.http.get(path).set(a.auth);
    assert.is(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
  }
  const named = await postTag('{"name":"café","color":"#1"}');
  assert.is((await t.http.get('/api/tags/getByName/caf%C3%A9').set(a.auth)).body.id, named.body.id);
});

test('multipart: a text field or a file name that is not UTF-8 is a 400; nothing stored', async () => {
  const file = { name: 'file', filename: 'a.png', type: 'image/png', data: png(2, 2) };
  const send = (body: Buffer) => t.http.post('/api/image-asset/upload').set(a.auth).set('Content-Type', MULTIPART).send(body);
  const badName = multipartBody({ name: 'name', value: 'x' }, file);
  const index = badName.indexOf('\r\n\r\nx\r\n') + 4;
  badName[index] = 0xff;
  assertError(await send(badName), 400, 'name must be UTF-8 text');
  const badFilename = multipartBody({ ...file, filename: 'a\u00ff.png' });
  const at = badFilename.indexOf(Buffer.from('a\u00ff.png', 'utf8'));
  // The UTF-8 of ÿ (C3 BF) becomes C3 41: a lead byte without its continuation.
  badFilename[at + 2] = 0x41;
  assertError(await send(badFilename), 400, 'the name of the file in "file" must be UTF-8 text');
  assert.is(await images(), 0);
  assert.equal(filesIn(t.config.uploadDir), []);
  const ok = await send(multipartBody({ name: 'name', value: 'Café 😀' }, file));
  assert.is(ok.status, 201, JSON.stringify(ok.body));
  assert.is(ok.body.name, 'Café 😀');
});

test('import: a file that is not UTF-8, or JSON with a lone surrogate, is a 400; nothing written', async () => {
  const before = await tags();
  const raw = (type: string, body: Buffer | string, resource = 'tags') =>
    sendBytes('POST', `/api/import/${resource}`, { 'Content-Type': type }, Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'));
  assertError(await raw('text/csv', bytes('name,color\nBad', [0xff], ',#1\n')), 400, 'file must be UTF-8 text');
  assertError(await raw('application/json', bytes('[{"name":"Bad', [0xc3], '","color":"#1"}]')), 400, 'file must be UTF-8 text');
  assertError(await raw('application/json', '[{"name":"ok","color":"#1"},{"name":"bad\\ud800","color":"#1"}]'), 400, `the file: ${LONE_SURROGATE}`);
  assertError(await raw('application/json; charset=latin1', '[]'), 415, 'Unsupported charset latin1: send UTF-8 text');
  assert.is(await tags(), before);
  // A JSON cell of a CSV (a relation column) with a lone surrogate is that row's error.
  const projects = async () => Number((await t.db('organization_project').where({ tenantId: a.tenantId }).count({ n: '*' }))[0].n);
  const projectsBefore = await projects();
  const cell = await raw('text/csv', 'name,tagIds\nP,"[""\\ud800""]"\n', 'organization-project');
  assert.is(cell.status, 400, JSON.stringify(cell.body));
  assert.ok(JSON.stringify(cell.body).includes(`tagIds: ${LONE_SURROGATE}`.replace(/\\/g, '\\\\')), JSON.stringify(cell.body));
  assert.is(await projects(), projectsBefore);
});

test('Content-Encoding: gzip, deflate and br bodies are read; another encoding is a 415', async () => {
  const zipped = { 'Content-Encoding': 'gzip' };
  const res = await postTag(gzipSync('{"name":"zipped é","color":"#1"}'), 'application/json', zipped);
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(res.body.name, 'zipped é');
  for (const [encoding, compress] of [['deflate', deflateSync], ['br', brotliCompressSync]] as const) {
    const other = await postTag(compress(`{"name":"${encoding}","color":"#1"}`), 'application/json', { 'Content-Encoding': encoding });
    assert.is(other.status, 201, JSON.stringify(other.body));
  }
  // The coding is a case-insensitive token.
  const upper = await postTag(gzipSync('{"name":"GZIP","color":"#1"}'), 'application/json', { 'Content-Encoding': 'GZIP' });
  assert.is(upper.status, 201, JSON.stringify(upper.body));
  assertError(await postTag('{}', 'application/json', { 'Content-Encoding': 'compress' }), 415, /Unsupported content encoding compress/);
  assertError(await postTag('{"not":"gzip"}', 'application/json', zipped), 400, 'the request body could not be decompressed');
});

test.run();
