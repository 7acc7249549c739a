// Two instances of the service, each its own process (not one cluster), on one PostgreSQL schema
// and one Redis, as behind a load balancer: they start at once on an empty schema and migrate it
// once; a rate limit counts a caller once across both; a refresh token spent on one is refused on
// the other; a session ended on one is refused on the other at once.
// With TEST_POOLER_URL (the same database through a transaction-mode pooler such as PgBouncer),
// instance B connects through it and must find out by itself that it is there (DATABASE_POOLER=auto).
// The embedded database is one process on one folder, and without Redis each instance counts its
// own callers: on either there is no pair of instances sharing state to test, so the suite skips.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import knex from 'knex';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ensureSchema, openDatabase } from '../../engine/db/database.js';
import { migrate } from '../../engine/db/migrations.js';
import { MIGRATIONS_DIR } from '../../app/paths.js';
import { PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import { assertError, assertUnauthorized } from '../helpers/error-envelope.js';
import { dropSchema, killServers, startServer, type ServerProcess } from '../helpers/server-process.js';

const { DATABASE_URL, REDIS_URL, TEST_POOLER_URL } = process.env;
/** An hour: a session B checked would be trusted that long, unless B is told it ended. */
const SESSION_CHECK_TTL_MS = 3_600_000;
const hex = randomBytes(4).toString('hex');
const schema = `two_instances_${hex}`;

// TRUST_PROXY=loopback: the tests stand in for the load balancer and name each caller's address
// in X-Forwarded-For, so that the sign-ins of one test never use up another's allowance.
const env = {
  DATABASE_URL,
  DATABASE_SCHEMA: schema,
  WEB_CONCURRENCY: '1',
  REDIS_URL,
  RATE_LIMITS: 'on',
  RATE_LIMIT_PREFIX: `two_instances_${hex}`,
  RATE_LIMIT_STORE_TIMEOUT_MS: '5000',
  TRUST_PROXY: 'loopback',
  SESSION_CHECK_TTL_MS: String(SESSION_CHECK_TTL_MS),
};

let a: ServerProcess;
let b: ServerProcess;
const http = () => [request(a.url), request(b.url)] as const;
const from = (address: string) => ({ 'X-Forwarded-For': address });
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

const migrationFiles = () => readdirSync(MIGRATIONS_DIR).filter((f) => /\.(ts|js)$/.test(f));

const ready = Boolean(DATABASE_URL && REDIS_URL);
const it = ready ? test : test.skip;
if (!ready) console.log('  two-instances: skipped, it needs DATABASE_URL and REDIS_URL (state shared by separate processes)');

test.after(async () => {
  killServers();
  if (DATABASE_URL) await dropSchema(DATABASE_URL, schema);
});

it('two instances started at once on an empty schema: the migrations run exactly once, both serve', async () => {
  [a, b] = await Promise.all([startServer(env), startServer({ ...env, DATABASE_URL: TEST_POOLER_URL ?? DATABASE_URL })]);
  const applied = [...a.logs, ...b.logs].filter((l) => l.msg === 'migrations applied');
  assert.is(applied.length, 1, JSON.stringify(applied));
  const files = migrationFiles();
  assert.is(applied[0].migrations.length, files.length);
  const db = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
  try {
    const rows = await db.withSchema(schema).from('knex_migrations').select('name');
    assert.is(rows.length, files.length, 'each migration recorded once');
    assert.is((await db.withSchema(schema).from('knex_migrations_lock').count({ n: '*' }))[0].n, 1, 'one lock row');
  } finally {
    await db.destroy();
  }
  for (const http of [request(a.url), request(b.url)]) assert.is((await http.get('/api/health')).status, 200);
  if (TEST_POOLER_URL) assert.ok(b.logs.some((l) => /transaction pooler/.test(l.msg)), 'B found the pooler');
});

// The same race made certain rather than likely: three pools ask at the same moment (processes
// starting at once rarely reach that point in the same millisecond). Without the locks, knex's
// tables are created by each (all but one fail) and its lock row may be added twice.
(DATABASE_URL ? test : test.skip)('migrate() from three connection pools at once on an empty schema: one applies everything, the others nothing', async () => {
  const racing = `${schema}_race`;
  const databases = await Promise.all([1, 2, 3].map(() => openDatabase({ databaseUrl: DATABASE_URL, schema: racing, pooler: 'auto' })));
  try {
    await Promise.all(databases.map((d) => ensureSchema(d.knex, racing)));
    const applied = await Promise.all(databases.map((d) => migrate(d.knex, [MIGRATIONS_DIR])));
    assert.equal(applied.map((names) => names.length).sort(), [0, 0, migrationFiles().length]);
    assert.is((await databases[0].knex('knex_migrations_lock').count({ n: '*' }))[0].n, 1, 'one lock row');
  } finally {
    await Promise.all(databases.map((d) => d.close()));
    await dropSchema(DATABASE_URL!, racing);
  }
});

it('a rate limit counts a caller once across both instances', async () => {
  const caller = from('203.0.113.10');
  const [httpA, httpB] = http();
  const failedLogin = (h: typeof httpA) => h.post('/api/auth/login').set(caller).send({ email: uniqueEmail('nobody'), password: 'Wrong!Passw0rd' });
  // The sign-in limit: 5 per minute per address, taken in turn on A and B.
  const remaining: string[] = [];
  for (const h of [httpA, httpB, httpA, httpB, httpA]) {
    const res = await failedLogin(h);
    assert.is(res.status, 401, JSON.stringify(res.body));
    remaining.push(res.headers['x-ratelimit-remaining']);
  }
  assert.equal(remaining, ['4', '3', '2', '1', '0']);
  for (const h of [httpB, httpA]) assertError(await failedLogin(h), 429, /^Too Many Requests: the limit "POST \/api\/auth\/login"/);
});

/** A new account (registered on A) signed in on `h`: its access and refresh tokens. */
async function signedIn(h: ReturnType<typeof request>, address: string): Promise<{ token: string; refresh_token: string }> {
  const email = uniqueEmail('pair');
  const reg = await request(a.url).post('/api/auth/register').set(from(address)).send({ user: { firstName: 'Pat', lastName: 'Pair', email }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(reg.status, 201, JSON.stringify(reg.body));
  const res = await h.post('/api/auth/login').set(from(address)).send({ email, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

it('a refresh token spent on one instance is refused on the other', async () => {
  const [httpA, httpB] = http();
  const pair = await signedIn(httpA, '203.0.113.20');
  const spent = await httpA.post('/api/auth/refresh-token').send({ refresh_token: pair.refresh_token });
  assert.is(spent.status, 200, JSON.stringify(spent.body));
  assertUnauthorized(await httpB.post('/api/auth/refresh-token').send({ refresh_token: pair.refresh_token }));
});

// B is told before A answers (engine/db/broadcast.ts); behind a transaction pooler (the PgBouncer
// lane) B cannot listen and keeps nothing. Either way B refuses at once.
it('a session ended on one instance is refused on the other at once', async () => {
  const [httpA, httpB] = http();
  const pair = await signedIn(httpB, '203.0.113.30');
  assert.is((await httpB.get('/api/user/me').set(bearer(pair.token))).status, 200);
  assert.is((await httpA.post('/api/auth/logout').set(bearer(pair.token))).status, 200);
  assertUnauthorized(await httpB.get('/api/user/me').set(bearer(pair.token)));
  assertUnauthorized(await httpA.get('/api/user/me').set(bearer(pair.token)));
  assertUnauthorized(await httpB.post('/api/auth/refresh-token').send({ refresh_token: pair.refresh_token }));
});

test.run();
