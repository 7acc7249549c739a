// The embedded database keeps what it acknowledged (EMBEDDED_DURABILITY): with `full` (the
// default) PostgreSQL inside PGlite runs with fsync on and every commit reaches fs.fsyncSync on
// the data folder's files before the answer; with `relaxed` nothing is synced (PGlite's own
// behaviour: a killed process loses nothing, an OS crash may). The sync calls are counted in the
// process, at the file-system layer PGlite writes through. What this cannot show is the disk
// honouring the sync (that is the OS's and the hardware's part); that the calls reach the kernel
// was checked once by counting fsync system calls under load.
// The embedded database only: PostgreSQL's durability is its own (skipped with DATABASE_URL).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../engine/config/config.js';
import { embeddedSyncCalls } from '../../engine/db/embedded.js';
import { openDatabase } from '../../engine/db/database.js';
import { newTenant } from '../helpers/accounts.js';
import { createTestApp, TEST_ENV, usingPostgres, type TestApp } from '../helpers/app.js';

const embeddedTest = usingPostgres() ? test.skip : test;
const root = mkdtempSync(path.join(tmpdir(), 'durability-'));
const apps: TestApp[] = [];

test.after(async () => {
  for (const app of apps) await app.close();
  rmSync(root, { recursive: true, force: true });
});

/** The app on an embedded database in a folder of its own, with EMBEDDED_DURABILITY set (or not), and other settings. */
async function appWith(durability: string | undefined, more: Record<string, string> = {}): Promise<TestApp> {
  const env: Record<string, string> = { ...(durability ? { EMBEDDED_DURABILITY: durability } : {}), ...more };
  const config = loadConfig({ ...TEST_ENV, ...env });
  const dataDir = path.join(root, durability ?? 'default');
  const database = await openDatabase({ dataDir, embedded: config.embedded });
  const app = await createTestApp({ database, env });
  apps.push(app);
  return app;
}

const setting = async (t: TestApp, name: string) => (await t.db.raw(`show ${name}`)).rows[0][name];

async function createTags(t: TestApp, organizationId: string, auth: Record<string, string>, count: number) {
  for (let i = 0; i < count; i++) {
    const res = await t.http.post('/api/tags').set(auth).send({ name: `durable-${i}`, color: '#123456', organizationId });
    assert.is(res.status, 201, JSON.stringify(res.body));
  }
}

embeddedTest('full (the default): fsync on, and every acknowledged create was synced to disk before its answer', async () => {
  const t = await appWith(undefined);
  assert.is(t.config.embedded.durability, 'full');
  assert.is(await setting(t, 'fsync'), 'on');
  assert.is(await setting(t, 'wal_sync_method'), 'fsync');
  assert.is(await setting(t, 'synchronous_commit'), 'on');
  assert.is(await setting(t, 'shared_buffers'), '32MB', 'the default buffer cache (EMBEDDED_CACHE_MB)');
  assert.is(await setting(t, 'wal_buffers'), '4MB');
  const admin = await newTenant(t, 'Durable Co');

  const before = embeddedSyncCalls();
  await createTags(t, admin.organizationId, admin.auth, 5);
  // One commit each, each synced: at least one sync call per acknowledged create.
  assert.ok(embeddedSyncCalls() - before >= 5, `sync calls during 5 creates: ${embeddedSyncCalls() - before}`);

  // A create that is answered at all was synced first: the count has moved by the time it answers.
  const one = embeddedSyncCalls();
  const res = await t.http.post('/api/tags').set(admin.auth).send({ name: 'durable-last', color: '#123456', organizationId: admin.organizationId });
  assert.is(res.status, 201);
  assert.ok(embeddedSyncCalls() > one, 'the create was synced before it was answered');
  assert.is(Number((await t.db('tag').where({ organizationId: admin.organizationId }).count({ n: '*' }))[0].n), 6);

  // Reads do not sync.
  const reads = embeddedSyncCalls();
  assert.is((await t.http.get('/api/tags').set(admin.auth)).status, 200);
  assert.is(embeddedSyncCalls(), reads);
});

embeddedTest('relaxed: PGlite as it comes (fsync off), nothing synced; EMBEDDED_CACHE_MB sizes the buffer cache', async () => {
  const t = await appWith('relaxed', { EMBEDDED_CACHE_MB: '8' });
  assert.is(await setting(t, 'fsync'), 'off');
  assert.is(await setting(t, 'shared_buffers'), '8MB');
  const admin = await newTenant(t, 'Relaxed Co');
  const before = embeddedSyncCalls();
  await createTags(t, admin.organizationId, admin.auth, 5);
  assert.is(embeddedSyncCalls(), before, 'no sync call with relaxed durability');
  assert.is(Number((await t.db('tag').where({ organizationId: admin.organizationId }).count({ n: '*' }))[0].n), 5);
});

test('EMBEDDED_DURABILITY, EMBEDDED_MIN_FREE_MB and EMBEDDED_CACHE_MB: defaults, and a bad value names the variable', () => {
  assert.equal(loadConfig(TEST_ENV).embedded, { durability: 'full', minFreeBytes: 64 * 1024 * 1024, cacheMb: 32 });
  assert.equal(loadConfig({ ...TEST_ENV, EMBEDDED_DURABILITY: 'relaxed', EMBEDDED_MIN_FREE_MB: '0', EMBEDDED_CACHE_MB: '128' }).embedded, { durability: 'relaxed', minFreeBytes: 0, cacheMb: 128 });
  for (const bad of ['0', '1025', '16MB']) {
    assert.throws(() => loadConfig({ ...TEST_ENV, EMBEDDED_CACHE_MB: bad }), new RegExp(`EMBEDDED_CACHE_MB must be a whole number from 1 to 1024, got "${bad}"`));
  }
  assert.throws(() => loadConfig({ ...TEST_ENV, EMBEDDED_DURABILITY: 'fast' }), /EMBEDDED_DURABILITY must be full or relaxed, got "fast"/);
  assert.throws(() => loadConfig({ ...TEST_ENV, EMBEDDED_MIN_FREE_MB: '-1' }), /EMBEDDED_MIN_FREE_MB must be a whole number/);
});

test.run();
