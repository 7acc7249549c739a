// Graceful shutdown of the real server process (`npm start`): on SIGTERM its readiness turns 503
// (serving on for SHUTDOWN_DELAY_MS when set), then it stops accepting,
// finishes the requests in flight, answers them with `Connection: close`, closes the database and
// exits 0, losing no acknowledged write; a request longer than SHUTDOWN_GRACE_MS is cut and the
// process still exits 0, soon after. On the embedded database one process serves (its data folder
// is opened afterwards to count rows); with DATABASE_URL a cluster of two workers does, in a
// schema of its own.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import knex from 'knex';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openDatabase } from '../../engine/db/database.js';
import { STOP_MARGIN_MS } from '../../engine/process/shutdown.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newOwner, NoAnswer, openRequest, send, sleep, writeLoad, type Outcome } from '../helpers/http-client.js';
import { migratedDataFolder } from '../helpers/migrated-folder.js';
import { killServers, startServer, type ServerProcess, dropSchema } from '../helpers/server-process.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

const DATABASE_URL = process.env.DATABASE_URL;
const REDIS_URL = process.env.REDIS_URL;
const cwd = mkdtempSync(path.join(tmpdir(), 'shutdown-test-'));
const schema = `shutdown_test_${randomBytes(4).toString('hex')}`;
/** Where the servers of this file keep their data: one embedded folder (started in turn), or one PostgreSQL schema. */
const serverEnv = (extra: Record<string, string> = {}) =>
  DATABASE_URL ? { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '2', ...extra } : { DATA_DIR: path.join(cwd, 'data'), ...extra };
const clustered = Boolean(DATABASE_URL);
if (!clustered) console.log('shutdown.test.ts: embedded database, one process (set DATABASE_URL to run it on a cluster of two workers)');

test.before(async () => {
  if (!DATABASE_URL) await migratedDataFolder(path.join(cwd, 'data'));
});

test.after(async () => {
  killServers();
  rmSync(cwd, { recursive: true, force: true });
  if (DATABASE_URL) await dropSchema(DATABASE_URL, schema);
});

/** The tags with these ids in the database the servers used (read once they have stopped). */
async function storedTags(ids: string[]): Promise<Map<string, string>> {
  if (DATABASE_URL) {
    const db = knex({ client: 'pg', connection: DATABASE_URL, searchPath: [schema], pool: { min: 0, max: 1 } });
    try {
      const rows = await db('tag').whereIn('id', ids).select('id', 'name');
      return new Map(rows.map((r) => [r.id, r.name]));
    } finally {
      await db.destroy();
    }
  }
  const database = await openDatabase({ dataDir: path.join(cwd, 'data') });
  try {
    const rows: Array<{ id: string; name: string }> = await database.knex('tag').whereIn('id', ids).select('id', 'name');
    return new Map(rows.map((r) => [r.id, r.name]));
  } finally {
    await database.close();
  }
}

/** Resolves once every serving process has begun to stop (a cluster's workers log it after their primary). */
function stopping(server: ServerProcess): Promise<unknown> {
  const servingPids = clustered ? server.logs.filter((l) => l.msg === 'listening').map((l) => l.pid) : [server.child.pid];
  return Promise.all(servingPids.map((pid) => server.waitForLog((l) => l.msg === 'shutting down' && l.pid === pid, 10_000)));
}

const describe = (o: Outcome) => `client ${o.client} ${o.name}: ${o.error ? `${o.error.code} ${o.error.message} (reused socket: ${o.error.reusedSocket})` : `${o.answer!.status} ${JSON.stringify(o.answer!.body)}`}`;

test('SIGTERM under a steady write load: exit 0, in-flight requests finish with Connection: close, no client is reset (idle connections included), every acknowledged create is stored', async () => {
  const server = await startServer(serverEnv(), cwd);
  const owner = await newOwner(server.url);
  // A client whose keep-alive connection is idle at the signal.
  const idleAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const idleFirst = await send(`${server.url}/api/health`, { agent: idleAgent });
  assert.is(idleFirst.headers.connection, 'keep-alive');
  const prefix = `load-${randomBytes(3).toString('hex')}`;
  const load = writeLoad({ url: server.url, owner, clients: 6, prefix, stopOn: ['ECONNREFUSED'] });
  const created = () => load.outcomes.filter((o) => o.answer?.status === 201).length;
  await waitFor(() => created() >= 30, 'a steady load: 30 creates');

  // A request in flight across the signal: its headers and part of its body before, the rest after.
  const slowBody = JSON.stringify({ name: `${prefix}-slow`, color: '#654321', organizationId: owner.organizationId });
  const slow = openRequest(`${server.url}/api/tags`, { headers: owner.auth, contentLength: Buffer.byteLength(slowBody) });
  slow.write(slowBody.slice(0, 10));
  await slow.received;

  const signalAt = Date.now();
  server.child.kill('SIGTERM');
  await stopping(server);
  // The port is closed (a new connection is refused): from then on a cluster's workers may close
  // connections, and their clients are refused rather than reset when they come back.
  await waitFor(async () => (await send(`${server.url}/api/health`).then(() => false, (err: NoAnswer) => err.code === 'ECONNREFUSED')), 'the port is closed');
  // The idle client does not know yet: it reuses its connection, as it may at any moment.
  const idleSecond = await send(`${server.url}/api/health`, { agent: idleAgent }).catch((err: NoAnswer) => err);
  idleAgent.destroy();
  slow.end(slowBody.slice(10));
  const slowAnswer = await slow.answer;
  const code = await server.exited;
  const exitedAt = Date.now();
  await Promise.race([load.done, sleep(10_000).then(() => load.stop())]);

  assert.is(code, 0, server.stderr());
  if (idleSecond instanceof NoAnswer) throw new Error(`the idle connection was dropped under its client: ${idleSecond.code} ${idleSecond.message}`);
  assert.ok(idleSecond.reusedSocket, 'the idle connection was reused');
  assert.is(idleSecond.status, 200, JSON.stringify(idleSecond.body));
  assert.is(idleSecond.headers.connection, 'close');
  assert.is(slowAnswer.status, 201, JSON.stringify(slowAnswer.body));
  assert.is(slowAnswer.headers.connection, 'close', 'an answer sent while stopping closes its connection');

  const { outcomes } = load;
  // The only failure a client may see: a new connection refused once the listener has closed.
  const failures = outcomes.filter((o) => (o.error && o.error.code !== 'ECONNREFUSED') || (o.answer && o.answer.status !== 201));
  assert.equal(failures.map(describe), [], 'no reset, no hang-up, no error answer');
  const beforeSignal = outcomes.filter((o) => o.doneAt < signalAt && o.answer?.status === 201).length;
  assert.ok(beforeSignal >= 30, `a steady load before the signal (${beforeSignal} creates)`);
  const inFlight = outcomes.filter((o) => o.sentAt <= signalAt && o.doneAt >= signalAt);
  assert.ok(inFlight.every((o) => o.answer?.status === 201), inFlight.map(describe).join('\n'));
  // Every client was told to close its connection, then found the door shut (it ended on a refusal).
  for (let client = 0; client < 6; client++) {
    const own = outcomes.filter((o) => o.client === client);
    const last = own[own.length - 1];
    assert.is(last.error?.code, 'ECONNREFUSED', describe(last));
    const lastAnswer = own.filter((o) => o.answer).pop()!;
    assert.is(lastAnswer.answer!.headers.connection, 'close', describe(lastAnswer));
  }

  const acknowledged = [...load.acknowledged(), { id: slowAnswer.body.id, name: slowAnswer.body.name }];
  const stored = await storedTags(acknowledged.map((a) => a.id));
  const missing = acknowledged.filter((a) => stored.get(a.id) !== a.name);
  assert.equal(missing, [], `${missing.length} of ${acknowledged.length} acknowledged creates are not stored`);

  const stopped = server.logs.filter((l) => l.msg === 'stopped');
  assert.is(stopped.length, clustered ? 2 : 1, JSON.stringify(stopped));
  assert.ok(stopped.every((l) => l.cutRequests === 0), 'nothing was cut');
  console.log(
    `shutdown under load: ${acknowledged.length} creates acknowledged (${inFlight.length} in flight at the signal), ` +
      `exit ${exitedAt - signalAt} ms after SIGTERM (${stopped.map((l) => `${l.ms} ms`).join(', ')} to stop)`,
  );
});

test('a request longer than SHUTDOWN_GRACE_MS is cut when it ends; the process still exits 0, within the grace period and its margin', async () => {
  const graceMs = 1000;
  const server = await startServer(serverEnv({ SHUTDOWN_GRACE_MS: String(graceMs), REQUEST_TIMEOUT_MS: '60000' }), cwd);
  const owner = await newOwner(server.url);
  // A body that never comes in full: the request stays in flight as long as the server lets it.
  const endless = openRequest(`${server.url}/api/tags`, { headers: owner.auth, contentLength: 1000 });
  endless.write('{"name": "');
  await endless.received;
  const signalAt = Date.now();
  server.child.kill('SIGTERM');
  const code = await server.exited;
  const tookMs = Date.now() - signalAt;
  assert.is(code, 0, server.stderr());
  assert.ok(tookMs >= graceMs, `waited for the grace period (${tookMs} ms)`);
  assert.ok(tookMs < graceMs + STOP_MARGIN_MS, `exited ${tookMs} ms after SIGTERM`);
  const answer = await endless.answer.then(
    (a) => `answered ${a.status}`,
    (err: NoAnswer) => err.code,
  );
  assert.is(answer, 'ECONNRESET', 'the connection was cut');
  const cut = server.logs.find((l) => l.msg === 'requests still running at the end of the grace period were cut');
  assert.is(cut?.requests, 1, JSON.stringify(server.logs.filter((l) => l.level !== 'info')));
  assert.ok(server.logs.some((l) => l.msg === 'stopped' && l.cutRequests === 1));
  console.log(`grace ${graceMs} ms: exit ${tookMs} ms after SIGTERM`);
});

test('SHUTDOWN_DELAY_MS: after SIGTERM readiness is 503 at once while the rest still serves; the process stops after the delay and exits 0', async () => {
  const delayMs = 5000;
  const server = await startServer(serverEnv({ SHUTDOWN_DELAY_MS: String(delayMs) }), cwd);
  assert.is((await send(`${server.url}/api/health/ready`)).status, 200);
  const signalAt = Date.now();
  server.child.kill('SIGTERM');
  await stopping(server);
  // Within the delay the port is open: a load balancer polling readiness learns to stop sending.
  const ready = await send(`${server.url}/api/health/ready`);
  const live = await send(`${server.url}/api/health/live`);
  const health = await send(`${server.url}/api/health`);
  const code = await server.exited;
  const tookMs = Date.now() - signalAt;
  assert.is(ready.status, 503, JSON.stringify(ready.body));
  assert.equal(ready.body.error, { server: { status: 'down', message: 'Shutting down' } });
  assert.is(live.status, 200);
  assert.is(health.status, 200);
  assert.is(code, 0, server.stderr());
  assert.ok(tookMs >= delayMs, `stopped only after the delay (${tookMs} ms)`);
});

// Two connections: the rate limits' counts and the idempotency keys' entries (engine/idempotency/redis-store.ts).
(REDIS_URL ? test : test.skip)('closing the app disconnects its Redis connections (and they do not reconnect)', async () => {
  const redis = new URL(REDIS_URL!);
  const proxy = await startTcpProxy(redis.hostname, Number(redis.port || 6379));
  let t: TestApp | undefined;
  try {
    t = await createTestApp({ env: { RATE_LIMITS: 'on', REDIS_URL: proxy.url(REDIS_URL!) } });
    assert.is((await t.http.get('/api/health')).status, 200);
    await waitFor(() => proxy.connections === 2, 'both stores connected to Redis through the proxy');
    const closing = t;
    t = undefined;
    const client = closing.rateLimiting.store!.db as { status: string };
    await closing.close();
    await waitFor(() => proxy.connections === 0, 'the connection to Redis is closed');
    // Closed for good: ioredis reconnects from no other state (a wait would only guess how long to watch).
    assert.is(client.status, 'end');
    assert.is(proxy.accepted, 2, 'no reconnection');
  } finally {
    await t?.close();
    await proxy.close();
  }
});
if (!REDIS_URL) console.log('shutdown.test.ts: the Redis test is SKIPPED, REDIS_URL is not set');

test.run();
