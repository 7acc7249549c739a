// `npm test [-- <regex>]`: every test/**/*.test.ts (those whose path matches the regex, if given)
// through uvu in one child process, then a closing line "N passed, N failed" that CI reads.
//
// Why a child, and why not uvu's own CLI:
// - uvu's CLI sets FORCE_COLOR=1 (colours, and a Node warning beside NO_COLOR); output here is plain.
// - uvu's CLI stops at the first test file that fails to import, and a throwing `test.before` is
//   swallowed (its tests just "don't pass", with no message). Here both count as failures, with the error.
// - The parent prints the closing line whatever the child does: crash, exit early, or hang on an
//   open handle (the child exits by itself a while after its last test, saying so).
//
// Lanes: a run of many files goes in two child processes side by side (TEST_LANES, 2 by default;
// 1 runs everything in one). The suites that start server processes or measure time (TIMED_FILES)
// all go to the first lane, one after the other, so no two of them compete; every other file is
// handed out by the parent to whichever lane asks next (the first once its own are done), the
// slowest (FIRST_FILES) first, so the lanes end together however long each suite turns out to
// take on this machine and database. Each lane's output is printed whole when it ends, one lane
// after the other, so suites never interleave.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { distProblem } from '../scripts/dist.js';

const TEST_DIR = fileURLToPath(new URL('.', import.meta.url));
const CHILD_FLAG = '--uvu-child';
/** Tells a lane to ask the parent for more files once its own are done. */
const SHARED_FLAG = '--shared';
/** How long a finished test process may be kept alive by open handles before it is ended. */
const LINGER_MS = 10_000;
/**
 * Suites that start server processes, wait on the clock or bind ports: one lane, one at a time.
 * Matched against the path under test/ (folder/file), with `/` as the separator.
 */
const TIMED_FILES =
  /^(process\/(server|shutdown|request-timeout|database-outage|mail|metrics|two-instances)|ratelimit\/|openapi\/swagger|auth\/auth-(social|logout)|resources\/idempotency-keys|definitions\/definition-format|docs\/examples)/;
/**
 * The slowest of the other suites (8 s or more on one of the databases), handed out before the
 * rest: one of them left to the end would keep its lane going long after the other has finished.
 */
const FIRST_FILES =
  /^(openapi\/openapi-responses|definitions\/schema-agreement|resources\/(export-failure|resources-generic)|security\/(fuzz|isolation-tenant)|process\/(health|embedded-durability)|auth\/(account|email-reset))/;
/** Fewer files than this run in one process: lanes pay off on whole runs, not on a focused one. */
const MIN_FILES_FOR_LANES = 12;

interface Counts {
  passed: number;
  failed: number;
  skipped: number;
}

/** Test files under test/, as paths relative to it, sorted; fixtures are data, never tests. */
function testFiles(pattern: string | undefined): string[] {
  const filter = pattern ? new RegExp(pattern, 'i') : undefined;
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const name = path.relative(TEST_DIR, full);
      if (entry.isDirectory()) {
        if (entry.name !== 'fixtures' && entry.name !== 'node_modules') walk(full);
      } else if (name.endsWith('.test.ts') && (!filter || filter.test(name))) {
        found.push(name);
      }
    }
  };
  walk(TEST_DIR);
  return found.sort();
}

function describeError(err: unknown): string {
  const text = err instanceof Error ? err.stack ?? err.message : String(err);
  return text.split('\n').map((line) => `    ${line}`).join('\n');
}

// ---------------------------------------------------------------------------------------------
// Parent: spawn the lanes, keep each one's latest counts, print the closing line.

function laneCount(files: string[]): number {
  const raw = process.env.TEST_LANES;
  const asked = raw ? Number(raw) : 2;
  if (!Number.isInteger(asked) || asked < 1) {
    console.error(`TEST_LANES must be a whole number of at least 1, got "${raw}"`);
    process.exit(1);
  }
  return files.length < MIN_FILES_FOR_LANES ? 1 : Math.min(asked, 2);
}

interface Plan {
  /** Each lane's own files, run first and in order. */
  lanes: string[][];
  /** The files handed out to whichever lane asks next, once its own are done. */
  shared: string[];
}

/** One lane: every file, in order. Two: the timed suites in the first, the rest shared, the slowest first. */
function plan(files: string[]): Plan {
  if (laneCount(files) === 1) return { lanes: [files], shared: [] };
  const slashed = (name: string) => name.split(path.sep).join('/');
  const timed = files.filter((name) => TIMED_FILES.test(slashed(name)));
  const rest = files.filter((name) => !timed.includes(name));
  if (timed.length === 0 || rest.length === 0) return { lanes: [files], shared: [] };
  const first = rest.filter((name) => FIRST_FILES.test(slashed(name)));
  return { lanes: [timed, []], shared: [...first, ...rest.filter((name) => !first.includes(name))] };
}

/** A lane's request for its next file, and the parent's answer (`nextFile` null: none left). */
interface NextFileAsked {
  nextFile: true;
}
interface NextFileGiven {
  nextFile: string | null;
}

function runLane(files: string[], shared: string[] | undefined, buffered: boolean): Promise<Counts> {
  const { FORCE_COLOR: _ignored, ...env } = process.env;
  const args = [CHILD_FLAG, JSON.stringify(files), ...(shared ? [SHARED_FLAG] : [])];
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), ...args], {
    cwd: path.dirname(TEST_DIR),
    env: { ...env, NO_COLOR: '1', NODE_DISABLE_COLORS: '1' },
    stdio: ['ignore', buffered ? 'pipe' : 'inherit', buffered ? 'pipe' : 'inherit', 'ipc'],
  });
  const output: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr?.on('data', (chunk: Buffer) => output.push(chunk));
  let counts: Counts | undefined;
  let lastGiven: string | undefined;
  child.on('message', (message: Counts | NextFileAsked) => {
    if (!('nextFile' in message)) {
      counts = message;
      return;
    }
    const next = (child.connected && shared?.shift()) || null;
    lastGiven = next ?? lastGiven;
    // A lane that ended before the answer reached it: its file goes to the other lane.
    child.send({ nextFile: next } satisfies NextFileGiven, (err) => {
      if (err && next) shared!.unshift(next);
    });
  });
  // A send to a lane that has just ended is answered above; nothing else of the channel may end the run.
  child.on('error', () => {});
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      if (buffered) process.stdout.write(Buffer.concat(output));
      const result = counts ?? { passed: 0, failed: 0, skipped: 0 };
      // A child that ended badly without a counted failure (crash, kill) is still one failure.
      if ((code !== 0 || signal) && result.failed === 0) {
        result.failed = 1;
        const during = lastGiven ? ` (the last file it was given: ${lastGiven})` : '';
        console.error(`\ntest process ended with ${signal ? `signal ${signal}` : `exit code ${code}`} outside any counted test${during}`);
      }
      resolve(result);
    });
  });
}

/**
 * The suites that start server processes run the compiled server, what `npm start` runs
 * (test/helpers/server-process.ts): when any of them is to run and dist/ is missing or older than
 * the sources, build it first. A failed build is reported here; those suites then run the sources.
 */
function ensureBuild(files: string[]) {
  const startsServers = files.some((name) => /helpers\/server-process\.js|scripts\/dist\.js/.test(readFileSync(path.join(TEST_DIR, name), 'utf8')));
  const problem = startsServers ? distProblem() : undefined;
  if (!problem) return;
  console.log(`${problem.replace(/: run `npm run build`\.$/, '')}: building it for the suites that start the server\n`);
  const build = spawnSync(process.execPath, [path.join(path.dirname(TEST_DIR), 'scripts/build.js')], { stdio: 'inherit' });
  if (build.status !== 0) console.error('the build failed: the suites that start the server run the sources through tsx\n');
}

async function parent(pattern: string | undefined) {
  const files = testFiles(pattern);
  if (files.length === 0) {
    console.error(`No test file under test/ matches ${pattern ? `/${pattern}/i` : '*.test.ts'}`);
    console.log('\n0 passed, 1 failed');
    process.exit(1);
  }
  ensureBuild(files);
  const { lanes, shared } = plan(files);
  const several = lanes.length > 1;
  if (several) console.log(`${files.length} test files in ${lanes.length} lanes (TEST_LANES=1 runs them in one); each lane's output follows when it ends\n`);
  const results = await Promise.all(lanes.map((own) => runLane(own, several ? shared : undefined, several)));
  // Files no lane asked for (a lane ended early, the other had already finished): each one a failure.
  if (shared.length > 0) {
    console.error(`\n${shared.length} test file(s) never ran, a lane having ended early: ${shared.join(', ')}`);
    results.push({ passed: 0, failed: shared.length, skipped: 0 });
  }
  const total = results.reduce((sum, r) => ({ passed: sum.passed + r.passed, failed: sum.failed + r.failed, skipped: sum.skipped + r.skipped }));
  if (total.skipped) console.log(`\n${total.skipped} skipped`);
  console.log(`\n${total.passed} passed, ${total.failed} failed`);
  process.exit(total.failed === 0 ? 0 : 1);
}

// ---------------------------------------------------------------------------------------------
// Child: import each test file into uvu's queue (import errors become failures), run the queue.

type Runner = () => Promise<[errors: string | true, ran: number, skipped: number, total: number]>;

async function child(fileList: string, shared: boolean) {
  // Before importing uvu: tells it the queue is run by us, not on the next tick by each file.
  (globalThis as any).UVU_DEFER = 1;
  const uvu = await import('uvu');
  const queue: Array<[string | null, ...Runner[]]> = ((globalThis as any).UVU_QUEUE ??= []);
  const counts: Counts = { passed: 0, failed: 0, skipped: 0 };

  // uvu drops the error of a throwing before/after hook; keep it for the report.
  const hookErrors: unknown[] = [];
  const guard = (register: (fn: (state: any) => unknown) => void) =>
    (fn: (state: any) => unknown) =>
      register(async (state) => {
        try {
          await fn(state);
        } catch (err) {
          hookErrors.push(err);
          throw err;
        }
      });
  const test = uvu.test as any;
  const before = Object.assign(guard(test.before), { each: test.before.each });
  const after = Object.assign(guard(test.after), { each: test.after.each });
  test.before = before;
  test.after = after;

  // Count every suite as it ends, and turn a hook failure into a reported failure.
  const seconds = new Map<string, number>();
  const cpu = new Map<string, number>();
  const measured = (group: [string | null, ...Runner[]]) => {
    const name = group[0]; // uvu shifts the name off the group when it runs it
    for (let i = 1; i < group.length; i++) {
      const run = group[i] as Runner;
      group[i] = async () => {
        const seenHookErrors = hookErrors.length;
        const started = performance.now();
        const cpuStarted = cpuSeconds();
        let result: Awaited<ReturnType<Runner>>;
        try {
          result = await run();
        } catch (err) {
          // A throwing after-hook escapes uvu's runner: the suite's own counts are lost with it.
          result = [`  FAIL  ${name}: a hook failed\n${describeError(err)}\n`, 0, 0, 1];
        }
        if (name) seconds.set(name, (seconds.get(name) ?? 0) + (performance.now() - started) / 1000);
        if (name) cpu.set(name, (cpu.get(name) ?? 0) + cpuSeconds() - cpuStarted);
        let [errors, ran, skipped, total] = result;
        if (errors === true && ran < total) {
          const cause = hookErrors.slice(seenHookErrors).map(describeError).join('\n') || '    (the error was not reported)';
          errors = `  FAIL  ${name}: ${total - ran} test(s) did not run because a before hook failed\n${cause}\n`;
        }
        counts.passed += ran;
        counts.failed += total - ran;
        counts.skipped += skipped;
        process.send?.(counts);
        return [errors, ran, skipped, total];
      };
    }
  };

  // The lane's own files, then (with SHARED_FLAG) those the parent hands out, one at a time.
  const own: string[] = JSON.parse(fileList);
  const nextFile = async (): Promise<string | undefined> => own.shift() ?? (shared ? await askParent() : undefined);

  // Each file is imported into uvu's queue (an import error becomes a failure) just before it runs:
  // its group ends with a step that loads the next one, and uvu goes on through the queue it grew.
  const load = async (name: string) => {
    const index = queue.length;
    (globalThis as any).UVU_INDEX = index;
    queue.push([name]);
    try {
      await import(pathToFileURL(path.join(TEST_DIR, name)).href);
    } catch (err) {
      const message = `  FAIL  ${name} could not be loaded\n${describeError(err)}\n`;
      queue[index].push(async () => [message, 0, 0, 1]);
    }
    if (queue[index].length === 1) {
      queue[index].push(async () => [`  FAIL  ${name} defines no tests (is test.run() missing?)\n`, 0, 0, 1]);
    }
    measured(queue[index]);
    queue[index].push(async () => {
      try {
        const next = await nextFile();
        if (next) await load(next);
        return ['', 0, 0, 0];
      } catch (err) {
        return [`  FAIL  the file after ${name} could not be asked for or loaded\n${describeError(err)}\n`, 0, 0, 1];
      }
    });
  };
  const first = await nextFile();
  if (first) await load(first);

  await uvu.exec();
  // On PostgreSQL, this process's test databases (test/helpers/postgres-copies.ts): dropped now,
  // as the linger timer below may end the process before `beforeExit` would.
  if (process.env.DATABASE_URL) await (await import('./helpers/postgres-copies.js')).dropTestDatabases();
  printSlowest(seconds, cpu);
  process.exitCode = counts.failed ? 1 : 0;
  process.disconnect?.();
  setTimeout(() => {
    console.error(`Open handles (a database pool or server not closed in test.after?) kept the test process alive ${LINGER_MS / 1000} s after the last test; ending it.`);
    process.exit();
  }, LINGER_MS).unref();
}

/** The next file of the run's shared ones from the parent, or none when all are handed out. */
function askParent(): Promise<string | undefined> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve(undefined);
    const done = (file?: string) => {
      process.off('message', answer);
      process.off('disconnect', done);
      resolve(file);
    };
    const answer = (message: NextFileGiven) => {
      if ('nextFile' in message) done(message.nextFile ?? undefined);
    };
    process.on('message', answer);
    // A parent gone meanwhile hands out nothing more: the lane ends with what it ran.
    process.once('disconnect', done);
    process.send({ nextFile: true } satisfies NextFileAsked, (err: Error | null) => {
      if (err) done();
    });
  });
}

/** How many of a lane's slowest files are listed after it (TEST_SLOWEST), to see where a slow run spends its time. */
const SLOWEST_SHOWN = Number(process.env.TEST_SLOWEST) || 8;

/**
 * CPU seconds of this process and of its ended children (server processes, CLIs): Linux's
 * /proc/self/stat, in clock ticks of 1/100 s; elsewhere this process's own.
 */
function cpuSeconds(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    // utime, stime, cutime, cstime: fields 14-17 of the line, 12-15 after "pid (name) ".
    return fields.slice(11, 15).reduce((sum, ticks) => sum + Number(ticks), 0) / 100;
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1e6;
  }
}

function printSlowest(seconds: Map<string, number>, cpu: Map<string, number>) {
  if (seconds.size < MIN_FILES_FOR_LANES) return;
  const slowest = [...seconds].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST_SHOWN);
  const sum = (values: Iterable<number>) => [...values].reduce((total, s) => total + s, 0);
  console.log(`\nslowest files (of ${seconds.size}, ${sum(seconds.values()).toFixed(0)} s in all, CPU ${sum(cpu.values()).toFixed(0)} s):`);
  for (const [name, s] of slowest) console.log(`  ${s.toFixed(1).padStart(6)} s  CPU ${(cpu.get(name) ?? 0).toFixed(1).padStart(6)} s  ${name}`);
}

const args = process.argv.slice(2);
if (args[0] === CHILD_FLAG) await child(args[1], args[2] === SHARED_FLAG);
else await parent(args[0]);
