// Sign-out and the other ends of a session take effect at once on every process serving one
// PostgreSQL database: two workers of one instance, and two instances. Each process keeps what it
// knows of a session for an hour here (SESSION_CHECK_TTL_MS), so only the broadcast
// (engine/db/broadcast.ts) can make the other process refuse at once. The embedded database is
// served by one process: nothing to test there (test/auth covers one process).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { broadcastKeys } from '../../engine/db/broadcast.js';
import { PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { assertUnauthorized } from '../helpers/error-envelope.js';
import { dropSchema, killServers, startServer, type ServerProcess } from '../helpers/server-process.js';

const DATABASE_URL = process.env.DATABASE_URL;
const HOUR = '3600000';


const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A new tenant's owner on `http`, signed in: its access and refresh tokens. */
async function owner(http: request.Agent | ReturnType<typeof request>) {
  const email = uniqueEmail('revoke');
  const reg = await http.post('/api/auth/register').send({ user: { firstName: 'Rita', lastName: 'Voke', email }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(reg.status, 201, JSON.stringify(reg.body));
  const res = await http.post('/api/auth/login').send({ email, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return { email, token: res.body.token as string, refresh: res.body.refresh_token as string };
}

/** The tags named with `prefix` in the schema: what a refused write must not have left. */
async function tagsNamed(schema: string, prefix: string): Promise<number> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query(`select count(*)::int as n from ${pg.escapeIdentifier(schema)}.tag where name like $1`, [`${prefix}%`]);
    return rows[0].n;
  } finally {
    await client.end();
  }
}

/** Ten writes at once with the token, each refused (401), and none stored. */
async function assertWritesRefused(http: ReturnType<typeof request>, token: string, schema: string) {
  const prefix = `after-${randomBytes(4).toString('hex')}`;
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => http.post('/api/tags').set(bearer(token)).send({ name: `${prefix}-${i}`, color: 'red' })));
  for (const res of answers) assertUnauthorized(res);
  assert.is(await tagsNamed(schema, prefix), 0, 'nothing stored');
}

/** Reads that put the token's session into the answers of every process reached. */
async function readsAccepted(http: ReturnType<typeof request>, token: string, times = 10) {
  for (let i = 0; i < times; i += 1) assert.is((await http.get('/api/user/me').set(bearer(token))).status, 200);
}

const onPostgres = DATABASE_URL ? test : test.skip;
const schemas: string[] = [];
const servers: ServerProcess[] = [];
async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const server = await startServer({ DATABASE_URL, SESSION_CHECK_TTL_MS: HOUR, ...env });
  servers.push(server);
  return server;
}
const newSchema = () => {
  const schema = `revoke_test_${randomBytes(4).toString('hex')}`;
  schemas.push(schema);
  return schema;
};

test.after(async () => {
  killServers();
  for (const schema of schemas) await dropSchema(DATABASE_URL!, schema);
});

onPostgres('two workers: after a sign-out, ten writes at once with its token are all 401 and nothing is stored', async () => {
  const schema = newSchema();
  const server = await serve({ DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '2' });
  try {
    const http = request(server.url);
    const user = await owner(http);
    // Each request opens a connection of its own: the cluster hands them to both workers in turn
    // (without the broadcast, the worker that did not sign out stores some of the ten: checked).
    await readsAccepted(http, user.token);

    assert.is((await http.post('/api/auth/logout').set(bearer(user.token))).status, 200);
    await assertWritesRefused(http, user.token, schema);
  } finally {
    await server.stop();
  }
});

onPostgres('two instances: sign-out, password change and a refresh token shown twice on A are refused on B at once', async () => {
  const schema = newSchema();
  const a = await serve({ DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' });
  const b = await serve({ DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' });
  try {
    const [httpA, httpB] = [request(a.url), request(b.url)];

    // Sign-out.
    const leaving = await owner(httpA);
    await readsAccepted(httpB, leaving.token, 2);
    assert.is((await httpA.post('/api/auth/logout').set(bearer(leaving.token))).status, 200);
    await assertWritesRefused(httpB, leaving.token, schema);

    // A password change ends every other session of the user; the caller's stays.
    const user = await owner(httpA);
    const other = (await httpB.post('/api/auth/login').send({ email: user.email, password: PASSWORD })).body;
    await readsAccepted(httpB, other.token, 2);
    const changed = await httpA.post('/api/auth/change-password').set(bearer(user.token))
      .send({ currentPassword: PASSWORD, newPassword: `${PASSWORD}2`, confirmPassword: `${PASSWORD}2` });
    assert.is(changed.status, 200, JSON.stringify(changed.body));
    await assertWritesRefused(httpB, other.token, schema);
    await readsAccepted(httpB, user.token, 1);

    // A refresh token shown a second time ends its whole family (session).
    const family = await owner(httpA);
    await readsAccepted(httpB, family.token, 2);
    assert.is((await httpA.post('/api/auth/refresh-token').send({ refresh_token: family.refresh })).status, 200);
    assertUnauthorized(await httpA.post('/api/auth/refresh-token').send({ refresh_token: family.refresh }));
    await assertWritesRefused(httpB, family.token, schema);
  } finally {
    await a.stop();
    await b.stop();
  }
});

onPostgres('two instances: a role changed on A is the role its token acts with on B at once', async () => {
  const schema = newSchema();
  const a = await serve({ DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' });
  const b = await serve({ DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' });
  try {
    const [httpA, httpB] = [request(a.url), request(b.url)];
    const boss = await owner(httpA);
    const email = uniqueEmail('admin');
    const reg = await httpA.post('/api/auth/register').set(bearer(boss.token))
      .send({ user: { firstName: 'Ada', lastName: 'Min', email, role: 'ADMIN' }, password: PASSWORD, confirmPassword: PASSWORD });
    assert.is(reg.status, 201, JSON.stringify(reg.body));
    const admin = (await httpA.post('/api/auth/login').send({ email, password: PASSWORD })).body.token as string;
    assert.is((await httpB.post('/api/tags').set(bearer(admin)).send({ name: `kept-${randomBytes(4).toString('hex')}`, color: 'red' })).status, 201);

    assert.is((await httpA.put('/api/user/me').set(bearer(admin)).send({ role: 'VIEWER' })).status, 200);
    const prefix = `demoted-${randomBytes(4).toString('hex')}`;
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => httpB.post('/api/tags').set(bearer(admin)).send({ name: `${prefix}-${i}`, color: 'red' })));
    for (const res of answers) assert.is(res.status, 403, JSON.stringify(res.body));
    assert.is(await tagsNamed(schema, prefix), 0);
    assert.is((await httpB.get('/api/auth/check').set(bearer(admin))).body.role, 'VIEWER');
  } finally {
    await a.stop();
    await b.stop();
  }
});

/** This database's listening connections (pg_locks shows the whole server's). */
const LISTENERS = `select pid from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())
  and classid = $1::bigint::oid and objid = $2::bigint::oid and objsubid = 2`;

onPostgres('the channel cut: B cannot listen, keeps nothing, and refuses a sign-out made on A at once; then listens again', async () => {
  const schema = newSchema();
  const a = await serve({ DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' });
  const b = await serve({ DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '1' });
  const holder = new pg.Client({ connectionString: DATABASE_URL });
  await holder.connect();
  try {
    const [httpA, httpB] = [request(a.url), request(b.url)];
    const user = await owner(httpA);
    await readsAccepted(httpB, user.token, 2);
    // Both listening connections ended by the server (a restart, a network fault), and kept from
    // listening again by an exclusive hold on their lock.
    const { lockClass, lockKey } = broadcastKeys(schema);
    for (let tries = 0; ; tries += 1) {
      const { rows } = await holder.query(LISTENERS, [lockClass, lockKey]);
      if (tries === 0) assert.is(rows.length, 2, 'both listeners found');
      for (const { pid } of rows) await holder.query('select pg_terminate_backend($1)', [pid]);
      if ((await holder.query('select pg_try_advisory_lock($1, $2) as taken', [lockClass, lockKey])).rows[0].taken) break;
      assert.ok(tries < 50, 'the listeners kept their lock');
    }
    await b.waitForLog((l) => l.msg === 'broadcast: not listening', 10_000);
    await a.waitForLog((l) => l.msg === 'broadcast: not listening', 10_000);
    const deaf = await httpB.get('/api/health/ready');
    assert.is(deaf.status, 200, 'still ready: it keeps nothing');
    assert.match(deaf.body.details.broadcast.message, /every request asks the database$/);
    // Deaf, both keep nothing and ask the database: a sign-out is refused at once all the same.
    assert.is((await httpA.post('/api/auth/logout').set(bearer(user.token))).status, 200);
    await assertWritesRefused(httpB, user.token, schema);
    // Released: B listens again within seconds, and hears A.
    await holder.query('select pg_advisory_unlock($1, $2)', [lockClass, lockKey]);
    await b.waitForLog((l) => l.msg === 'broadcast: listening again', 10_000);
    await a.waitForLog((l) => l.msg === 'broadcast: listening again', 10_000);
    assert.equal((await httpB.get('/api/health/ready')).body.details.broadcast, { status: 'up' });
    const again = await owner(httpA);
    await readsAccepted(httpB, again.token, 2);
    assert.is((await httpA.post('/api/auth/logout').set(bearer(again.token))).status, 200);
    await assertWritesRefused(httpB, again.token, schema);
  } finally {
    await holder.end();
    await a.stop();
    await b.stop();
  }
});

test.run();
