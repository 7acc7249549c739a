// `npm start` runs the compiled service (dist/) through its launcher, scripts/start.js, which
// refuses a dist/ that is missing or older than the sources with one sentence saying what to do.
// The refusals are shown on a copy of the launcher in a scratch project, so the real dist/ (that
// other suites may be running) is never touched.
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { distProblem } from '../../scripts/dist.js';
import { serverEnv } from '../helpers/server-process.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const scratch = mkdtempSync(path.join(tmpdir(), 'server-build-test-'));
let npmStart: ReturnType<typeof spawn> | undefined;

test.after(() => {
  // npm runs the launcher in a child of its own: the whole group goes.
  if (npmStart?.pid && npmStart.exitCode === null) process.kill(-npmStart.pid, 'SIGKILL');
  rmSync(scratch, { recursive: true, force: true });
});

test('npm start runs the compiled server, which answers /api/health', async () => {
  assert.is(distProblem(), undefined, 'test/run.ts builds dist/ before this suite');
  const env = serverEnv({ HOME: process.env.HOME, DATA_DIR: path.join(scratch, 'data') });
  npmStart = spawn('npm', ['start', '--silent'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  npmStart.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const listening = await new Promise<Record<string, any>>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`npm start did not listen within 120 s\n${stdout}\n${stderr}`)), 120_000);
    npmStart!.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      for (const line of stdout.split('\n')) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line);
        if (entry.msg === 'listening') {
          clearTimeout(guard);
          resolve(entry);
        }
      }
    });
    npmStart!.once('exit', (code) => reject(new Error(`npm start exited with code ${code}\n${stdout}\n${stderr}`)));
  });
  const res = await fetch(`http://127.0.0.1:${listening.port}/api/health`);
  assert.is(res.status, 200);
  const exited = new Promise((resolve) => npmStart!.once('exit', resolve));
  process.kill(-npmStart.pid!, 'SIGTERM');
  await exited;
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

test.run();
