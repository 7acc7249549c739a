// PostgreSQL going away under the real server process (`npm start`), staged with a TCP proxy
// between the service and PostgreSQL, while clients keep creating records:
//
// - cut (connections reset, new ones refused) and stall (connections open, no answer): requests
//   answer 503 in the error envelope within DATABASE_TIMEOUT_MS (no hang), /api/health answers 503;
// - restored: the service recovers without a restart (health 200, creates work), no answer belongs
//   to another request (a connection whose query timed out is never reused), and every create
//   answered 201 is in the database. A create answered 503 may be there too: its transaction
//   reached the database, only the answer was lost; it is then complete, like any other record.
//
// PostgreSQL only: skipped without DATABASE_URL (the embedded database runs inside the process,
// there is no connection to lose).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DatabaseTimeoutError } from '../../engine/db/errors.js';
import { openDatabase, resolvePooler } from '../../engine/db/database.js';
import { toHttpError } from '../../engine/http/error-envelope.js';
import { assertError } from '../helpers/error-envelope.js';
import { LOAD_COLOR, newOwner, send, sleep, writeLoad, type Answer, type Owner, type WriteLoad } from '../helpers/http-client.js';
import { killServers, startServer, type ServerProcess, dropSchema } from '../helpers/server-process.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

const DATABASE_URL = process.env.DATABASE_URL;
const pgTest = DATABASE_URL ? test : test.skip;
if (!DATABASE_URL) console.log('database-outage.test.ts: SKIPPED, DATABASE_URL is not set (the embedded database has no connection to lose)');

const TIMEOUT_MS = 1000;
const HEALTH_TIMEOUT_MS = 500;
/**
 * What an answer may take beyond its time limit on a loaded machine: generous, for what these
 * checks catch is a request that waits with no limit at all (the clients give up after 30 s).
 */
const SLACK_MS = 3000;
/** A guard: the service recovers by itself; how soon is printed, not asserted. */
const RECOVERY_LIMIT_MS = 30_000;

const schema = `outage_test_${randomBytes(4).toString('hex')}`;
const cwd = mkdtempSync(path.join(tmpdir(), 'outage-test-'));
let proxy: TcpProxy;
let server: ServerProcess;
let owner: Owner;
let load: WriteLoad;
/** Figures printed at the end. */
const figures: string[] = [];

test.before(async () => {
  if (!DATABASE_URL) return;
  const target = new URL(DATABASE_URL);
  proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  server = await startServer(
    {
      DATABASE_URL: proxy.url(DATABASE_URL),
      DATABASE_SCHEMA: schema,
      WEB_CONCURRENCY: '1',
      DATABASE_TIMEOUT_MS: String(TIMEOUT_MS),
      HEALTH_TIMEOUT_MS: String(HEALTH_TIMEOUT_MS),
    },
    cwd,
  );
  owner = await newOwner(server.url);
  // Three clients creating tags all along, a few requests a second each.
  load = writeLoad({ url: server.url, owner, clients: 3, prefix: `outage-${randomBytes(3).toString('hex')}`, pauseMs: 50 });
});

test.after(async () => {
  await load?.stop();
  killServers();
  await proxy?.close();
  rmSync(cwd, { recursive: true, force: true });
  if (DATABASE_URL) await dropSchema(DATABASE_URL, schema);
  if (figures.length) console.log(figures.join('\n'));
});

async function timed<T>(fn: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const began = Date.now();
  const result = await fn();
  return { result, ms: Date.now() - began };
}

const health = () => send(`${server.url}/api/health`, { timeoutMs: 30_000 });
const createTag = (name: string) =>
  send(`${server.url}/api/tags`, { method: 'POST', headers: owner.auth, body: { name, color: '#00aa00', organizationId: owner.organizationId }, timeoutMs: 30_000 });

function assertHealthDown(res: Answer) {
  assert.is(res.status, 503, JSON.stringify(res.body));
  assert.is(res.body.status, 'error');
  assert.is(res.body.error.database.status, 'down');
}

/** Health answers 200 and a create 201 again: how long that took from now. */
async function recovery(): Promise<number> {
  const began = Date.now();
  while ((await health()).status !== 200) {
    assert.ok(Date.now() - began < RECOVERY_LIMIT_MS, `no recovery within ${RECOVERY_LIMIT_MS} ms`);
    await sleep(50);
  }
  const created = await createTag(`recovered-${randomBytes(3).toString('hex')}`);
  assert.is(created.status, 201, JSON.stringify(created.body));
  return Date.now() - began;
}

/** The load has answers to requests it sent since `from` that `matches` (waited for). */
const loadSaw = (from: number, matches: (status: number) => boolean, what: string) =>
  waitFor(() => load.outcomes.some((o) => o.sentAt >= from && o.answer !== undefined && matches(o.answer.status)), what);

/** The outage as the load's clients saw it: every request answered, the 503s within the limit. */
function assertLoadDuring(from: number, to: number, limitMs: number, what: string) {
  const during = load.outcomes.filter((o) => o.sentAt >= from && o.sentAt < to);
  const errors = during.filter((o) => o.error);
  assert.equal(errors.map((o) => `${o.error!.code} ${o.error!.message}`), [], `${what}: every request got an answer`);
  const unavailable = during.filter((o) => o.answer!.status === 503);
  assert.ok(unavailable.length > 0, `${what}: the clients saw the outage`);
  const other = during.filter((o) => o.answer!.status !== 503 && o.answer!.status !== 201);
  assert.equal(other.map((o) => `${o.answer!.status} ${JSON.stringify(o.answer!.body)}`), [], `${what}: only 201 or 503`);
  const slowest = Math.max(...during.map((o) => o.doneAt - o.sentAt));
  assert.ok(slowest <= limitMs + SLACK_MS, `${what}: a request took ${slowest} ms (limit ${limitMs} ms)`);
  figures.push(`${what}: ${during.length} creates sent by the load, ${unavailable.length} answered 503, the slowest answer after ${slowest} ms`);
}

pgTest('the database cut (connections reset, new ones refused): 503 at once, health 503; restored: it recovers without a restart', async () => {
  await loadSaw(0, (status) => status === 201, 'the load creates tags');
  assert.is((await health()).status, 200);
  const from = Date.now();
  await proxy.cut();
  const down = await timed(health);
  assertHealthDown(down.result);
  const create = await timed(() => createTag('during-cut'));
  assertError(create.result as any, 503, 'The database is not available');
  assert.ok(create.ms <= TIMEOUT_MS + SLACK_MS, `503 after ${create.ms} ms`);
  // The outage lasts until the load's clients have met it too.
  await loadSaw(from, (status) => status === 503, 'the load meets the cut');
  await proxy.restore();
  const to = Date.now();
  const recoveredMs = await recovery();
  assertLoadDuring(from, to, TIMEOUT_MS, 'cut');
  figures.push(`cut: health 503 after ${down.ms} ms, a create 503 after ${create.ms} ms; recovered ${recoveredMs} ms after restore`);
});

pgTest('the database stalled (connections open, no answer): 503 within DATABASE_TIMEOUT_MS, health 503 within HEALTH_TIMEOUT_MS; restored: it recovers', async () => {
  // Served again since the cut: the stall starts on a service that works.
  await loadSaw(Date.now(), (status) => status === 201, 'the load creates tags again');
  const from = Date.now();
  proxy.stall();
  const down = await timed(health);
  assertHealthDown(down.result);
  assert.ok(down.ms <= HEALTH_TIMEOUT_MS + SLACK_MS, `health after ${down.ms} ms`);
  const create = await timed(() => createTag('during-stall'));
  assertError(create.result as any, 503);
  // One of the two answers of a database that does not answer: no other kind of 503.
  assert.match(create.result.body.message, /^The database (did not answer within \d+ ms|is not available)$/);
  // Nothing can time out before the limit has passed since the stall began; the create itself may
  // answer sooner than a whole limit after it was sent, when what it waits for (a new connection
  // another request asked the pool for) began waiting earlier.
  const stalledMs = Date.now() - from;
  assert.ok(stalledMs >= TIMEOUT_MS * 0.9, `no 503 before the limit: the create answered ${stalledMs} ms into the stall`);
  assert.ok(create.ms <= TIMEOUT_MS + SLACK_MS, `503 after ${create.ms} ms`);
  await loadSaw(from, (status) => status === 503, 'the load meets the stall');
  await proxy.restore();
  const to = Date.now();
  const recoveredMs = await recovery();
  assertLoadDuring(from, to, TIMEOUT_MS, 'stall');
  figures.push(`stall: health 503 after ${down.ms} ms, a create 503 after ${create.ms} ms (${JSON.stringify(create.result.body.message)}); recovered ${recoveredMs} ms after restore`);
});

// Behind a transaction pooler the service sets no statement_timeout (it would stay on a pooled
// server connection): the database's own limit is then the role's setting (README, "Behind a
// connection pooler"), which a test cannot give its schema alone.
const pooled = DATABASE_URL ? (await resolvePooler({ databaseUrl: DATABASE_URL, pooler: 'auto' })).pooler === 'transaction' : false;
if (pooled) console.log('  database-outage: the lock-wait test skips behind a transaction pooler (statement_timeout is the role\'s there)');

(pooled ? test.skip : pgTest)('a write waiting on a lock longer than DATABASE_TIMEOUT_MS: 503, and never applied later; other requests are served meanwhile', async () => {
  const created = await createTag(`locked-${randomBytes(3).toString('hex')}`);
  assert.is(created.status, 201, JSON.stringify(created.body));
  const tagUrl = `${server.url}/api/tags/${created.body.id}`;
  const admin = knex({ client: 'pg', connection: DATABASE_URL, searchPath: [schema], pool: { min: 0, max: 1 } });
  try {
    const trx = await admin.transaction();
    try {
      await trx('tag').where({ id: created.body.id }).forUpdate().select('id');
      const { rows } = await trx.raw('select pg_backend_pid() as pid');
      const patch = await timed(() => send(tagUrl, { method: 'PATCH', headers: owner.auth, body: { name: 'renamed' } }));
      assertError(patch.result as any, 503, 'The database took too long to answer');
      assert.ok(patch.ms <= TIMEOUT_MS + SLACK_MS, `503 after ${patch.ms} ms`);
      // The lock is still held: reads are answered (a read waiting for it, or for the connection
      // the write had, would be a 503 after DATABASE_TIMEOUT_MS).
      for (let i = 0; i < 5; i++) {
        const read = await send(tagUrl, { headers: owner.auth });
        assert.is(read.status, 200, JSON.stringify(read.body));
      }
      figures.push(`lock: the blocked write answered 503 after ${patch.ms} ms`);
      // The database has given the write up too (statement_timeout): nothing waits on the lock any more.
      const waiting = async () => (await trx.raw('select count(*)::int as n from pg_stat_activity where ? = any(pg_blocking_pids(pid))', [rows[0].pid])).rows[0].n;
      await waitFor(async () => (await waiting()) === 0, 'the blocked UPDATE is cancelled');
    } finally {
      await trx.rollback();
    }
    const row = await admin('tag').where({ id: created.body.id }).first('name');
    assert.is(row.name, created.body.name, 'the write answered 503 was not applied once the lock was released');
  } finally {
    await admin.destroy();
  }
});

pgTest('a connection whose query timed out is never used again: the next query runs on a new one', async () => {
  const target = new URL(DATABASE_URL!);
  const own = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const database = await openDatabase({ databaseUrl: own.url(DATABASE_URL!), timeoutMs: 300, poolMax: 1 });
  try {
    const backend = async () => (await database.knex.raw('select pg_backend_pid() as pid')).rows[0].pid as number;
    const before = await backend();
    own.stall();
    const err = await database.knex.raw('select 1').then(() => undefined, (e: unknown) => e);
    assert.instance(err, DatabaseTimeoutError);
    await own.restore();
    // The held query now reaches the server and is answered: on a connection nobody listens to.
    const after = await backend();
    assert.is.not(after, before, 'a new connection (another server process)');
  } finally {
    await database.close().catch(() => {});
    await own.close();
  }
});

pgTest('what the driver says when a connection is lost under a query, or cannot be opened in time, is a 503 (never a 500)', async () => {
  const target = new URL(DATABASE_URL!);
  const own = await startTcpProxy(target.hostname, Number(target.port || 5432));
  const database = await openDatabase({ databaseUrl: own.url(DATABASE_URL!), timeoutMs: 500, poolMax: 1 });
  try {
    // A query under way when the connection is cut: seen running by the server, then cut.
    const marker = `lost_${randomBytes(4).toString('hex')}`;
    const running = database.knex.raw(`select pg_sleep(20) as ${marker}`).then(() => undefined, (e: unknown) => e);
    const admin = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
    const underWay = `select pid from pg_stat_activity where state = 'active' and query like '%as ${marker}'`;
    try {
      await waitFor(async () => (await admin.raw(underWay)).rows.length > 0, 'the query runs');
      await own.cut();
    } finally {
      // The server would sleep on for a client that is gone.
      await admin.raw(`select pg_terminate_backend(pid) from (${underWay}) as q`).catch(() => {});
      await admin.destroy();
    }
    const lost = toHttpError(await running);
    assert.is(lost.status, 503, String(await running));
    assert.is(lost.messages, 'The database is not available');
    // A connection that cannot be opened in time (the server accepts, then says nothing).
    await own.restore();
    own.stall();
    const slowConnect = await database.knex.raw('select 1').then(() => undefined, (e: unknown) => e);
    assert.is(toHttpError(slowConnect).status, 503, String(slowConnect));
  } finally {
    await database.close().catch(() => {});
    await own.close();
  }
});

pgTest('after the outages: every answer is its own request\'s (no stale answer from a timed-out connection), every 201 is stored', async () => {
  // Reads and writes right after the stall: each answer must be about what was asked.
  for (let i = 0; i < 20; i++) {
    const name = `after-${i}-${randomBytes(3).toString('hex')}`;
    const created = await createTag(name);
    assert.is(created.status, 201, JSON.stringify(created.body));
    assert.is(created.body.name, name);
    const read = await send(`${server.url}/api/tags/${created.body.id}`, { headers: owner.auth });
    assert.is(read.status, 200, JSON.stringify(read.body));
    assert.is(read.body.id, created.body.id);
  }
  await load.stop();
  const mismatched = load.outcomes.filter((o) => o.answer?.status === 201 && o.answer.body.name !== o.name);
  assert.equal(mismatched.map((o) => `${o.name} answered with ${o.answer!.body.name}`), [], 'every 201 names its own tag');

  const code = await server.stop();
  assert.is(code, 0, server.stderr());
  const db = knex({ client: 'pg', connection: DATABASE_URL, searchPath: [schema], pool: { min: 0, max: 1 } });
  try {
    const acknowledged = load.acknowledged();
    const stored = new Map((await db('tag').whereIn('id', acknowledged.map((a) => a.id)).select('id', 'name')).map((r) => [r.id, r.name]));
    const lost = acknowledged.filter((a) => stored.get(a.id) !== a.name);
    assert.equal(lost, [], `${lost.length} of ${acknowledged.length} acknowledged creates are missing`);
    // The 503s: absent, or stored whole (their answer was lost, not their write).
    const refused = load.outcomes.filter((o) => o.answer?.status === 503).map((o) => o.name);
    const storedAnyway = await db('tag').whereIn('name', refused).select('name', 'color', 'organizationId');
    for (const row of storedAnyway) {
      assert.is(row.color, LOAD_COLOR);
      assert.is(row.organizationId, owner.organizationId);
    }
    figures.push(`writes: ${acknowledged.length} acknowledged, all stored; ${refused.length} answered 503, of which ${storedAnyway.length} stored anyway`);
  } finally {
    await db.destroy();
  }
});

test.run();
