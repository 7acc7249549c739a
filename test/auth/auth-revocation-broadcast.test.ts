// What ends a session or changes a user's role reaches every app serving the database before the
// request that did it answers (engine/db/broadcast.ts, auth/session/live.ts): two apps on one
// database, each keeping what it knows of a session for an hour. On PostgreSQL they hear each
// other through LISTEN/NOTIFY; on the embedded database the apps of the process share one
// broadcast. And the broadcast's own guarantees: a listener that never confirms holds a sign-out
// up by at most BROADCAST_WAIT_MS (logged), and a process that stops hearing says so in readiness.
import { randomBytes, randomUUID } from 'node:crypto';
import { announceChange } from '../../auth/session/live.js';
import pg from 'pg';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BROADCAST_WAIT_MS, broadcastKeys } from '../../engine/db/broadcast.js';
import { newTenant, userWithRole, type Session } from '../helpers/accounts.js';
import { createTestApp, usingPostgres, type TestApp } from '../helpers/app.js';
import { assertUnauthorized } from '../helpers/error-envelope.js';
import { siblingApps } from '../helpers/ratelimit.js';

const HOUR = '3600000';

let t: TestApp;
let owner: Session & { organizationId: string };
const logged: Array<{ level: string; msg: string; extra?: Record<string, unknown> }> = [];
const env = { SESSION_CHECK_TTL_MS: HOUR };
const siblings = siblingApps(() => t, { env: { ...env, RATE_LIMITS: 'off' } });

test.before(async () => {
  t = await createTestApp({ env, appOptions: { log: (level, msg, extra) => logged.push({ level, msg, extra }) } });
  owner = await newTenant(t);
});
test.after(async () => {
  await siblings.closeAll();
  await t.close();
});

const tagName = () => `broadcast-${randomBytes(4).toString('hex')}`;

test('a sign-out through one app: the other refuses the token on its next request, though it kept the session for an hour', async () => {
  const other = siblings.create();
  await other.ready();
  const user = await userWithRole(t, owner, 'ADMIN');
  assert.is((await other.http.get('/api/user/me').set(user.auth)).status, 200);
  assert.is((await t.http.post('/api/auth/logout').set(user.auth)).status, 200);
  const name = tagName();
  assertUnauthorized(await other.http.post('/api/tags').set(user.auth).send({ name, color: 'red' }));
  assert.is(await t.db('tag').where({ name }).first(), undefined, 'nothing stored');
});

test("a role change through one app: the other acts with the new role on the token's next request", async () => {
  const other = siblings.create();
  await other.ready();
  const user = await userWithRole(t, owner, 'ADMIN');
  const name = tagName();
  assert.is((await other.http.post('/api/tags').set(user.auth).send({ name, color: 'red' })).status, 201);
  assert.is((await other.http.get('/api/auth/check').set(user.auth)).body.role, 'ADMIN');

  const res = await t.http.put('/api/user/me').set(user.auth).send({ role: 'VIEWER' });
  assert.is(res.status, 200, JSON.stringify(res.body));
  // The token still says ADMIN; the user is a VIEWER now, on both apps, at once.
  const check = await other.http.get('/api/auth/check').set(user.auth);
  assert.is(check.body.role, 'VIEWER');
  const refused = await other.http.post('/api/tags').set(user.auth).send({ name: tagName(), color: 'red' });
  assert.is(refused.status, 403, JSON.stringify(refused.body));
  assert.is((await t.http.post('/api/tags').set(user.auth).send({ name: tagName(), color: 'red' })).status, 403);
  // And it cannot take the role back with the token it had as an ADMIN.
  assert.is((await other.http.put('/api/user/me').set(user.auth).send({ role: 'ADMIN' })).status, 403);
  const stored = await t.db('user').join('role', 'role.id', 'user.roleId').where('user.id', user.userId).first('role.name');
  assert.is(stored.name, 'VIEWER');
});

/** This database's listening connections, in pg_locks (which shows the whole server's). */
const LISTENERS = `select pid from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())
  and classid = ?::bigint::oid and objid = ?::bigint::oid and objsubid = 2`;

const keys = () => broadcastKeys(t.config.databaseSchema ?? '');

/** A connection that joins the listeners (takes their lock, LISTENs) and never confirms anything. */
async function silentListener(): Promise<pg.Client> {
  const { channel, lockClass, lockKey } = keys();
  const client = new pg.Client(t.db.client.connectionSettings);
  await client.connect();
  await client.query(`listen ${channel}`);
  await client.query('select pg_advisory_lock_shared($1, $2)', [lockClass, lockKey]);
  return client;
}

(usingPostgres() ? test : test.skip)('a listener that never confirms holds a sign-out up by the bound, which is logged; the sign-out still holds', async () => {
  const silent = await silentListener();
  try {
    const user = await userWithRole(t, owner, 'ADMIN');
    const before = logged.length;
    const started = Date.now();
    assert.is((await t.http.post('/api/auth/logout').set(user.auth)).status, 200);
    const took = Date.now() - started;
    assert.ok(took >= BROADCAST_WAIT_MS - 50, `waited for the silent listener (${took} ms)`);
    const line = logged.slice(before).find((l) => l.msg === 'broadcast: not every process confirmed in time');
    assert.ok(line, JSON.stringify(logged.slice(before)));
    // The other apps of this file confirmed; the silent one did not.
    assert.is(Number(line!.extra?.expected) - Number(line!.extra?.confirmed), 1);
    assertUnauthorized(await t.http.get('/api/user/me').set(user.auth));
  } finally {
    await silent.end();
  }
});

// A change announced before a process listened (it was starting) and not committed yet: the process
// cannot know which sessions it ends, so it keeps no live answer until such a change has surely committed.
(usingPostgres() ? test : test.skip)('a process that starts listening while a change is being made keeps no live answer meanwhile', async () => {
  const user = await userWithRole(t, owner, 'ADMIN');
  const trx = await t.db.transaction();
  try {
    await announceChange(t.engine.broadcast, { users: [randomUUID()] }, trx);
    const late = siblings.create();
    await late.ready();
    assert.is((await late.http.get('/api/user/me').set(user.auth)).status, 200);
    // Ended behind the apps' back: a kept answer would still say live.
    await t.db('user_session').where({ userId: user.userId }).update({ revokedAt: t.db.fn.now() });
    assertUnauthorized(await late.http.get('/api/user/me').set(user.auth));
  } finally {
    await trx.rollback();
  }
});

(usingPostgres() ? test : test.skip)('whatever else is sent on the channel is ignored, and the processes go on', async () => {
  const { channel } = keys();
  for (const payload of ['null', '42', '"x"', '[]', '{}', 'not json', '{"id":1,"topic":"sessions","from":1,"reply":"elsewhere","message":{}}',
    `{"id":"x","topic":"sessions","from":1,"reply":"${channel}_1","message":{"sessions":null,"users":[1,{"a":2}]}}`]) {
    await t.db.raw('select pg_notify(?, ?)', [channel, payload]);
  }
  const user = await userWithRole(t, owner, 'ADMIN');
  assert.is((await t.http.get('/api/user/me').set(user.auth)).status, 200);
  assert.is((await t.http.post('/api/auth/logout').set(user.auth)).status, 200);
  assertUnauthorized(await t.http.get('/api/user/me').set(user.auth));
  assert.not.ok(logged.some((l) => l.msg === 'broadcast: a message could not be handled'), JSON.stringify(logged));
});

(usingPostgres() ? test : test.skip)('a process that cannot listen: ready all the same, says why, keeps nothing, and listens again once it can', async () => {
  const user = await userWithRole(t, owner, 'ADMIN');
  assert.is((await t.http.get('/api/user/me').set(user.auth)).status, 200);
  const { lockClass, lockKey } = keys();
  // An exclusive hold on the listeners' lock keeps every process of this database from listening again.
  const holder = new pg.Client(t.db.client.connectionSettings);
  await holder.connect();
  const before = logged.length;
  try {
    assert.ok((await t.db.raw(LISTENERS, [lockClass, lockKey])).rows.length >= 1);
    // The listeners ended by the server (as a restart would), until the exclusive hold is taken
    // before any of them listens again.
    for (let tries = 0; ; tries += 1) {
      for (const { pid } of (await t.db.raw(LISTENERS, [lockClass, lockKey])).rows) await t.db.raw('select pg_terminate_backend(?)', [pid]);
      if ((await holder.query('select pg_try_advisory_lock($1, $2) as taken', [lockClass, lockKey])).rows[0].taken) break;
      assert.ok(tries < 50, 'the listeners kept their lock');
    }
    for (let i = 0; i < 200 && !logged.slice(before).some((l) => l.msg === 'broadcast: not listening'); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    const ready = await t.http.get('/api/health/ready');
    assert.is(ready.status, 200, JSON.stringify(ready.body));
    assert.is(ready.body.details.broadcast.status, 'up');
    assert.match(ready.body.details.broadcast.message, /every request asks the database$/);
    // A session ended behind the app's back (no announcement at all) is refused at once: nothing was kept.
    await t.db('user_session').where({ userId: user.userId }).update({ revokedAt: t.db.fn.now() });
    assertUnauthorized(await t.http.get('/api/user/me').set(user.auth));
  } finally {
    await holder.end();
  }
  for (let i = 0; i < 200 && !logged.slice(before).some((l) => l.msg === 'broadcast: listening again'); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(logged.slice(before).some((l) => l.msg === 'broadcast: listening again'), JSON.stringify(logged.slice(before)));
  assert.equal((await t.http.get('/api/health/ready')).body.details.broadcast, { status: 'up' });
});

test.run();
