// Image upload and serving, the ways that succeed: each kind taken (PNG, JPEG, GIF, WebP) becomes
// a record with its width, height, size, sniffed type and url, and a file under a generated name
// that GET …/file serves back byte for byte to its own tenant only; the record's name; the
// organization; both spellings; DELETE removes the file with its record. The failures are in
// image-upload-errors.test.ts.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { assertError, assertForbidden, assertNotFound, assertUnauthorized } from '../helpers/error-envelope.js';
import { gif, jpeg, png, webp } from '../helpers/images.js';
import { filesIn } from '../helpers/upload.js';
import { waitFor } from '../helpers/wait.js';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let admin: Tenant;
let other: Tenant;
let viewer: Session;
let employee: Session;

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t, 'Pictures Co');
  other = await newTenant(t, 'Elsewhere Co');
  viewer = await userWithRole(t, admin, 'VIEWER');
  employee = await userWithRole(t, admin, 'EMPLOYEE');
  // supertest may close the connection once it has every byte of a streamed file, before the
  // server's side of the stream has ended; Koa's own error printer (the app has no 'error'
  // listener) would then print a "Premature close" that is no failure of the route.
  t.koa.silent = true;
});
test.after(async () => {
  await t.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const uploads = () => filesIn(t.config.uploadDir);
const rowOf = (id: string) => t.db('image_asset').where({ id }).first();
const storedPath = (tenant: Session, id: string, ext: string) => path.join(t.config.uploadDir, tenant.tenantId, `${id}.${ext}`);

function upload(who: Session, data: Buffer, filename: string, options: { type?: string; name?: string; path?: string } = {}) {
  const req = t.http.post(options.path ?? '/api/image-asset/upload').set(who.auth);
  if (options.name !== undefined) req.field('name', options.name);
  return req.attach('file', data, { filename, contentType: options.type ?? 'application/octet-stream' });
}

/** A binary answer's bytes (supertest only buffers known text and image types by itself). */
function fetchFile(who: Session, id: string, base = '/api/image-asset') {
  return t.http
    .get(`${base}/${id}/file`)
    .set(who.auth)
    .buffer(true)
    .parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });
}

const KINDS = [
  { label: 'PNG', bytes: png(3, 2), mimeType: 'image/png', ext: 'png', filename: 'red.png' },
  { label: 'JPEG', bytes: jpeg(3, 2), mimeType: 'image/jpeg', ext: 'jpg', filename: 'grey.jpeg' },
  { label: 'GIF', bytes: gif(3, 2), mimeType: 'image/gif', ext: 'gif', filename: 'dot.gif' },
  { label: 'WebP', bytes: webp(3, 2), mimeType: 'image/webp', ext: 'webp', filename: 'blue.webp' },
];

for (const kind of KINDS) {
  test(`${kind.label}: 201 with width, height, size, type and url; stored under a generated name; served back byte for byte`, async () => {
    const before = uploads();
    const res = await upload(admin, kind.bytes, kind.filename, { type: kind.mimeType });
    assert.is(res.status, 201, JSON.stringify(res.body));
    const record = res.body;
    assert.match(record.id, UUID);
    assert.equal(
      { name: record.name, width: record.width, height: record.height, size: record.size, mimeType: record.mimeType, storageProvider: record.storageProvider },
      { name: kind.filename, width: 3, height: 2, size: kind.bytes.length, mimeType: kind.mimeType, storageProvider: 'LOCAL' },
    );
    assert.is(record.url, `${t.config.apiBaseUrl}/api/image-asset/${record.id}/file`);
    assert.is(record.organizationId, admin.organizationId);
    assert.is(record.tenantId, admin.tenantId);
    assert.is(record.isFeatured, false);
    // Tagged as every create is: the tag a read of the record answers.
    assert.match(res.headers.etag, /^"[0-9a-f]{1,16}"$/);
    assert.is((await t.http.get(`/api/image-asset/${record.id}`).set(admin.auth)).headers.etag, res.headers.etag);

    const row = await rowOf(record.id);
    assert.equal(
      [row.tenantId, row.organizationId, row.name, row.url, row.width, row.height, row.size, row.mimeType, row.storageProvider],
      [admin.tenantId, admin.organizationId, kind.filename, record.url, 3, 2, kind.bytes.length, kind.mimeType, 'LOCAL'],
    );
    // Exactly one new file, named by tenant and record id, never by the client's name.
    const added = uploads().filter((f) => !before.includes(f));
    assert.equal(added, [path.join(admin.tenantId, `${record.id}.${kind.ext}`)]);
    assert.ok(readFileSync(storedPath(admin, record.id, kind.ext)).equals(kind.bytes));

    const served = await fetchFile(admin, record.id);
    assert.is(served.status, 200);
    assert.ok(Buffer.isBuffer(served.body) && served.body.equals(kind.bytes), 'the same bytes');
    assert.is(served.headers['content-type'], kind.mimeType);
    assert.is(served.headers['content-length'], String(kind.bytes.length));
    assert.is(served.headers['x-content-type-options'], 'nosniff');
    assert.is(served.headers['cache-control'], 'private, max-age=3600');
    assert.is(served.headers['content-disposition'], `inline; filename="${kind.filename}"`);

    // HEAD: the same headers, no body.
    const head = await t.http.head(`/api/image-asset/${record.id}/file`).set(admin.auth);
    assert.is(head.status, 200);
    for (const header of ['content-type', 'content-length', 'x-content-type-options', 'cache-control', 'content-disposition']) {
      assert.is(head.headers[header], served.headers[header], header);
    }
    assert.equal(head.body, {});
  });
}

test('start-up sweeps part files an earlier process left in .incoming over an hour ago, and keeps younger ones', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'uploads-sweep-'));
  const incoming = path.join(dir, '.incoming');
  mkdirSync(incoming);
  const stale = path.join(incoming, 'crashed.part');
  const young = path.join(incoming, 'in-flight.part');
  writeFileSync(stale, 'half an image');
  writeFileSync(young, 'arriving');
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  utimesSync(stale, twoHoursAgo, twoHoursAgo);
  const restarted = await createTestApp({ env: { UPLOAD_DIR: dir } });
  try {
    await waitFor(() => !existsSync(stale), 'the stale part file to be removed');
    assert.ok(existsSync(young), 'a part file of the last hour stays (another process may be writing it)');
  } finally {
    await restarted.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a JPEG with more metadata than the first 512 KiB before its size (ICC profiles, XMP) is measured from the whole file', async () => {
  const small = jpeg(8, 6);
  // Ten 60,000-byte APP2 segments right after the start-of-image marker (FF D8).
  const segment = Buffer.concat([Buffer.from([0xff, 0xe2, (60_002 >> 8) & 0xff, 60_002 & 0xff]), Buffer.alloc(60_000, 0x20)]);
  const bytes = Buffer.concat([small.subarray(0, 2), ...Array.from({ length: 10 }, () => segment), small.subarray(2)]);
  assert.ok(bytes.length > 512 * 1024);
  const res = await upload(admin, bytes, 'profiled.jpg', { type: 'image/jpeg' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal([res.body.width, res.body.height, res.body.size, res.body.mimeType], [8, 6, bytes.length, 'image/jpeg']);
  assert.ok(readFileSync(storedPath(admin, res.body.id, 'jpg')).equals(bytes));
});

test('the alias spelling and a trailing slash upload the same way; the alias serves the file too', async () => {
  const res = await upload(admin, gif(5, 4), 'alias.gif', { path: '/api/image-assets/upload/' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal([res.body.width, res.body.height, res.body.mimeType], [5, 4, 'image/gif']);
  assert.is(res.body.url, `${t.config.apiBaseUrl}/api/image-asset/${res.body.id}/file`);
  const served = await fetchFile(viewer, res.body.id, '/api/image-assets');
  assert.is(served.status, 200);
  assert.ok(served.body.equals(gif(5, 4)));
});

test('the type is the bytes\' own: PNG bytes declared text/plain and named notes.txt are a PNG', async () => {
  const bytes = png(7, 9);
  const res = await upload(admin, bytes, 'notes.txt', { type: 'text/plain' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal([res.body.mimeType, res.body.width, res.body.height, res.body.name], ['image/png', 7, 9, 'notes.txt']);
  assert.ok(readFileSync(storedPath(admin, res.body.id, 'png')).equals(bytes));
  const served = await fetchFile(admin, res.body.id);
  assert.is(served.headers['content-type'], 'image/png');
  // The offered file name carries the extension of what the file is.
  assert.is(served.headers['content-disposition'], 'inline; filename="notes.txt.png"');
});

test('an animated PNG (file-type says image/apng) is a PNG', async () => {
  const bytes = png(4, 3, [0, 0, 0], true);
  const res = await upload(admin, bytes, 'moving.png', { type: 'image/apng' });
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.equal([res.body.mimeType, res.body.width, res.body.height, res.body.size], ['image/png', 4, 3, bytes.length]);
  const served = await fetchFile(admin, res.body.id);
  assert.is(served.headers['content-type'], 'image/png');
  assert.ok(served.body.equals(bytes));
});

test('name: the field when given; else the file name without any folder part, trimmed and cut to 255 characters', async () => {
  const named = await upload(admin, png(3, 2), 'whatever.png', { name: 'Team photo' });
  assert.is(named.status, 201);
  assert.is(named.body.name, 'Team photo');
  assert.is((await rowOf(named.body.id)).name, 'Team photo');
  assert.is((await fetchFile(admin, named.body.id)).headers['content-disposition'], 'inline; filename="Team photo.png"');

  // A blank name field is a form's "no name".
  const blank = await upload(admin, png(3, 2), 'from-file.png', { name: '   ' });
  assert.is(blank.body.name, 'from-file.png');

  for (const [filename, expected] of [
    ['../../etc/passwd.png', 'passwd.png'],
    ['C:\\Users\\ann\\Desktop\\holiday.png', 'holiday.png'],
    ['  spaced out.png  ', 'spaced out.png'],
  ]) {
    const res = await upload(admin, png(3, 2), filename);
    assert.is(res.status, 201, filename);
    assert.is(res.body.name, expected, filename);
    // Wherever the name points, the file is where the server puts files.
    assert.ok(readFileSync(storedPath(admin, res.body.id, 'png')).equals(png(3, 2)));
  }
  assert.not.ok(uploads().some((f) => f.includes('passwd') || f.includes('holiday')), 'no client name on disk');

  const long = `${'x'.repeat(300)}.png`;
  const cut = await upload(admin, png(3, 2), long);
  assert.is(cut.status, 201, JSON.stringify(cut.body));
  assert.is(cut.body.name, 'x'.repeat(255));
});

test('a non-ASCII name is kept, and offered safely encoded; quotes in a name cannot break the header', async () => {
  const res = await upload(admin, png(3, 2), 'café ☕.png');
  assert.is(res.status, 201);
  assert.is(res.body.name, 'café ☕.png');
  const served = await fetchFile(admin, res.body.id);
  assert.is(served.headers['content-disposition'], `inline; filename="caf\u00e9 ?.png"; filename*=UTF-8''caf%C3%A9%20%E2%98%95.png`);

  const quoted = await upload(admin, png(3, 2), 'x.png', { name: 'a "quoted"; filename=evil.html' });
  assert.is(quoted.status, 201);
  const header = (await fetchFile(admin, quoted.body.id)).headers['content-disposition'];
  assert.is(header, 'inline; filename="a \\"quoted\\"; filename=evil.html.png"');
});

test('organization: the Organization-Id header, or none (an image of the whole tenant) in a tenant of several, settled before the body counts', async () => {
  const second = await t.http.post('/api/organization').set(admin.auth).send({ name: 'Second Org', currency: 'USD' });
  assert.is(second.status, 201);
  try {
    const before = uploads();
    const wide = await upload(admin, png(3, 2), 'x.png');
    assert.is(wide.status, 201, JSON.stringify(wide.body));
    assert.is(wide.body.organizationId, null);
    assert.equal([(await rowOf(wide.body.id)).organizationId, (await rowOf(wide.body.id)).tenantId], [null, admin.tenantId]);
    const res = await upload(admin, png(3, 2), 'x.png').set('Organization-Id', second.body.id);
    assert.is(res.status, 201, JSON.stringify(res.body));
    assert.is(res.body.organizationId, second.body.id);
    assert.is((await rowOf(res.body.id)).organizationId, second.body.id);
    assertError(await upload(admin, png(3, 2), 'x.png').set('Organization-Id', other.organizationId), 400, 'organizationId must reference an existing organization');
    assertError(await upload(admin, png(3, 2), 'x.png').set('Organization-Id', 'not-a-uuid'), 400, 'Organization-Id header must be a UUID');
    assert.equal(uploads().filter((f) => !before.includes(f)).sort(), [wide.body.id, res.body.id].map((id) => path.join(admin.tenantId, `${id}.png`)).sort());
    await t.db('image_asset').whereIn('id', [wide.body.id, res.body.id]).delete();
  } finally {
    await t.db('organization').where({ id: second.body.id }).delete();
  }
});

test('the file: its own tenant only (another tenant: 404), read permission, a token; no file: a clear 404', async () => {
  const res = await upload(admin, webp(3, 2), 'mine.webp');
  assert.is(res.status, 201);
  const { id } = res.body;
  assertNotFound(await t.http.get(`/api/image-asset/${id}/file`).set(other.auth));
  assertNotFound(await t.http.head(`/api/image-asset/${id}/file`).set(other.auth).then((r) => ({ ...r, body: errorOf(r) })));
  assertForbidden(await t.http.get(`/api/image-asset/${id}/file`).set(employee.auth));
  assertUnauthorized(await t.http.get(`/api/image-asset/${id}/file`));
  assertError(await t.http.get('/api/image-asset/not-a-uuid/file').set(admin.auth), 400, 'id must be a UUID');
  assertError(await t.http.get(`/api/image-asset/${id}/file?download=1`).set(admin.auth), 400, /^download is not a supported parameter/);
  assert.is((await fetchFile(viewer, id)).status, 200);

  // A record made without an upload has no file.
  const plain = await t.http.post('/api/image-asset').set(admin.auth).send({ name: 'no file.png', mimeType: 'image/png' });
  assert.is(plain.status, 201);
  assertError(await t.http.get(`/api/image-asset/${plain.body.id}/file`).set(admin.auth), 404, 'This image asset has no stored file');

  // A record whose file has gone from the disk.
  rmSync(storedPath(admin, id, 'webp'));
  assertError(await t.http.get(`/api/image-asset/${id}/file`).set(admin.auth), 404, 'This image asset has no stored file');
});

/** HEAD answers carry no body: the envelope checks read the status and headers only. */
function errorOf(res: { status: number }) {
  return { statusCode: res.status, message: 'The requested record was not found', error: 'Not Found' };
}

test('the served type is the stored file\'s, whatever mimeType a PATCH wrote', async () => {
  const res = await upload(admin, png(3, 2), 'x.png');
  const patched = await t.http.patch(`/api/image-asset/${res.body.id}`).set(admin.auth).send({ mimeType: 'text/html' });
  assert.is(patched.status, 200);
  const served = await fetchFile(admin, res.body.id);
  assert.is(served.status, 200);
  assert.is(served.headers['content-type'], 'image/png');
  assert.ok(served.body.equals(png(3, 2)));
});

test('DELETE (both spellings) removes the file with the record; another tenant\'s delete is a 404 and removes nothing', async () => {
  for (const base of ['/api/image-asset', '/api/image-assets']) {
    const res = await upload(admin, jpeg(3, 2), 'gone.jpg');
    const file = storedPath(admin, res.body.id, 'jpg');
    assert.ok(uploads().includes(path.relative(t.config.uploadDir, file)));

    assertNotFound(await t.http.delete(`${base}/${res.body.id}`).set(other.auth));
    assert.ok(await rowOf(res.body.id));
    assert.ok(readFileSync(file).equals(jpeg(3, 2)));
    assertForbidden(await t.http.delete(`${base}/${res.body.id}`).set(viewer.auth));

    const deleted = await t.http.delete(`${base}/${res.body.id}`).set(admin.auth);
    assert.is(deleted.status, 204);
    assert.not.ok(await rowOf(res.body.id));
    assert.not.ok(uploads().includes(path.relative(t.config.uploadDir, file)), 'the file is gone');
    assertNotFound(await t.http.get(`${base}/${res.body.id}/file`).set(admin.auth));
    assertNotFound(await t.http.delete(`${base}/${res.body.id}`).set(admin.auth));
  }
  // A record without a file deletes as before.
  const plain = await t.http.post('/api/image-asset').set(admin.auth).send({ name: 'plain' });
  assert.is((await t.http.delete(`/api/image-asset/${plain.body.id}`).set(admin.auth)).status, 204);
  assertError(await t.http.delete('/api/image-asset/nope').set(admin.auth), 400, 'id must be a UUID');
});

test('a delete the database refuses (a time-off request points at the image) keeps the file', async () => {
  const res = await upload(admin, png(3, 2), 'certificate.png');
  const timeOff = await t.http.post('/api/time-off-request').set(admin.auth).send({ start: '2026-01-05', end: '2026-01-06', requestDate: '2026-01-01', documentId: res.body.id });
  assert.is(timeOff.status, 201, JSON.stringify(timeOff.body));
  const refused = await t.http.delete(`/api/image-asset/${res.body.id}`).set(admin.auth);
  assert.is(refused.status, 400, JSON.stringify(refused.body));
  assert.ok(await rowOf(res.body.id));
  assert.ok(readFileSync(storedPath(admin, res.body.id, 'png')).equals(png(3, 2)));
  assert.is((await fetchFile(admin, res.body.id)).status, 200);
});

test.run();
