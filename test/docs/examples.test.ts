// Every example of README.md and docs/ runs as written. A copy of the project is started with
// `npm start`, as a newcomer starts it (no secrets, no NODE_ENV, rate limits on, the embedded
// database under ./data), and the fenced `sh` and `http` blocks of the README, then of each page
// of docs/, run in one bash session, in order, against it: each answer is checked against what
// the page shows after its command (test/helpers/doc-examples.ts says how). The walkthrough of
// "Adding a resource" runs in the same copy: the page's definition is written where the page
// says, its `npm run db:migration` runs while the server runs, the migration it writes must be
// the one the page shows, and the restarted server (no build) serves the new resource.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PROJECT_ROOT } from '../../app/paths.js';
import { distProblem } from '../../scripts/dist.js';
import { blocksOf, commandsOf, looksRunnable, problems, runnable, type Block } from '../helpers/doc-examples.js';
import { ShellSession, type Ran } from '../helpers/shell-session.js';
import { killNpmStarts, npmStart, type NpmStart } from '../helpers/npm-start.js';

const PAGES = ['README.md', ...readdirSync(path.join(PROJECT_ROOT, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const read = (page: string) => readFileSync(path.join(PROJECT_ROOT, page), 'utf8');

/** What a newcomer's machine has: the runner needs bash and curl (CI must have them). */
const found = (tool: string) => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0;
const missing = ['bash', 'curl'].filter((tool) => !found(tool));
if (missing.length && process.env.CI) throw new Error(`the examples of the docs need ${missing.join(' and ')} (CI must have them)`);
/**
 * The examples start the embedded default, as the README does, whatever database the run uses:
 * the run on PostgreSQL would repeat this one, so it leaves them to the embedded run.
 */
const skipped = missing.length ? `no ${missing.join(', ')}` : process.env.DATABASE_URL ? 'run by the embedded run: the examples start the embedded default' : undefined;

/** The project as a clone has it after `npm install`, node_modules shared. */
const PROJECT_FILES = ['app', 'auth', 'engine', 'resources', 'config', 'scripts', 'dist', 'docs', 'package.json', 'package-lock.json', 'knexfile.ts', 'tsconfig.json', 'tsconfig.build.json'];
/** A newcomer's environment: none of the test run's settings (secrets, NODE_ENV, rate limits off). */
const NEWCOMER = { NODE_ENV: undefined, RATE_LIMITS: undefined, JWT_SECRET: undefined, JWT_REFRESH_SECRET: undefined, PORT: '0' };

const scratch = mkdtempSync(path.join(tmpdir(), 'docs-examples-'));
const project = path.join(scratch, 'project');
let server: NpmStart;
let origin = '';
let shell: ShellSession;

async function start() {
  server = npmStart(project, NEWCOMER);
  const listening = await server.listening;
  origin = `http://localhost:${listening.port}`;
  return listening;
}

test.before(async () => {
  if (skipped) return;
  assert.is(distProblem(), undefined, 'test/run.ts builds dist/ before this suite');
  for (const name of PROJECT_FILES) cpSync(path.join(PROJECT_ROOT, name), path.join(project, name), { recursive: true, preserveTimestamps: true });
  symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(project, 'node_modules'), 'dir');
  await start();
  shell = new ShellSession(project, { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8' });
});

test.after(() => {
  shell?.close();
  killNpmStarts();
  rmSync(scratch, { recursive: true, force: true });
});

interface Hooks {
  before?(block: Block): void | Promise<void>;
  after?(block: Block, ran: Ran[]): void | Promise<void>;
}

/** Runs a page's blocks in the session; fails with every command whose answer the page does not show. */
async function runPage(page: string, hooks: Hooks = {}) {
  const failures: string[] = [];
  for (const block of blocksOf(read(page)).filter(runnable)) {
    await hooks.before?.(block);
    const ran: Ran[] = [];
    for (const command of commandsOf(block, origin)) {
      const result = await shell.run(command.shell);
      ran.push(result);
      const wrong = problems(command, result);
      if (wrong.length) failures.push(`${page}:${block.line}: ${command.shown}\n    ${wrong.join('\n    ')}${result.stderr ? `\n    stderr: ${result.stderr}` : ''}`);
    }
    await hooks.after?.(block, ran);
  }
  if (failures.length) assert.unreachable(`${failures.length} example(s) of ${page} do not answer as the page shows:\n${failures.join('\n')}`);
}

const runs = (name: string, fn: () => Promise<void>) => test(name, async () => (skipped ? console.log(`skipped (${skipped}): ${name}`) : fn()));

test('every block that looks like requests runs (sh or http), and every block not run says why', () => {
  const wrong: string[] = [];
  for (const page of PAGES) {
    for (const block of blocksOf(read(page))) {
      if (looksRunnable(block) && !block.notRun) wrong.push(`${page}:${block.line}: a \`${block.lang || 'plain'}\` block with requests: make it sh or http`);
      if (block.notRun !== undefined && !block.notRun.trim()) wrong.push(`${page}:${block.line}: "not run" without a reason`);
    }
  }
  assert.equal(wrong, []);
  // The runner must find the examples the issue named, or it proves nothing.
  const count = (page: string) => blocksOf(read(page)).filter(runnable).length;
  assert.ok(count('README.md') >= 4 && count('docs/query-language.md') >= 4 && count('docs/api-conventions.md') >= 2 && count('docs/definition-format.md') >= 2);
});

runs('README.md: the first session, employees and their users, many records at once', async () => {
  await runPage('README.md');
  assert.match(await shell.variable('TOKEN'), /^ey/);
});

/** "Adding a resource": the page's definition, its generator run, its migration, a restart without a build. */
function walkthrough(): Hooks {
  const page = read('docs/definition-format.md');
  const section = page.slice(page.indexOf('## Adding a resource'), page.indexOf('\n## The format'));
  const blocks = blocksOf(section);
  const definitionFile = /\*\*Describe it\*\* in `([^`]+)`/.exec(section)![1];
  const definition = blocks.find((b) => b.lang === 'yaml')!.text;
  const output = blocks.find((b) => b.lang === '' && b.text.includes('difference(s)'))!.text;
  const migration = blocks.find((b) => b.lang === 'ts')!.text;
  const shownName = /Wrote resources\/migrations\/(\d{14}_\w+)\.ts/.exec(output)![1];
  const generates = (block: Block) => /npm run db:migration -- /.test(block.text);
  return {
    before(block) {
      if (generates(block)) writeFileSync(path.join(project, definitionFile), `${definition}\n`);
    },
    async after(block, [ran]) {
      if (!generates(block)) return;
      const written = readdirSync(path.join(project, 'resources', 'migrations')).filter((f) => f.endsWith(shownName.replace(/^\d{14}/, '') + '.ts'));
      assert.is(written.length, 1, ran.stdout);
      const name = written[0].replace(/\.ts$/, '');
      const asShown = (text: string) => text.replaceAll(name, shownName).trim();
      assert.ok(asShown(ran.stdout).endsWith(output.trim()), `the generator said:\n${ran.stdout}\nthe page shows:\n${output}`);
      assert.fixture(asShown(readFileSync(path.join(project, 'resources', 'migrations', written[0]), 'utf8')), migration.trim());
      // Step 3: stop the server (a supervisor's SIGTERM to npm) and start it again, without a build.
      assert.is(await server.stop('SIGTERM'), 0);
      await start();
      assert.ok(server.logs.some((l) => l.msg === 'migrations applied' && l.migrations.includes(name)), JSON.stringify(server.logs));
    },
  };
}

runs("the runner's checks fail where an answer differs from what a page shows", async () => {
  const check = async (lang: string, text: string) => {
    const [command] = commandsOf({ lang, text, line: 1 }, origin);
    return problems(command, await shell.run(command.shell));
  };
  // Without a status shown, any answer but 2xx; a status, a body or a header other than shown.
  assert.equal(await check('http', 'GET /api/employee?where[endWork][isNull]=true'), ['status 400: not 2xx']);
  assert.equal(await check('http', 'GET /api/employee/count\n# 200 {"total": 2}'), []);
  assert.match((await check('http', 'GET /api/employee/count\n# 201 {"total": 3}')).join('\n'), /^status 200, the page shows 201\nbody \{"total":2\}/);
  assert.match((await check('sh', `curl -si ${origin}/api/health\n# X-Missing: "…"`)).join(), 'header X-Missing: (absent), the page shows "…"');
  assert.equal(await check('sh', 'curl -s localhost:3000/api/health\n# 200 {"status":"ok",…}'), []);
  // A command that fails, a curl whose status goes unreported, an earlier curl that failed.
  assert.equal(await check('sh', 'ls no-such-file'), ['exit status 2']);
  assert.equal(await check('sh', "curl -s -w '' -o /dev/null localhost:3000/api/health"), ['no curl answered (its status was not reported)']);
  assert.equal(await check('sh', 'curl -s -o /dev/null localhost:3000/api/nope; curl -s localhost:3000/api/health\n# 200'), ['status 401, 200: not 2xx']);
  // A header is read only after a curl -i: elsewhere such a comment is prose.
  assert.equal(await check('sh', 'curl -s localhost:3000/api/health\n# Note: prose'), []);
});

for (const page of PAGES.filter((p) => p !== 'README.md' && blocksOf(read(p)).some(runnable))) {
  runs(`${page}: its examples, after the README's`, () => runPage(page, page === 'docs/definition-format.md' ? walkthrough() : {}));
}

test.run();
