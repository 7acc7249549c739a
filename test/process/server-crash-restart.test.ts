// A fast restart after a crash on the embedded database: the data folder's lock of a process that
// was killed (kill -9) is taken over at once by the next start, with a line in the log, instead of
// refusing it until the lock goes stale. A second live process is still refused, and so is the
// knex CLI; the CLI takes over a dead process's lock too. The lock's own rules (another host, a
// live pid, a lock being made) are checked on lockDataDir directly.
// The server processes run on the embedded database whatever the suite's database is (the lock is
// the embedded database's), so this runs in both runs.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DataDirLockedError, lockDataDir } from '../../engine/db/data-dir-lock.js';
import { migratedDataFolder } from '../helpers/migrated-folder.js';
import { killServers, runNpmScript, runServerToExit, startServer, startupFailure, type ServerProcess } from '../helpers/server-process.js';

const cwd = mkdtempSync(path.join(tmpdir(), 'crash-restart-'));
const dataDir = path.join(cwd, 'data');
const lockPath = path.join(dataDir, 'engine.lock');
// Relaxed: the lock is what is tested here, not the data's safety.
const env = { DATA_DIR: dataDir, EMBEDDED_DURABILITY: 'relaxed' };

test.before(async () => {
  await migratedDataFolder(dataDir);
});
test.after(() => {
  killServers();
  rmSync(cwd, { recursive: true, force: true });
});

const ownerOf = (dir: string) => JSON.parse(readFileSync(path.join(dir, 'engine.lock', 'owner.json'), 'utf8'));
const owner = () => ownerOf(dataDir);
// Taken over at once as its process is gone, or, on a machine so busy that the restart came more
// than 10 s after the kill, as stale: either way the start is not refused.
const isTakeOver = (line: Record<string, any>) => line.msg === 'data folder lock taken over';

async function killHard(server: ServerProcess) {
  server.child.kill('SIGKILL');
  assert.is(await server.exited, null, 'killed by a signal');
}

test('after kill -9 the next start serves at once, taking the dead process\'s lock over with a log line', async () => {
  const first = await startServer(env);
  assert.is(owner().pid, first.child.pid, 'the lock names its owner');
  assert.is(owner().host, hostname());
  await killHard(first);
  assert.ok(existsSync(lockPath), 'a killed process leaves its lock behind');

  // Refused before (the lock looked held for ~10 s); now it starts: startServer waits for the
  // listening line and fails if the process exits first.
  const second = await startServer(env);
  try {
    const line = second.logs.find(isTakeOver);
    assert.ok(line, JSON.stringify(second.logs));
    assert.is(line!.previousPid, first.child.pid);
    assert.ok(['its process is gone', 'not refreshed for 10 seconds'].includes(line!.reason), line!.reason);
    assert.is(line!.dataDir, dataDir);
    assert.is(owner().pid, second.child.pid);
    assert.is((await request(second.url).get('/api/health')).status, 200);

    // A second live process is still refused, with the same clear message, and the knex CLI too.
    const third = await runServerToExit(env);
    assert.is(third.code, 1, third.stderr);
    assert.ok(third.stderr.startsWith(`The data folder ${dataDir} is in use by another process of this service.`), third.stderr);
    assert.not.match(third.stdout, /"msg":"data folder lock taken over"/);
    const cli = await runNpmScript('knex', ['migrate:status'], env);
    assert.is.not(cli.code, 0, cli.stdout);
    assert.match(cli.stderr, /is in use by another process of this service/);
    assert.is(owner().pid, second.child.pid, 'the live owner keeps its lock');
    assert.is((await request(second.url).get('/api/health')).status, 200);
  } finally {
    await killHard(second);
  }

  // The knex CLI takes a dead process's lock over as well, and leaves none behind when it ends.
  const cli = await runNpmScript('db:migrate', [], env);
  assert.is(cli.code, 0, cli.stderr);
  assert.match(cli.stdout, /"msg":"data folder lock taken over"/);
  assert.not.ok(existsSync(lockPath), 'the CLI released the lock');

  const fourth = await startServer(env);
  assert.not.ok(fourth.logs.some(isTakeOver), 'nothing to take over after a clean exit');
  assert.is(await fourth.stop(), 0);
  assert.not.ok(existsSync(lockPath), 'released on SIGTERM');
});

/** A lock folder as another process would have left it, refreshed just now. */
function plantLock(dir: string, note: Record<string, unknown> | undefined) {
  mkdirSync(path.join(dir, 'engine.lock'), { recursive: true });
  if (note) writeFileSync(path.join(dir, 'engine.lock', 'owner.json'), JSON.stringify(note));
}

let pidNamespace = '';
try {
  pidNamespace = readlinkSync('/proc/self/ns/pid');
} catch {
  // not Linux
}

async function refused(locking: Promise<unknown>, what: string) {
  const err = await locking.then(
    () => undefined,
    (e) => e,
  );
  assert.instance(err, DataDirLockedError, `${what}: refused`);
}

/** The pid of a process that has ended (and been reaped). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

test('lockDataDir: a dead owner on this host is taken over; a live one, another host\'s or an unnamed one is not', async () => {
  const dir = path.join(cwd, 'unit');
  const self = { host: hostname(), pidNamespace };

  plantLock(dir, { pid: await deadPid(), ...self });
  const release = await lockDataDir(dir);
  assert.is(ownerOf(dir).pid, process.pid);
  // This process holds it now: asking again is refused, not taken over from ourselves.
  await refused(lockDataDir(dir), 'held by this process');
  await release();
  assert.not.ok(existsSync(path.join(dir, 'engine.lock')), 'released');

  // A lock is made whole, noted, then renamed into place: one whose maker was killed before the
  // rename is litter (never a lock without a note), swept by the next taker if its maker is gone.
  const unfinished = path.join(dir, 'engine.lock.0123456789ab.new');
  plantLock(dir, { pid: await deadPid(), ...self });
  renameSync(path.join(dir, 'engine.lock'), unfinished);
  const live = path.join(dir, 'engine.lock.ba9876543210.new');
  plantLock(dir, { pid: process.ppid, ...self });
  renameSync(path.join(dir, 'engine.lock'), live);
  const again = await lockDataDir(dir);
  assert.is(ownerOf(dir).pid, process.pid);
  assert.equal(readdirSync(dir).filter((n) => n.endsWith('.new')), ['engine.lock.ba9876543210.new'], 'the dead maker\'s swept, the live one\'s left');
  await again();
  rmSync(live, { recursive: true, force: true });

  for (const [what, note] of [
    ['a live process (our parent)', { pid: process.ppid, ...self }],
    ['another host', { pid: await deadPid(), host: `not-${hostname()}`, pidNamespace }],
    ['another pid namespace (a container)', { pid: await deadPid(), host: hostname(), pidNamespace: 'pid:[1]' }],
    ['no owner note (a lock being made)', undefined],
  ] as const) {
    rmSync(dir, { recursive: true, force: true });
    plantLock(dir, note);
    await refused(lockDataDir(dir), what);
    assert.ok(existsSync(path.join(dir, 'engine.lock')), `${what}: the lock is left alone`);
  }
});

test('a data folder PGlite cannot start on stops the start with one sentence saying what to do, and leaves no lock', async () => {
  // What a first start stopped while PostgreSQL wrote its files may leave: PG_VERSION, and not the rest.
  const damaged = path.join(cwd, 'damaged');
  mkdirSync(damaged);
  writeFileSync(path.join(damaged, 'PG_VERSION'), '17\n');
  for (let attempt = 0; attempt < 2; attempt++) {
    const fatal = startupFailure(await runServerToExit({ DATA_DIR: damaged }));
    assert.match(fatal.msg, `The embedded database in ${damaged} cannot be opened (`);
    assert.match(fatal.msg, 'delete the folder and start again; otherwise restore it from a copy.');
    // The second attempt meets the same folder, not a lock left by the first.
    assert.not.ok(existsSync(path.join(damaged, 'engine.lock')), 'the lock is released');
  }
});

test.run();
