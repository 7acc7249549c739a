// `npm start` on PostgreSQL is a node:cluster: a primary that migrates once and forks
// WEB_CONCURRENCY workers sharing the port. Through the real server process: two workers serve,
// the migrations ran once, a rate limit counts a caller once across workers (the counts live in
// the primary when there is no Redis), a killed worker is replaced, a worker that fails to start
// over and over is retried with back-off while another serves, the cluster stops with one message
// only when no worker can start, SIGTERM stops everything with exit code 0, and a worker closes a
// connection whose refused body is still arriving without losing the answer. Every wait is for
// the log line or answer it needs, bounded (the bound is a guard against a hang, not a timing).
// PostgreSQL only: skipped without DATABASE_URL (the embedded database is always one process,
// see server.test.ts).
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { createServer } from 'node:net';
import knex from 'knex';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MIGRATIONS_DIR } from '../../app/paths.js';
import { PASSWORD } from '../helpers/accounts.js';
import { chunked, head, RawConnection } from '../helpers/raw-connection.js';
import { alive, killServers, preparingChildOf, runServerToExit, startServer, startServerProcess, startupFailure, type ServerProcess } from '../helpers/server-process.js';

const DATABASE_URL = process.env.DATABASE_URL;
const pgTest = DATABASE_URL ? test : test.skip;
if (!DATABASE_URL) console.log('server-cluster.test.ts: SKIPPED, DATABASE_URL is not set (the embedded database runs one process)');

const MIGRATIONS = readdirSync(MIGRATIONS_DIR).filter((f) => /\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();
/** POST /api/auth/login: 5 per 60 s per address (limits.yaml). */
const LOGIN_LIMIT = 5;

const schema = `cluster_test_${randomBytes(4).toString('hex')}`;
// The tests count exactly: a primary slowed by a loaded machine must not make a count fail open
// (RATE_LIMIT_STORE_TIMEOUT_MS is 500 ms by default). 3 s: a stopped primary still shows soon.
const env = { DATABASE_URL, DATABASE_SCHEMA: schema, WEB_CONCURRENCY: '2', RATE_LIMITS: 'on', REDIS_URL: undefined, RATE_LIMIT_STORE_TIMEOUT_MS: '3000' };
let server: ServerProcess;

test.after(async () => {
  killServers();
  if (!DATABASE_URL) return;
  const admin = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
  for (const name of [schema, `${schema}_early`]) await admin.raw('drop schema if exists ?? cascade', [name]);
  await admin.destroy();
});

const listening = () => server.logs.filter((l) => l.msg === 'listening');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The pids of the cluster workers `primary` has forked and that run now (Linux: /proc; a worker's environment names it). */
function workersOf(primary: number): number[] {
  let children: number[];
  try {
    children = readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
  return children.filter((child) => {
    try {
      return readFileSync(`/proc/${child}/environ`, 'utf8').split('\0').some((v) => v.startsWith('NODE_UNIQUE_ID='));
    } catch {
      return false; // gone meanwhile
    }
  });
}

/**
 * Kills (SIGKILL) every worker of `primary` as soon as it runs, except those `spared` says to keep:
 * a worker killed before it listens is one that failed to start. Until stop().
 */
function workerKiller(primary: number, spared: (pid: number) => boolean) {
  const killed = new Set<number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const pid of workersOf(primary)) {
        if (killed.has(pid) || spared(pid)) continue;
        killed.add(pid);
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
      await sleep(20);
    }
  })();
  return {
    killed,
    stop: async () => {
      running = false;
      await loop;
    },
  };
}

/** Sends `send` until `done` says its answer is the one waited for; throws after `limitMs` (a guard against a hang). */
async function until<T>(send: () => Promise<T>, done: (answer: T) => boolean, what: string, limitMs = 30_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const answer = await send();
    if (done(answer)) return answer;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${limitMs} ms`);
    await sleep(100);
  }
}

/** A wrong password, each on a connection of its own: round-robin hands successive connections to successive workers. */
const failedLogin = () =>
  request(server.url).post('/api/auth/login').set('Connection', 'close').send({ email: 'nobody@example.com', password: PASSWORD });

pgTest('WEB_CONCURRENCY=2: a primary and two workers on one port; the primary migrated, once', async () => {
  server = await startServer(env);
  // Each worker logs `listening` before it tells the primary it serves; waited for all the same.
  const workers = await server.waitForLogs((l) => l.msg === 'listening', 2, 30_000);
  assert.is(listening().length, 2, JSON.stringify(server.logs));
  assert.equal(workers.map((l) => l.worker).sort(), [1, 2]);
  const pids = workers.map((l) => l.pid);
  assert.is(new Set(pids).size, 2, 'two processes');
  assert.not.ok(pids.includes(server.child.pid), 'the primary does not serve');
  for (const line of workers) {
    assert.is(line.port, server.port);
    assert.is(line.database, `postgresql (schema ${schema})`);
    assert.is(line.rateLimits, 'primary');
    assert.ok(line.rssMiB > 0, 'memory per worker is logged');
  }
  const started = server.logs.find((l) => l.msg === 'cluster started')!;
  assert.is(started.workers, 2);
  assert.is(started.pid, server.child.pid);
  assert.equal([...started.workerPids].sort(), [...pids].sort());
  assert.ok(started.rssMiB > 0, "the primary's memory is logged");
  // The primary never loads the app (a child prepared the cluster): it is far smaller than a worker.
  assert.ok(started.rssMiB < Math.min(...workers.map((l) => l.rssMiB)) / 2, `primary ${started.rssMiB} MiB, workers ${workers.map((l) => l.rssMiB)}`);

  const migrated = server.logs.filter((l) => l.msg === 'migrations applied');
  assert.is(migrated.length, 1, 'one migration run');
  assert.equal(migrated[0].migrations, MIGRATIONS);
  const admin = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
  try {
    const rows = await admin.withSchema(schema).table('knex_migrations').select('name', 'batch').orderBy('id');
    assert.equal(rows.map((r) => r.name), MIGRATIONS, 'each migration recorded once');
    assert.equal(new Set(rows.map((r) => r.batch)), new Set([1]), 'in one batch');
  } finally {
    await admin.destroy();
  }
  for (let i = 0; i < 4; i++) {
    const health = await request(server.url).get('/api/health').set('Connection', 'close');
    assert.is(health.status, 200, JSON.stringify(health.body));
  }
});

pgTest('in a worker, a refused body still being sent: the whole answer with Connection: close, then the connection ends', async () => {
  // Read only once the last byte is written: a worker that closed at once with the body unread
  // would reset the connection and throw the answer away before it was read.
  const connection = new RawConnection(server.port);
  try {
    connection.socket.pause();
    const body = chunked(...Array.from({ length: 64 }, () => Buffer.alloc(65536, 'x')));
    await connection.write(Buffer.concat([head('POST', '/api/tags', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }), body]));
    connection.socket.resume();
    const answer = await connection.response();
    assert.is(answer.status, 401, JSON.stringify(answer.body));
    assert.equal(answer.body, { statusCode: 401, message: 'Unauthorized', error: 'Unauthorized' });
    assert.match(answer.headers.connection ?? '', /close/i);
    await connection.end();
    assert.is(connection.leftover, 0);
  } finally {
    connection.close();
  }
});

pgTest('a limit counts a caller once across the workers: refused with 429 right after it, Remaining counting down', async () => {
  for (let i = 1; i <= LOGIN_LIMIT; i++) {
    const res = await failedLogin();
    assert.is(res.status, 401, `attempt ${i}: ${JSON.stringify(res.body)}`);
    assert.is(res.headers['x-ratelimit-limit'], String(LOGIN_LIMIT));
    assert.is(res.headers['x-ratelimit-remaining'], String(LOGIN_LIMIT - i), `attempt ${i}`);
    assert.ok(Number(res.headers['x-ratelimit-reset']) >= Date.now() / 1000, 'reset: Unix seconds, not in the past');
  }
  for (let i = 0; i < 2; i++) {
    const refused = await failedLogin();
    assert.is(refused.status, 429, JSON.stringify(refused.body));
    assert.equal(refused.body, { statusCode: 429, message: refused.body.message, error: 'Too Many Requests' });
    assert.is(refused.headers['x-ratelimit-remaining'], '0');
    assert.ok(Number(refused.headers['retry-after']) > 0);
  }
});

pgTest('a worker killed with SIGKILL is replaced; requests keep being answered, and the counts survive it', async () => {
  const [victim, survivor] = listening().map((l) => l.pid);
  process.kill(victim, 'SIGKILL');
  const died = await server.waitForLog((l) => l.msg === 'a worker died: replacing it');
  assert.is(died.pid, victim);
  assert.is(died.signal, 'SIGKILL');
  // The other worker answers meanwhile.
  assert.is((await request(server.url).get('/api/health').set('Connection', 'close')).status, 200);
  const replacement = await server.waitForLog((l) => l.msg === 'listening' && l.pid !== victim && l.pid !== survivor);
  assert.not.ok(alive(victim));
  for (let i = 0; i < 4; i++) assert.is((await request(server.url).get('/api/health').set('Connection', 'close')).status, 200);
  assert.ok(alive(replacement.pid));
  // The counts are the primary's: still refused, on both workers.
  for (let i = 0; i < 2; i++) assert.is((await failedLogin()).status, 429);
});

pgTest('a primary that does not answer is a store outage: requests go on uncounted, logged once, counted again when it answers', async () => {
  // One connection kept open: its requests reach a worker without the (stopped) primary handing it over.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const login = () => request(server.url).post('/api/auth/login').agent(agent).send({ email: 'nobody@example.com', password: PASSWORD });
  // Without a token: the anonymous tier (100 a minute, a lease of one request) asks the primary every time.
  const list = () => request(server.url).get('/api/employee').agent(agent);
  try {
    assert.is((await login()).status, 429, 'used up (previous tests)');
    assert.ok((await list()).headers['x-ratelimit-remaining'], 'counted');
    process.kill(server.child.pid!, 'SIGSTOP');
    let uncounted, stillRefused;
    try {
      // A window the worker knows is used up stays refused: no need to ask.
      stillRefused = await login();
      uncounted = await list();
    } finally {
      process.kill(server.child.pid!, 'SIGCONT');
    }
    assert.is(uncounted.status, 401, 'let through uncounted: the missing token is what answers');
    assert.is(uncounted.headers['x-ratelimit-remaining'], undefined);
    assert.is(stillRefused.status, 429);
    const down = await server.waitForLog((l) => l.msg === 'rate limits: the cluster primary process does not answer; requests are let through uncounted until it does');
    assert.is(down.level, 'warn');
    // Counting pauses 2 s after a failure (as with Redis), then resumes: the requests until then
    // (and any whose primary was slow again) go on uncounted.
    const counted = await until(list, (res) => res.headers['x-ratelimit-remaining'] !== undefined, 'counted again');
    assert.is(counted.status, 401);
    await server.waitForLog((l) => l.msg === 'rate limits: the cluster primary process answers again; requests are counted', 30_000);
    assert.is(server.logs.filter((l) => /the cluster primary process does not answer/.test(l.msg)).length, 1, 'logged once');
  } finally {
    agent.destroy();
  }
});

pgTest('SIGTERM: every worker stops gracefully, then the primary, with exit code 0', async () => {
  const pids = listening().map((l) => l.pid).filter(alive);
  assert.is(pids.length, 2);
  assert.is(await server.stop(), 0, server.stderr());
  assert.ok(server.logs.some((l) => l.msg === 'shutting down' && l.pid === server.child.pid && l.signal === 'SIGTERM'));
  for (const pid of pids) {
    assert.ok(server.logs.some((l) => l.msg === 'shutting down' && l.pid === pid), `worker ${pid} stopped gracefully`);
    assert.not.ok(alive(pid), `worker ${pid} is gone`);
  }
});

pgTest('a busy caller is counted in leases of requests, never beyond its limit, whichever worker answers', async () => {
  // Limits × 10: the anonymous tier allows 1,000 a minute, a lease at most 10 (a hundredth).
  // 80 requests at once, each waiting for up to two answers of the primary: 10 s before one fails open.
  const scaled = await startServer({ ...env, RATE_LIMIT_SCALE: '10', RATE_LIMIT_STORE_TIMEOUT_MS: '10000' });
  const TIER = 1000;
  const agents = [0, 1].map(() => new Agent({ keepAlive: true, maxSockets: 1 }));
  try {
    // A small limit is counted request by request, even for many requests at once on both
    // workers: login allows 50 a minute here (a lease of one), and 80 at once get exactly 50 through.
    const LOGIN = 50;
    const logins = await Promise.all(
      Array.from({ length: 80 }, () => request(scaled.url).post('/api/auth/login').set('Connection', 'close').send({ email: 'nobody@example.com', password: PASSWORD })),
    );
    assert.is(logins.filter((r) => r.status === 401).length, LOGIN, JSON.stringify(logins.map((r) => r.status)));
    assert.is(logins.filter((r) => r.status === 429).length, 80 - LOGIN);
    // Those 80 requests counted against the anonymous tier too.
    const tierLeft = TIER - 80;
    // One connection each: round-robin hands them to the two workers.
    const remaining = [[], []] as number[][];
    let admitted = 0;
    let refused = 0;
    for (let i = 0; i < TIER + 100; i++) {
      const side = i % 2;
      const res = await request(scaled.url).get('/api/employee').agent(agents[side]);
      if (res.status === 401) {
        admitted += 1;
        remaining[side].push(Number(res.headers['x-ratelimit-remaining']));
      } else {
        assert.is(res.status, 429, JSON.stringify(res.body));
        assert.is(res.headers['x-ratelimit-remaining'], '0');
        refused += 1;
      }
    }
    assert.ok(admitted <= tierLeft, `never beyond the limit: ${admitted} let through`);
    // What the other worker holds unused may be lost to the caller: at most one lease.
    assert.ok(admitted >= tierLeft - 10, `at most one lease (10) lost: ${admitted} let through`);
    assert.is(admitted + refused, TIER + 100);
    for (const seen of remaining) {
      assert.ok(seen.length > tierLeft / 2 - 20, 'both connections were answered');
      assert.ok(seen.every((left, i) => i === 0 || left < seen[i - 1]), 'Remaining only goes down on each connection');
      // The last figure is what was left beyond the leases when this connection's last lease came.
      assert.ok(seen[0] >= tierLeft - 12 && seen[seen.length - 1] <= 30, `from ${seen[0]} to ${seen[seen.length - 1]}`);
    }
  } finally {
    for (const agent of agents) agent.destroy();
    await scaled.stop();
  }
});

pgTest('windows shorter than an answer of the primary: every request is answered and counted', async () => {
  // 60 s windows scaled to 0.6 ms: a grant always arrives after its window ended.
  const short = await startServer({ ...env, RATE_LIMIT_WINDOW_SCALE: '0.00001' });
  const agent = new Agent({ keepAlive: true, maxSockets: 4 });
  try {
    // A request that kept asking would never be answered: the timeout is the guard against that.
    const answers = await Promise.all(Array.from({ length: 40 }, () => request(short.url).get('/api/employee').agent(agent).timeout(60_000)));
    for (const res of answers) {
      assert.is(res.status, 401, JSON.stringify(res.body));
      assert.ok(res.headers['x-ratelimit-limit'], 'counted');
    }
  } finally {
    agent.destroy();
    await short.stop();
  }
});

pgTest('SIGTERM while the cluster is being prepared: the preparation stops, no worker starts, exit code 0', async () => {
  const preparing = await startServerProcess({ ...env, DATABASE_SCHEMA: `${schema}_early` });
  const child = await preparingChildOf(preparing.pid!);
  assert.ok(child, 'the preparing child was seen');
  process.kill(preparing.pid!, 'SIGTERM');
  const exit = await preparing.exited;
  assert.is(exit.code, 0, exit.stderr);
  assert.not.match(exit.stdout, /"listening"/);
  assert.match(exit.stdout, /"shutting down"/);
  assert.not.ok(alive(child!), 'the preparing child is gone');
});

pgTest('no worker can start (busy port): the cluster stops with exit code 1 and the message, one fatal log line', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    const exit = await runServerToExit({ ...env, PORT: String(port) });
    assert.is(exit.code, 1, exit.stderr);
    assert.is(startupFailure(exit).msg, `Port ${port} on 127.0.0.1 is already in use: stop what uses it or set PORT to another port.`);
    assert.not.match(exit.stdout, /"cluster started"/);
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  }
});

// A worker that dies before it listens, again and again (killed here the moment it runs), while
// the other serves: its slot is retried with a back-off that doubles (1, 2, 4, 8 s, … at most
// 30 s) and the cluster keeps serving, past the five failures that used to stop it. Once the
// serving worker dies too and its replacement cannot start either, no worker can start: exit 1.
pgTest('a worker failing to start over and over is retried with back-off while another serves; the cluster gives up only when none can start', async () => {
  let primary = 0;
  let spared: number | undefined;
  // The first worker seen is left alone; every other is killed the moment it runs.
  let spare = (pid: number) => (spared ??= pid) === pid;
  let killer: ReturnType<typeof workerKiller> | undefined;
  const cluster = await startServer(env, undefined, (pid) => {
    primary = pid;
    killer = workerKiller(pid, (worker) => spare(worker));
  });
  try {
    const isFailure = (l: Record<string, any>) => l.msg?.startsWith('a worker failed to start: another is forked in ');
    const failures = await cluster.waitForLogs(isFailure, 5, 120_000);
    // Each wait twice the one before: the slot's back-off.
    const waits = failures.map((l) => l.inMs);
    assert.equal(waits, [1000, 2000, 4000, 8000, 16000], JSON.stringify(failures));
    assert.ok(failures.every((l) => l.level === 'warn' && l.pid !== spared));
    // Still serving, through the worker that started.
    assert.ok(alive(primary) && alive(spared!), 'the primary and the serving worker run');
    for (let i = 0; i < 3; i++) assert.is((await request(cluster.url).get('/api/health').set('Connection', 'close')).status, 200);
    assert.not.ok(cluster.logs.some((l) => l.level === 'fatal'), 'not given up');

    // Now the serving worker dies, and nothing new may start: no worker can start, the cluster gives up.
    spare = () => false;
    const exit = await cluster.exited;
    assert.is(exit, 1);
    const fatal = cluster.logs.filter((l) => l.level === 'fatal');
    assert.is(fatal.length, 1, JSON.stringify(cluster.logs));
    assert.match(fatal[0].msg, /^A worker \(pid \d+\) stopped before listening \(exit code null, signal SIGKILL\)\.$/);
    assert.is(cluster.stderr().trim(), fatal[0].msg);
    assert.ok(cluster.logs.some((l) => l.msg === 'a worker died: replacing it' && l.pid === spared), 'the serving worker was replaced');
  } finally {
    await killer?.stop();
    if (alive(primary)) process.kill(primary, 'SIGKILL');
  }
});

test.run();
