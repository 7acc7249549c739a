// Image upload, the ways that fail: every refusal is its envelope with a clear message, and after
// each one the upload folder holds no file (nor a half-written one) and no record was made. Types
// are judged by the bytes (a renamed text file, a BMP, an SVG), sizes past 10 MiB are refused
// whether the length is announced or not, malformed and unexpected multipart bodies, the JSON
// body, permissions, a database refusal after the file arrived, and a client that goes away.
import { request as httpRequest, type Server } from 'node:http';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertUnauthorized } from '../helpers/error-envelope.js';
import { bmp, jpeg, png } from '../helpers/images.js';
import { closing, filesIn, listen, MULTIPART, multipartBody, partBytes, rawPost, repeated } from '../helpers/upload.js';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let admin: Tenant;
let viewer: Session;
let employee: Session;
let server: Server;
let port: number;

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t, 'Refusals Co');
  viewer = await userWithRole(t, admin, 'VIEWER');
  employee = await userWithRole(t, admin, 'EMPLOYEE');
  ({ server, port } = await listen(t));
  // The aborted upload also reaches Koa's own error printer (the app has no 'error' listener):
  // the test's output stays readable without it.
  t.koa.silent = true;
});
test.after(async () => {
  server.close();
  await t.close();
});

const LIMIT = 10 * 1024 * 1024;
const UPLOAD = '/api/image-asset/upload';
const records = async () => Number((await t.db('image_asset').count({ n: '*' }))[0].n);

// Every test starts and ends with no record and no file.
test.before.each(async () => {
  assert.is(await records(), 0, 'no record before the test');
  assert.equal(filesIn(t.config.uploadDir), [], 'no file before the test');
});
test.after.each(async () => {
  assert.equal(filesIn(t.config.uploadDir), [], 'the upload folder holds no file');
  assert.is(await records(), 0, 'no record was made');
});

function upload(who: Session, data: Buffer, filename: string, type = 'application/octet-stream') {
  return t.http.post(UPLOAD).set(who.auth).attach('file', data, { filename, contentType: type });
}

const sendMultipart = (body: Buffer, who: Session = admin) => t.http.post(UPLOAD).set(who.auth).set('Content-Type', MULTIPART).send(body);

const TAKES = 'send a PNG, JPEG, GIF or WebP image';

test('415: a text file named x.png and declared image/png', async () => {
  assertError(await upload(admin, Buffer.from('just some text, honestly\n'.repeat(10)), 'x.png', 'image/png'), 415, `Unsupported media type: the file is not an image of a known kind; ${TAKES}`);
});

test('415: image kinds other than the four (a BMP, an SVG), whatever they are declared as', async () => {
  assertError(await upload(admin, bmp(3, 2), 'x.png', 'image/png'), 415, `Unsupported media type: the file is image/bmp; ${TAKES}`);
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="3" height="2"><script>alert(1)</script></svg>');
  assertError(await upload(admin, svg, 'x.svg', 'image/svg+xml'), 415, `Unsupported media type: the file is not an image of a known kind; ${TAKES}`);
});

test('415: a large text file is refused from its first bytes, without reading the rest', async () => {
  // 9 MiB: under the limit, so only the type can refuse it.
  const answer = await rawPost(port, UPLOAD, { ...admin.auth, 'Content-Type': MULTIPART }, [
    partBytes({ name: 'file', filename: 'big.png', type: 'image/png', data: Buffer.alloc(0) }).subarray(0, -2),
    ...repeated(9 * 1024 * 1024),
    Buffer.from('\r\n'),
    closing(),
  ]);
  assert.is(answer.status, 415, JSON.stringify(answer.body));
  assert.match(answer.body.message, TAKES);
});

test('400: a file that begins like an image but whose header is cut short; an empty file', async () => {
  assertError(await upload(admin, jpeg(3, 2).subarray(0, 30), 'cut.jpg'), 400, 'file could not be read as a JPEG image (truncated or corrupt): its width and height are unknown');
  assertError(await upload(admin, png(3, 2).subarray(0, 16), 'cut.png'), 400, 'file could not be read as a PNG image (truncated or corrupt): its width and height are unknown');
  assertError(await upload(admin, Buffer.alloc(0), 'empty.png'), 400, 'file should not be empty');
});

/** A PNG padded after its end to exactly `size` bytes: still a PNG by its bytes. */
const paddedPng = (size: number) => Buffer.concat([png(3, 2), Buffer.alloc(size - png(3, 2).length)]);

test('413: one byte over 10 MiB with a Content-Length (read up to the limit, the partial file removed)', async () => {
  assertError(await upload(admin, paddedPng(LIMIT + 1), 'big.png', 'image/png'), 413, 'File is larger than the limit of 10 MiB');
});

test('413: over 10 MiB sent chunked, without a Content-Length', async () => {
  const answer = await rawPost(port, UPLOAD, { ...admin.auth, 'Content-Type': MULTIPART }, [
    partBytes({ name: 'file', filename: 'big.png', type: 'image/png', data: png(3, 2) }).subarray(0, -2),
    ...repeated(LIMIT + 64 * 1024, 0),
    Buffer.from('\r\n'),
    closing(),
  ]);
  assert.is(answer.status, 413, JSON.stringify(answer.body));
  assert.equal(answer.body, { statusCode: 413, message: 'File is larger than the limit of 10 MiB', error: 'Payload Too Large' });
});

test('413: a Content-Length past the limit is refused before the body is sent', async () => {
  // Only the headers and the start of the body go out: the answer comes without waiting for the rest.
  const answer = await rawPost(port, UPLOAD, { ...admin.auth, 'Content-Type': MULTIPART, 'Content-Length': String(20 * LIMIT) }, [
    partBytes({ name: 'file', filename: 'big.png', type: 'image/png', data: png(3, 2) }).subarray(0, -2),
  ]);
  assert.is(answer.status, 413, JSON.stringify(answer.body));
  assert.is(answer.body.message, 'File is larger than the limit of 10 MiB');
  assert.is(answer.headers.connection, 'close');
});

test('exactly 10 MiB is taken (and removed again by its DELETE)', async () => {
  const res = await upload(admin, paddedPng(LIMIT), 'limit.png', 'image/png');
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal([res.body.size, res.body.width, res.body.height], [LIMIT, 3, 2]);
  assert.is((await t.http.delete(`/api/image-asset/${res.body.id}`).set(admin.auth)).status, 204);
});

test('400: no file field; a text field named file; an empty multipart body', async () => {
  assertError(await sendMultipart(multipartBody({ name: 'name', value: 'no file' })), 400, 'file should not be empty: send the file in the field "file"');
  assertError(await sendMultipart(multipartBody({ name: 'file', value: 'not a file' })), 400, 'file must be a file, not a text field');
  assertError(await sendMultipart(closing()), 400);
});

test('400: a field other than file and name, before or after the file; a file under another name', async () => {
  const file = { name: 'file', filename: 'x.png', type: 'image/png', data: png(3, 2) };
  const extra = 'property organizationId should not exist; allowed beside "file": name';
  assertError(await sendMultipart(multipartBody({ name: 'organizationId', value: admin.organizationId }, file)), 400, extra);
  assertError(await sendMultipart(multipartBody(file, { name: 'organizationId', value: admin.organizationId })), 400, extra);
  assertError(await sendMultipart(multipartBody({ ...file, name: 'image' })), 400, 'property image should not exist; the file goes in the field "file"');
  assertError(await sendMultipart(multipartBody(file, { name: 'name', value: 'a' }, { name: 'name', value: 'b' })), 400, 'name must be sent once');
});

test('400: two files', async () => {
  const file = { name: 'file', filename: 'x.png', type: 'image/png', data: png(3, 2) };
  assertError(await sendMultipart(multipartBody(file, { ...file, filename: 'y.png' })), 400, 'only one file may be sent, in the field "file"');
});

test('400: malformed multipart (no closing boundary, garbage, no boundary parameter)', async () => {
  const unfinished = partBytes({ name: 'file', filename: 'x.png', type: 'image/png', data: png(3, 2) });
  assertError(await sendMultipart(unfinished), 400, 'Request body is not valid multipart/form-data');
  // Cut inside the file, after enough bytes to be recognised as an image.
  const cutInFile = partBytes({ name: 'file', filename: 'x.png', type: 'image/png', data: paddedPng(64 * 1024) }).subarray(0, 32 * 1024);
  assertError(await sendMultipart(cutInFile), 400, 'Request body is not valid multipart/form-data');
  assertError(await sendMultipart(Buffer.from('this is not multipart at all')), 400, 'Request body is not valid multipart/form-data');
  assertError(
    await t.http.post(UPLOAD).set(admin.auth).set('Content-Type', 'multipart/form-data').send(multipartBody({ name: 'name', value: 'x' })),
    400,
    'Request body is not valid multipart/form-data',
  );
});

test('400: a name longer than the field allows; a query parameter', async () => {
  const res = await t.http.post(UPLOAD).set(admin.auth).field('name', 'n'.repeat(256)).attach('file', png(3, 2), 'x.png');
  assertError(res, 400, 'name must be shorter than or equal to 255 characters');
  const query = await t.http.post(`${UPLOAD}?name=x`).set(admin.auth).attach('file', png(3, 2), 'x.png');
  assertError(query, 400, 'name is not a supported parameter of POST /api/image-asset/upload; it takes none');
});

test('400 after the file arrived: a name the database cannot store leaves neither file nor record', async () => {
  const res = await t.http.post(UPLOAD).set(admin.auth).field('name', 'nul \u0000 inside').attach('file', png(3, 2), 'x.png');
  assertError(res, 400, 'A text value contains a character that cannot be stored, such as \\u0000');
});

test('415: a JSON body, a form, a raw image body', async () => {
  const sendingMultipart = 'Unsupported media type: send multipart/form-data with the file in the field "file"';
  assertError(await t.http.post(UPLOAD).set(admin.auth).send({ name: 'x', url: 'https://example.com/x.png' }), 415, sendingMultipart);
  assertError(await t.http.post(UPLOAD).set(admin.auth).type('form').send({ name: 'x' }), 415, sendingMultipart);
  assertError(await t.http.post('/api/image-assets/upload').set(admin.auth).set('Content-Type', 'image/png').send(png(3, 2)), 415, sendingMultipart);
  assertError(await t.http.post(UPLOAD).set(admin.auth), 415, sendingMultipart);
});

test('401 without a token; 403 for roles without MEDIA_GALLERY_ADD (VIEWER, EMPLOYEE), before the body is read', async () => {
  assertUnauthorized(await upload({ auth: {} } as Session, png(3, 2), 'x.png'));
  assertForbidden(await upload(viewer, png(3, 2), 'x.png'));
  assertForbidden(await upload(employee, png(3, 2), 'x.png'));
  // Refused on the headers alone: a body announced as huge gets the 403, not a 413.
  const answer = await rawPost(port, UPLOAD, { ...viewer.auth, 'Content-Type': MULTIPART, 'Content-Length': String(20 * LIMIT) }, []);
  assert.is(answer.status, 403);
});

test('a client that goes away mid-upload leaves no file and no record', async () => {
  // A length announced, so that the server sees an upload cut short (not a broken chunked encoding).
  const headers = { ...admin.auth, 'Content-Type': MULTIPART, 'Content-Length': String(1024 * 1024) };
  const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: UPLOAD, headers, agent: false });
  const closed = new Promise((resolve) => req.on('close', resolve));
  req.on('error', () => {});
  req.write(partBytes({ name: 'file', filename: 'x.png', type: 'image/png', data: png(3, 2) }).subarray(0, -2));
  for (const chunk of repeated(256 * 1024, 0)) req.write(chunk);
  // The server has begun writing the file…
  await until(() => filesIn(t.config.uploadDir).length === 1, 'the partial file to appear');
  // …when the client disconnects.
  req.destroy();
  await closed;
  await until(() => filesIn(t.config.uploadDir).length === 0, 'the partial file to be removed');
});

/** Waits for something the server does in the background, failing after a generous while. */
async function until(condition: () => boolean, what: string, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.unreachable(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test.run();
