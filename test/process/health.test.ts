// The probes. GET /api/health: public; 200 while the database answers, 503 (never a hang, never
// driver text) when it refuses connections, never answers, or has been closed. GET
// /api/health/live: 200 whatever the database does. GET /api/health/ready: 503 while the
// database does not answer, while the migration lock is held, and once the app drains.
import { createServer, type Socket } from 'node:net';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createProjectApp as createApp } from '../../app/create-app.js';
import { loadConfig } from '../../engine/config/config.js';
import { openDatabase, type Database } from '../../engine/db/database.js';
import { modules } from '../../resources/modules.js';
import { createTestApp, TEST_ENV, usingPostgres, type TestApp } from '../helpers/app.js';

let t: TestApp;
test.before(async () => {
  t = await createTestApp();
});
test.after(async () => {
  await t.close();
});

const DOWN = { database: { status: 'down', message: 'The database did not answer' } };
/** On PostgreSQL a process listens to the others (engine/db/broadcast.ts); the embedded database's process serves alone. */
const HEARD = usingPostgres() ? { broadcast: { status: 'up' } } : {};

/** An app of the project on a database that is not (or no longer) there. */
function appOn(database: Database, env: Record<string, string> = {}) {
  const config = loadConfig({ ...TEST_ENV, ...env });
  return request(createApp({ config, db: database.knex, modules, logError: () => {} }).koa.callback());
}

function assertDown(res: request.Response) {
  assert.is(res.status, 503, JSON.stringify(res.body));
  assert.equal(res.body, { status: 'error', info: {}, error: DOWN, details: DOWN });
  assert.not.match(res.text, /ECONNREFUSED|127\.0\.0\.1|select|stack|at /i, 'no driver text, address or SQL');
}

test('200 with the database up, without a token', async () => {
  const res = await t.http.get('/api/health');
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.match(res.headers['content-type'], /^application\/json/);
  const up = { database: { status: 'up' } };
  assert.equal(res.body, { status: 'ok', info: up, error: {}, details: up });
});

test('public: a stale or malformed bearer token does not turn the probe into a 401', async () => {
  const res = await t.http.get('/api/health').set('Authorization', 'Bearer not-a-token');
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(res.body.status, 'ok');
});

test('the probe really asks the database: it still answers after many calls', async () => {
  for (let i = 0; i < 20; i++) assert.is((await t.http.get('/api/health')).status, 200);
  // And the database it asked is the app's: a query on it right after still works.
  const [{ n }] = (await t.db.raw('select 1 as n')).rows;
  assert.is(n, 1);
});

test('503 when PostgreSQL refuses connections', async () => {
  const database = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:1/x' });
  try {
    assertDown(await appOn(database).get('/api/health'));
  } finally {
    await database.close();
  }
});

test('503 within HEALTH_TIMEOUT_MS when the database accepts the connection but never answers', async () => {
  // A port that takes connections and says nothing: the probe must give up on its own timeout,
  // while the driver is still waiting (knex would only give up after its 5 s acquire timeout).
  const sockets: Socket[] = [];
  const silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const port = (silent.address() as { port: number }).port;
  const database = await openDatabase({ databaseUrl: `postgres://postgres@127.0.0.1:${port}/x` });
  try {
    const res = await appOn(database, { HEALTH_TIMEOUT_MS: '200' }).get('/api/health');
    assertDown(res);
    assert.ok(sockets.length >= 1, 'the driver did connect');
    assert.ok(sockets.every((s) => !s.destroyed), 'the answer came from the timeout, while the connection was still waiting');
  } finally {
    for (const s of sockets) s.destroy();
    await database.close().catch(() => {});
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  }
});

test('503 when the embedded database has been closed', async () => {
  const database = await openDatabase({});
  // A fresh embedded database is ready once it answered (its first start can outlast the probe's limit on a busy machine).
  await database.knex.raw('select 1');
  const http = appOn(database);
  assert.is((await http.get('/api/health')).status, 200);
  await database.close();
  assertDown(await http.get('/api/health'));
});

const UP = { status: 'up' };

test('liveness: 200 without a token, and with the database refusing connections (it never asks it)', async () => {
  const res = await t.http.get('/api/health/live');
  assert.is(res.status, 200);
  assert.equal(res.body, { status: 'ok' });
  const database = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:1/x' });
  try {
    const down = await appOn(database).get('/api/health/live');
    assert.is(down.status, 200);
    assert.equal(down.body, { status: 'ok' });
  } finally {
    await database.close();
  }
});

test('readiness: 200 with every check up, without a token', async () => {
  const res = await t.http.get('/api/health/ready').set('Authorization', 'Bearer not-a-token');
  assert.is(res.status, 200, JSON.stringify(res.body));
  const checks = { server: UP, database: UP, migrations: UP, ...HEARD };
  assert.equal(res.body, { status: 'ok', info: checks, error: {}, details: checks });
});

test('readiness: 503 naming the database when it refuses connections, and no driver text', async () => {
  const database = await openDatabase({ databaseUrl: 'postgres://postgres@127.0.0.1:1/x' });
  try {
    const res = await appOn(database).get('/api/health/ready');
    assert.is(res.status, 503);
    assert.equal(res.body, { status: 'error', info: { server: UP }, error: DOWN, details: { server: UP, ...DOWN } });
    assert.not.match(res.text, /ECONNREFUSED|127\.0\.0\.1|select|stack|at /i);
  } finally {
    await database.close();
  }
});

test('readiness: 503 while the migration lock is held (an instance migrating), 200 again once released', async () => {
  await t.db('knex_migrations_lock').update({ is_locked: 1 });
  try {
    const res = await t.http.get('/api/health/ready');
    assert.is(res.status, 503, JSON.stringify(res.body));
    const migrating = { status: 'down', message: 'Migrations are running' };
    assert.equal(res.body.error, { migrations: migrating });
    assert.equal(res.body.info, { server: UP, database: UP, ...HEARD });
    // The other probes do not care: the service still answers and its database is up.
    assert.is((await t.http.get('/api/health')).status, 200);
    assert.is((await t.http.get('/api/health/live')).status, 200);
  } finally {
    await t.db('knex_migrations_lock').update({ is_locked: 0 });
  }
  assert.is((await t.http.get('/api/health/ready')).status, 200);
});

test('readiness: 503 once the app drains (a graceful shutdown began), without asking the database; the rest still serves', async () => {
  const app = createApp({ config: loadConfig(TEST_ENV), db: t.db, modules, logError: () => {} });
  const http = request(app.koa.callback());
  await app.ready();
  assert.is((await http.get('/api/health/ready')).status, 200);
  app.drain();
  const res = await http.get('/api/health/ready');
  assert.is(res.status, 503);
  const shutting = { server: { status: 'down', message: 'Shutting down' } };
  assert.equal(res.body, { status: 'error', info: {}, error: shutting, details: shutting });
  assert.is((await http.get('/api/health')).status, 200);
  assert.is((await http.get('/api/health/live')).status, 200);
  await app.close();
});

test('only GET: other methods are not the probe', async () => {
  for (const path of ['/api/health', '/api/health/live', '/api/health/ready']) {
    const res = await t.http.post(path).send({});
    assert.is(res.status, 405, `${path}: status ${res.status}`);
    assert.is(res.body.statusCode, 405);
  }
});

test.run();
