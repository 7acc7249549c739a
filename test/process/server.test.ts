// The real server process (`npm start` runs app/start.ts): start-up on the embedded database
// under ./data (one process, whatever WEB_CONCURRENCY says), the data-folder lock, graceful
// SIGTERM, data surviving a restart, PostgreSQL when DATABASE_URL is set, and start-up failures
// that name what to fix: one JSON log line at level fatal (the last on stdout, no stack) and its
// message on stderr, exit code 1. The cluster of processes on PostgreSQL: server-cluster.test.ts.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import knex from 'knex';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { MIGRATIONS_DIR } from '../../app/paths.js';
import { PASSWORD, uniqueEmail } from '../helpers/accounts.js';
import {
  alive,
  dropSchema,
  killServers,
  preparingChildOf,
  runNpmScript,
  runServerToExit,
  startServer,
  startServerProcess,
  startupFailure,
  type ServerProcess,
} from '../helpers/server-process.js';
import { mountSmallDisk } from '../helpers/small-disk.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';

const WIDGET_DIR = fileURLToPath(new URL('../fixtures/widget/', import.meta.url));
const DATABASE_URL = process.env.DATABASE_URL;
/** Every migration the server should apply to a new database: the project's, then the widget's. */
const MIGRATIONS = [...readdirSync(MIGRATIONS_DIR), '20990101000000_widget.ts'].filter((f) => /\.ts$/.test(f)).map((f) => f.replace(/\.ts$/, '')).sort();

const cwd = mkdtempSync(path.join(tmpdir(), 'server-test-'));
const dataDir = path.join(cwd, 'data');
const email = uniqueEmail('restart');
let first: ServerProcess | undefined;

test.after(async () => {
  killServers();
  if (tightDisk) tightDisk.unmount();
  rmSync(cwd, { recursive: true, force: true });
});

/** Registers a user and a tenant through the running server; the token of its login. */
async function signUp(server: ServerProcess, address: string): Promise<string> {
  const http = request(server.url);
  const reg = await http.post('/api/auth/register').send({ user: { firstName: 'Rae', lastName: 'Start', email: address }, password: PASSWORD, confirmPassword: PASSWORD });
  assert.is(reg.status, 201, JSON.stringify(reg.body));
  return login(server, address);
}

async function login(server: ServerProcess, address: string): Promise<string> {
  const res = await request(server.url).post('/api/auth/login').send({ email: address, password: PASSWORD });
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body.token;
}

test('embedded: starts in ./data of its working directory (DATA_DIR unset), migrated, answering /api/health', async () => {
  // Also serves an extra folder of definitions: its migration runs on start like the project's.
  first = await startServer({ DATA_DIR: undefined, EXTRA_RESOURCES_DIR: WIDGET_DIR }, cwd);
  const listening = first.logs.find((l) => l.msg === 'listening')!;
  assert.is(listening.database, `embedded (${dataDir})`);
  assert.ok(listening.port > 0);
  const migrated = first.logs.find((l) => l.msg === 'migrations applied');
  assert.equal(migrated?.migrations, MIGRATIONS, JSON.stringify(first.logs));
  assert.ok(existsSync(path.join(dataDir, 'engine.lock')), 'the data folder is locked');
  assert.ok(existsSync(path.join(dataDir, 'PG_VERSION')), 'the database lives in ./data');
  // A child made the new database (PostgreSQL's initdb) and migrated it, then ended: the process
  // that serves opened it afterwards, as a later start does, and never held initdb's memory.
  assert.is(listening.pid, first.child.pid, 'the process started serves');
  const created = first.logs.find((l) => l.msg === 'embedded database created');
  assert.ok(created, JSON.stringify(first.logs));
  assert.is(created!.dataDir, dataDir);
  assert.is.not(created!.pid, listening.pid, 'initdb ran in another process than the one that serves');
  assert.is(migrated!.pid, created!.pid, 'the same child migrated');
  assert.is(first.logs.find((l) => l.msg === 'database prepared')?.pid, created!.pid);
  assert.not.ok(alive(created!.pid), 'the preparing child has ended');

  const health = await request(first.url).get('/api/health');
  assert.is(health.status, 200, JSON.stringify(health.body));
  assert.is(health.body.status, 'ok');

  const token = await signUp(first, email);
  const org = await request(first.url).post('/api/organization').set('Authorization', `Bearer ${token}`).send({ name: 'Kept', currency: 'EUR' });
  assert.is(org.status, 201, JSON.stringify(org.body));
  const widget = await request(first.url).post('/api/widget').set('Authorization', `Bearer ${token}`).send({ label: 'Survivor' });
  assert.is(widget.status, 201, JSON.stringify(widget.body));
});

test('embedded: a second process on the same data folder stops with a clear message; the first keeps serving', async () => {
  assert.ok(first, 'the first server runs');
  const second = await runServerToExit({ DATA_DIR: undefined, EXTRA_RESOURCES_DIR: WIDGET_DIR }, cwd);
  assert.is(second.code, 1, second.stderr);
  startupFailure(second);
  assert.ok(second.stderr.startsWith(`The data folder ${dataDir} is in use by another process of this service.`), second.stderr);
  assert.match(second.stderr, /set DATA_DIR to another folder/);
  assert.not.match(second.stderr, /\n\s+at /, 'a message, not a stack trace');
  assert.not.match(second.stdout, /"listening"/);

  // The knex CLI (npm run db:migrate) takes the same lock.
  const cli = await runNpmScript('db:migrate', [], { DATA_DIR: dataDir, EXTRA_RESOURCES_DIR: WIDGET_DIR });
  assert.is.not(cli.code, 0, cli.stdout);
  assert.match(cli.stderr, /The data folder .* is in use by another process of this service/);

  assert.is((await request(first!.url).get('/api/health')).status, 200);
  await login(first!, email);
  assert.ok(existsSync(path.join(dataDir, 'engine.lock')), "the second process left the first one's lock alone");
});

test('embedded: SIGTERM stops the server cleanly (exit 0, lock released); the data survives a restart; generated secrets are announced', async () => {
  const code = await first!.stop();
  assert.is(code, 0, first!.stderr());
  assert.ok(first!.logs.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'));
  assert.not.ok(existsSync(path.join(dataDir, 'engine.lock')), 'the lock is released');

  // This time without JWT secrets (and NODE_ENV): it makes its own, keeps them in the data folder
  // (test/process/server-secrets.test.ts) and says so, once. And asked
  // for two processes, which the embedded database cannot have: one serves, saying so once.
  const again = await startServer({ DATA_DIR: undefined, EXTRA_RESOURCES_DIR: WIDGET_DIR, JWT_SECRET: undefined, JWT_REFRESH_SECRET: undefined, NODE_ENV: undefined, WEB_CONCURRENCY: '2' }, cwd);
  try {
    assert.not.ok(again.logs.some((l) => l.msg === 'migrations applied'), 'nothing left to migrate');
    assert.not.ok(again.logs.some((l) => l.msg === 'embedded database created' || l.msg === 'database prepared'), 'a later start opens the folder itself');
    assert.is(again.logs.filter((l) => /^JWT_SECRET \/ JWT_REFRESH_SECRET not set: tokens are signed with secrets generated now and kept in the data folder/.test(l.msg)).length, 1, JSON.stringify(again.logs));
    assert.is(again.logs.filter((l) => l.level === 'warn' && /^WEB_CONCURRENCY is ignored with the embedded database/.test(l.msg)).length, 1, JSON.stringify(again.logs));
    const listening = again.logs.filter((l) => l.msg === 'listening');
    assert.is(listening.length, 1);
    assert.is(listening[0].pid, again.child.pid, 'the process started serves itself: no workers');
    assert.is(listening[0].worker, undefined);
    assert.ok(listening[0].rssMiB > 0, 'its memory is logged');
    const token = await login(again, email);
    const widgets = await request(again.url).get('/api/widget').set('Authorization', `Bearer ${token}`);
    assert.is(widgets.status, 200, JSON.stringify(widgets.body));
    assert.equal(widgets.body.items.map((w: { label: string }) => w.label), ['Survivor']);
  } finally {
    assert.is(await again.stop(), 0);
  }
  // The knex CLI sees the same database and migration folders as the server.
  const status = await runNpmScript('knex', ['migrate:status'], { DATA_DIR: dataDir, EXTRA_RESOURCES_DIR: WIDGET_DIR });
  assert.is(status.code, 0, status.stderr);
  assert.ok(status.stdout.includes(`Found ${MIGRATIONS.length} Completed Migration file/files.\n${MIGRATIONS.join('\n')}\nNo Pending Migration files Found.`), status.stdout);
});

test('embedded: a busy port stops start-up with a message naming PORT, and frees the data folder', async () => {
  const blocker = createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as { port: number }).port;
  try {
    const exit = await runServerToExit({ DATA_DIR: dataDir, EXTRA_RESOURCES_DIR: WIDGET_DIR, PORT: String(port) });
    assert.is(exit.code, 1, exit.stderr);
    assert.is(startupFailure(exit).msg, `Port ${port} on 127.0.0.1 is already in use: stop what uses it or set PORT to another port.`);
    assert.not.ok(existsSync(path.join(dataDir, 'engine.lock')), 'the lock is released on a failed start');
  } finally {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  }
});

test('embedded: SIGTERM while a child prepares a new data folder stops it, then the process (exit 0); the next start prepares the folder again', async () => {
  const folder = path.join(cwd, 'interrupted');
  const preparing = startServerProcess({ DATA_DIR: folder });
  const child = await preparingChildOf(preparing.pid);
  assert.ok(child, 'the preparing child was seen');
  process.kill(preparing.pid, 'SIGTERM');
  const exit = await preparing.exited;
  assert.is(exit.code, 0, exit.stderr);
  const lines = exit.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  assert.not.ok(lines.some((l) => l.msg === 'listening'), exit.stdout);
  assert.ok(lines.some((l) => l.msg === 'shutting down' && l.while === 'preparing the embedded database' && l.pid === preparing.pid), exit.stdout);
  assert.not.ok(alive(child!), 'the preparing child is gone');

  const server = await startServer({ DATA_DIR: folder });
  try {
    assert.ok(server.logs.some((l) => l.msg === 'embedded database created'), JSON.stringify(server.logs));
    await signUp(server, uniqueEmail('interrupted'));
  } finally {
    assert.is(await server.stop(), 0);
  }
});

test('embedded: a second start while a child prepares a new data folder stops with the locked-folder message, once; the first serves', async () => {
  const folder = path.join(cwd, 'contended');
  let parent = 0;
  const starting = startServer({ DATA_DIR: folder }, undefined, (pid) => (parent = pid));
  const child = await preparingChildOf(parent);
  assert.ok(child, 'the preparing child was seen');
  const ownerNote = path.join(folder, 'engine.lock', 'owner.json');
  const lockedBy = () => {
    try {
      return JSON.parse(readFileSync(ownerNote, 'utf8')).pid as number;
    } catch {
      return undefined; // not locked yet, or the note being written
    }
  };
  await waitFor(() => lockedBy() !== undefined, 'the data folder is locked');
  assert.is(lockedBy(), child, 'the preparing child holds the lock');

  const second = await runServerToExit({ DATA_DIR: folder });
  assert.ok(startupFailure(second).msg.startsWith(`The data folder ${folder} is in use by another process of this service.`), second.stderr);

  const server = await starting;
  try {
    assert.is(lockedBy(), server.child.pid, 'the serving process holds the lock once the child is done');
    await signUp(server, uniqueEmail('contended'));
  } finally {
    assert.is(await server.stop(), 0);
  }
});

// A disk with room for the new database but, once it is made, less than EMBEDDED_MIN_FREE_MB (64
// MiB) free: the child's migrations are refused (a tmpfs of its own, root on Linux; skipped elsewhere).
const smallDisk = DATABASE_URL ? undefined : mountSmallDisk(100);
if (smallDisk && 'unavailable' in smallDisk) console.log(`server.test.ts: skipping a test: ${smallDisk.unavailable}`);
const tightDisk = smallDisk && !('unavailable' in smallDisk) ? smallDisk : undefined;
(tightDisk ? test : test.skip)('embedded: a first start that leaves less than EMBEDDED_MIN_FREE_MB free stops with that message, once, exit code 1', async () => {
  const folder = path.join(tightDisk!.dir, 'data');
  const exit = await runServerToExit({ DATA_DIR: folder });
  const fatal = startupFailure(exit);
  assert.match(fatal.msg, /^The disk of the data folder .* has \d+ MiB free, less than EMBEDDED_MIN_FREE_MB \(64\): writes are refused until there is more room/);
  assert.ok(exit.stdout.includes('"msg":"embedded database created"'), 'the child made the database first');
  assert.not.match(exit.stdout, /"listening"/);
});

test('a database migrated with a folder that is no longer configured stops start-up, saying which', async () => {
  const exit = await runServerToExit({ DATA_DIR: dataDir });
  assert.is(exit.code, 1, exit.stderr);
  assert.is(
    startupFailure(exit).msg,
    'The database has migrations applied that no migration folder provides: 20990101000000_widget. ' +
      'Configure again the folder they came from (resources/migrations/, or the migrations/ of an EXTRA_RESOURCES_DIR folder).',
  );
});

test('bad configuration stops start-up with a message naming the variable', async () => {
  const cases: Array<[Record<string, string | undefined>, string]> = [
    [{ PORT: 'abc' }, 'PORT must be a whole number from 0 to 65535, got "abc"'],
    [{ NODE_ENV: 'production', JWT_SECRET: undefined, JWT_REFRESH_SECRET: undefined }, 'JWT_SECRET and JWT_REFRESH_SECRET must be set when NODE_ENV=production'],
    [{ DATABASE_URL: 'mysql://root@localhost/db' }, 'DATABASE_URL must use postgres:// or postgresql://, got "mysql:"'],
    [{ WEB_CONCURRENCY: '0' }, 'WEB_CONCURRENCY must be a whole number from 1 to 1024, got "0"'],
    [{ WEB_CONCURRENCY: 'all', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' }, 'WEB_CONCURRENCY must be a whole number from 1 to 1024, got "all"'],
    [{ EXTRA_RESOURCES_DIR: path.join(cwd, 'nowhere') }, `EXTRA_RESOURCES_DIR: "${path.join(cwd, 'nowhere')}" is not a folder`],
    [{ DATABASE_URL: 'postgres://postgres:secret@127.0.0.1:1/x' }, 'Cannot use the PostgreSQL database of DATABASE_URL (postgres://postgres:***@127.0.0.1:1/x): nothing accepts connections there.'],
  ];
  for (const [env, message] of cases) {
    const exit = await runServerToExit({ DATA_DIR: path.join(cwd, 'unused'), ...env });
    assert.is(exit.code, 1, `${JSON.stringify(env)}: ${exit.stderr}`);
    assert.is(startupFailure(exit).msg, message);
    assert.not.match(exit.stdout, /"listening"/);
  }
  assert.not.ok(existsSync(path.join(cwd, 'unused', 'PG_VERSION')), 'no database was made on the way');
});

// Only in the PostgreSQL run (npm test with DATABASE_URL, as .ci/run does).
if (DATABASE_URL) test('with DATABASE_URL: PostgreSQL, in the schema DATABASE_SCHEMA names (made if missing); data survives a restart', async () => {
  const schema = `server_test_${randomBytes(4).toString('hex')}`;
  const admin = knex({ client: 'pg', connection: DATABASE_URL, pool: { min: 0, max: 1 } });
  const env = { DATABASE_URL, DATABASE_SCHEMA: schema, DATA_DIR: path.join(cwd, 'not-used-with-postgres') };
  try {
    // npm run db:migrate makes the schema and its tables; the server then has nothing to migrate.
    const cli = await runNpmScript('db:migrate', [], env);
    assert.is(cli.code, 0, cli.stderr);
    const server = await startServer(env, cwd);
    const address = uniqueEmail('pg-restart');
    try {
      assert.not.ok(server.logs.some((l) => l.msg === 'migrations applied'), JSON.stringify(server.logs));
      assert.is(server.logs.find((l) => l.msg === 'listening')!.database, `postgresql (schema ${schema})`);
      assert.is((await request(server.url).get('/api/health')).status, 200);
      await signUp(server, address);
      const rows = await admin.withSchema(schema).table('user').where({ email: address });
      assert.is(rows.length, 1, 'the user is in the configured schema');
    } finally {
      assert.is(await server.stop(), 0);
    }
    assert.not.ok(existsSync(env.DATA_DIR), 'no embedded database was made');
    const again = await startServer(env, cwd);
    try {
      await login(again, address);
    } finally {
      assert.is(await again.stop(), 0);
    }
  } finally {
    await admin.raw('drop schema if exists ?? cascade', [schema]);
    await admin.destroy();
  }
});

// A database that accepts connections and never answers (a hung server, a network dropping
// packets; staged by a TCP proxy that holds every byte) stops start-up within
// DATABASE_TIMEOUT_MS, saying so in one log line, both as a single process and as a cluster
// (whose preparing child is the first to ask). Only a network database can hang this way: the
// embedded one runs inside the process.
(DATABASE_URL ? test : test.skip)('with DATABASE_URL: a database that never answers stops start-up with one JSON log line naming it, exit code 1', async () => {
  const url = new URL(DATABASE_URL!);
  const proxy = await startTcpProxy(url.hostname, Number(url.port || 5432));
  const schema = `hang_test_${randomBytes(4).toString('hex')}`;
  try {
    proxy.stall();
    for (const processes of ['1', '2']) {
      const exit = await runServerToExit({ DATABASE_URL: proxy.url(DATABASE_URL!), DATABASE_SCHEMA: schema, DATABASE_TIMEOUT_MS: '1000', WEB_CONCURRENCY: processes });
      const fatal = startupFailure(exit);
      assert.match(fatal.msg, /^The PostgreSQL database of DATABASE_URL \(postgres:\/\/[^)]+\) did not answer within 1000 ms at start-up \(DATABASE_TIMEOUT_MS\): check that it is running and reachable\.$/, `WEB_CONCURRENCY=${processes}`);
      assert.not.match(exit.stdout, /"listening"|"cluster started"/);
    }
    assert.ok(proxy.accepted > 0, 'the server did reach the (silent) database');
  } finally {
    await proxy.close();
    await dropSchema(DATABASE_URL!, schema);
  }
});

test.run();
