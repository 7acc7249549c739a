// `npm start` runs the compiled service (dist/) through its launcher, scripts/start.js, which
// refuses a dist/ that is missing or older than the sources with one sentence saying what to do.
// npm's shell execs the launcher, so the signals a supervisor sends npm's pid reach the server.
// The refusals are shown on a copy of the launcher in a scratch project, so the real dist/ (that
// other suites may be running) is never touched.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { distProblem } from '../../scripts/dist.js';
import { migratedDataFolder } from '../helpers/migrated-folder.js';
import { killNpmStarts, npmStart } from '../helpers/npm-start.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'server-build-test-'));
test.after(() => {
  killNpmStarts();
  rmSync(scratch, { recursive: true, force: true });
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`npm start serves the compiled server; ${signal} to npm's pid stops it gracefully, exit status 0`, async () => {
    assert.is(distProblem(), undefined, 'test/run.ts builds dist/ before this suite');
    const run = npmStart(ROOT, { DATA_DIR: await migratedDataFolder(path.join(scratch, `data-${signal}`)) });
    const listening = await run.listening;
    const res = await fetch(`http://127.0.0.1:${listening.port}/api/health`);
    assert.is(res.status, 200);
    // npm's pid only, as a supervisor (Docker, systemd, a process manager) signals it.
    assert.is(await run.stop(signal), 0, run.stderr());
    const shutdown = run.logs.find((l) => l.msg === 'shutting down');
    assert.ok(shutdown, JSON.stringify(run.logs));
    assert.is(shutdown!.signal, signal);
    assert.is(shutdown!.pid, listening.pid);
    assert.ok(run.logs.some((l) => l.msg === 'stopped' && l.pid === listening.pid), 'the drain ran to its end');
    assert.not.ok(alive(listening.pid), 'no server left behind');
  });
}

test('npm start that cannot start exits with status 1, saying why', async () => {
  const run = npmStart(ROOT, { DATA_DIR: path.join(scratch, 'data-bad-port'), PORT: 'eighty' });
  assert.is(await run.stop(), 1);
  assert.match(run.stderr(), 'PORT');
});

/** A scratch project holding the launcher, one source and (optionally) a dist/ built at `builtAt`. */
function project(name: string): { dir: string; run(): ReturnType<typeof spawnSync>; build(builtAt: number, inputs?: string[]): void } {
  const dir = path.join(scratch, name);
  mkdirSync(path.join(dir, 'scripts'), { recursive: true });
  mkdirSync(path.join(dir, 'app'), { recursive: true });
  for (const file of ['start.js', 'dist.js']) copyFileSync(path.join(ROOT, 'scripts', file), path.join(dir, 'scripts', file));
  writeFileSync(path.join(dir, 'package.json'), '{ "type": "module" }\n');
  writeFileSync(path.join(dir, 'app', 'start.ts'), 'export {};\n');
  const old = Date.now() / 1000 - 60;
  for (const file of ['package.json', 'app/start.ts']) utimesSync(path.join(dir, file), old, old);
  return {
    dir,
    run: () => spawnSync(process.execPath, [path.join(dir, 'scripts', 'start.js')], { cwd: dir, encoding: 'utf8' }),
    build(builtAt, inputs = ['app/start.ts', 'package.json']) {
      mkdirSync(path.join(dir, 'dist', 'app'), { recursive: true });
      // The compiled entry says which file it was started as (the processes it forks run that).
      writeFileSync(path.join(dir, 'dist', 'app', 'start.js'), "console.log('compiled ' + process.argv[1]);\n");
      writeFileSync(path.join(dir, 'dist', 'build-stamp.json'), JSON.stringify({ startedAt: builtAt, inputs }));
    },
  };
}

const refusal = (stderr: string) => `npm start: ${stderr}`;

test('npm start refuses to run without dist/, saying to build', () => {
  const { run } = project('missing');
  const { status, stdout, stderr } = run();
  assert.is(status, 1);
  assert.is(stdout, '');
  assert.is(stderr, refusal('dist/ is missing (the sources are not compiled yet): run `npm run build`.\n'));
});

test('npm start refuses a dist/ older than a source, or built from other files, naming the file', () => {
  const p = project('stale');
  p.build(Date.now());
  const current = p.run();
  assert.is(current.status, 0, String(current.stderr));
  assert.is(current.stdout, `compiled ${path.join(p.dir, 'dist', 'app', 'start.js')}\n`);

  // A source changed since the build began.
  writeFileSync(path.join(p.dir, 'app', 'start.ts'), 'export const changed = true;\n');
  const changed = p.run();
  assert.is(changed.status, 1);
  assert.is(changed.stderr, refusal('dist/ is older than the sources (app/start.ts changed since the last build): run `npm run build`.\n'));

  // A source added, or one removed (its compiled file would still be in dist/).
  p.build(Date.now() + 1000);
  writeFileSync(path.join(p.dir, 'app', 'added.ts'), 'export {};\n');
  assert.is(p.run().stderr, refusal('dist/ is older than the sources (app/added.ts was added since the last build): run `npm run build`.\n'));
  p.build(Date.now() + 1000, ['app/added.ts', 'app/removed.ts', 'app/start.ts', 'package.json']);
  assert.is(p.run().stderr, refusal('dist/ is older than the sources (app/removed.ts was removed since the last build): run `npm run build`.\n'));

  // A build that stopped before its end (no stamp).
  rmSync(path.join(p.dir, 'dist', 'build-stamp.json'));
  assert.is(p.run().stderr, refusal('dist/ holds no complete build: run `npm run build`.\n'));
});

test('a migration written since the build is no reason to build again; a built one changed or removed is', () => {
  const p = project('migrations');
  mkdirSync(path.join(p.dir, 'resources', 'migrations'), { recursive: true });
  const built = path.join(p.dir, 'resources', 'migrations', '20260101000000_built.ts');
  writeFileSync(built, 'export async function up() {}\n');
  const old = Date.now() / 1000 - 60;
  utimesSync(built, old, old);
  // Built two seconds ago: a file system with coarse times still dates what follows after it.
  p.build(Date.now() - 2000, ['app/start.ts', 'package.json', 'resources/migrations/20260101000000_built.ts']);
  assert.is(p.run().status, 0);

  // Written by npm run db:migration after the build: the compiled service applies its source.
  writeFileSync(path.join(p.dir, 'resources', 'migrations', '29990101000000_device.ts'), 'export async function up() {}\n');
  const late = p.run();
  assert.is(late.status, 0, String(late.stderr));
  assert.is(late.stderr, '');

  writeFileSync(built, 'export async function up() { /* changed */ }\n');
  assert.is(p.run().stderr, refusal('dist/ is older than the sources (resources/migrations/20260101000000_built.ts changed since the last build): run `npm run build`.\n'));
  rmSync(built);
  assert.is(p.run().stderr, refusal('dist/ is older than the sources (resources/migrations/20260101000000_built.ts was removed since the last build): run `npm run build`.\n'));
});

test.run();
