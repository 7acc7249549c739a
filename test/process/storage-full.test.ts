// Storage full is not a bug: a write that cannot be stored for want of space answers 503 with a
// clear message (never a 500), nothing of it is left behind, reads and /api/health keep answering,
// and writes succeed again by themselves once there is room. Three sources:
// - the database's own disk_full (SQLSTATE 53100), raised here by a trigger through the real
//   driver, on both databases;
// - uploads on a full disk (ENOSPC while the file is written), on both databases;
// - the embedded database on a disk with less free space than EMBEDDED_MIN_FREE_MB (embedded only:
//   PGlite freezes the process when its WAL cannot grow, so writes are refused before that).
// The last two need a small disk of their own (a tmpfs mount, root on Linux); they are skipped,
// saying why, where one cannot be mounted.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../engine/config/config.js';
import { openDatabase } from '../../engine/db/database.js';
import { newTenant, type Session } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, usingPostgres, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-envelope.js';
import { png } from '../helpers/images.js';
import { mountSmallDisk, type SmallDisk } from '../helpers/small-disk.js';

const MESSAGE = 'The server is out of storage space; try again later';

type Tenant = Session & { organizationId: string };

let t: TestApp;
let admin: Tenant;
const opened: Array<{ close(): Promise<void> } | SmallDisk> = [];

test.before(async () => {
  t = await createTestApp();
  admin = await newTenant(t, 'Full Disk Co');
});
test.after(async () => {
  await t.close();
  for (const item of opened.reverse()) 'unmount' in item ? item.unmount() : await item.close();
});

function disk(sizeMiB: number): SmallDisk | undefined {
  const mounted = mountSmallDisk(sizeMiB);
  if ('unavailable' in mounted) {
    console.log(`storage-full: skipping a test: ${mounted.unavailable}`);
    return undefined;
  }
  opened.push(mounted);
  return mounted;
}

const tagCount = async (app: TestApp, organizationId: string) => Number((await app.db('tag').where({ organizationId }).count({ n: '*' }))[0].n);
const newTag = (app: TestApp, who: Tenant, name: string) => app.http.post('/api/tags').set(who.auth).send({ name, color: '#aa0000', organizationId: who.organizationId });

/** Reads and health still answer while writes are refused. */
async function readsWork(app: TestApp, who: Tenant) {
  const list = await app.http.get('/api/tags').set(who.auth);
  assert.is(list.status, 200, JSON.stringify(list.body));
  const health = await app.http.get('/api/health');
  assert.is(health.status, 200, JSON.stringify(health.body));
  assert.is(health.body.status, 'ok');
}

test("the database's disk_full (53100) is a 503 with a clear message; reads and health go on; writes resume", async () => {
  await t.db.raw(`create function refuse_for_disk_full() returns trigger language plpgsql as $$
    begin raise exception 'could not extend file: No space left on device' using errcode = 'disk_full'; end $$`);
  await t.db.raw('create trigger tag_disk_full before insert on tag for each row execute function refuse_for_disk_full()');
  try {
    const refused = await newTag(t, admin, 'No room');
    assertError(refused, 503, MESSAGE);
    assert.is(await tagCount(t, admin.organizationId), 0, 'nothing written');
    await readsWork(t, admin);
  } finally {
    await t.db.raw('drop trigger tag_disk_full on tag');
    await t.db.raw('drop function refuse_for_disk_full()');
  }
  const res = await newTag(t, admin, 'Room again');
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(await tagCount(t, admin.organizationId), 1);
});

const uploadDisk = disk(8);
(uploadDisk ? test : test.skip)('an upload on a full disk: 503, no part file and no record left; uploads work again once there is room', async () => {
  const d = uploadDisk!;
  const app = await createTestApp({ env: { UPLOAD_DIR: d.dir } });
  opened.unshift(app);
  const owner = await newTenant(app, 'Upload Co');
  const image = png(64, 64);
  const records = async () => Number((await app.db('image_asset').count({ n: '*' }))[0].n);
  const uploadedFiles = () => readdirSync(d.dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile() && e.name !== 'filler').map((e) => path.join(e.parentPath ?? '', e.name));

  d.fill();
  const refused = await app.http.post('/api/image-asset/upload').set(owner.auth).attach('file', image, { filename: 'full.png', contentType: 'image/png' });
  assertError(refused, 503, MESSAGE);
  assert.is(await records(), 0, 'no record');
  assert.equal(uploadedFiles(), [], 'no part file left behind');
  assert.is((await app.http.get('/api/image-asset').set(owner.auth)).status, 200);
  assert.is((await app.http.get('/api/health')).status, 200);

  d.free();
  const stored = await app.http.post('/api/image-asset/upload').set(owner.auth).attach('file', image, { filename: 'room.png', contentType: 'image/png' });
  assert.is(stored.status, 201, JSON.stringify(stored.body));
  assert.is(await records(), 1);
  const file = await app.http.get(`/api/image-asset/${stored.body.id}/file`).set(owner.auth);
  assert.is(file.status, 200);
  assert.is(Buffer.compare(file.body, image), 0, 'the whole file was stored');
});

// The embedded database's data folder: a disk big enough for a migrated cluster and its WAL.
const databaseDisk = usingPostgres() ? undefined : disk(160);
(databaseDisk ? test : test.skip)('embedded: below EMBEDDED_MIN_FREE_MB free, writes are 503 and nothing is written; reads and health go on; writes resume with room', async () => {
  const d = databaseDisk!;
  const config = loadConfig(TEST_ENV);
  assert.is(config.embedded.minFreeBytes, 64 * 1024 * 1024);
  const database = await openDatabase({ dataDir: path.join(d.dir, 'data'), embedded: config.embedded });
  const app = await createTestApp({ database });
  opened.unshift(app);
  const owner = await newTenant(app, 'Embedded Co');
  assert.is((await newTag(app, owner, 'Before')).status, 201);

  d.fill(config.embedded.minFreeBytes - 16 * 1024 * 1024);
  assert.ok(d.freeBytes() < config.embedded.minFreeBytes, `free: ${d.freeBytes()}`);
  for (const name of ['Full 1', 'Full 2', 'Full 3']) assertError(await newTag(app, owner, name), 503, MESSAGE);
  const patch = await app.http.patch(`/api/tags/${(await app.db('tag').first('id')).id}`).set(owner.auth).send({ name: 'Renamed' });
  assertError(patch, 503, MESSAGE);
  assert.is(await tagCount(app, owner.organizationId), 1, 'nothing written');
  assert.is((await app.db('tag').first('name')).name, 'Before');
  await readsWork(app, owner);
  // A read written as a `with` statement (reports, statistics) is a read too.
  assert.equal((await app.db.raw('with x as (select 1 as n) select n from x')).rows, [{ n: 1 }]);

  d.free();
  const res = await newTag(app, owner, 'After');
  assert.is(res.status, 201, JSON.stringify(res.body));
  assert.is(await tagCount(app, owner.organizationId), 2);
});

test.run();
