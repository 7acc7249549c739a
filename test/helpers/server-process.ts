// The real server (`app/start.ts`, compiled as `npm start` runs it) in a child process, for the tests
// that are about start-up, shutdown and the process around the app.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { distProblem, ENTRY } from '../../scripts/dist.js';
import { TEST_ENV } from './app.js';
import { onJsonLines } from './json-lines.js';

const SOURCE = fileURLToPath(new URL('../../app/start.ts', import.meta.url));
// Resolved here, so the child may run in any working directory (`--import tsx` resolves from the cwd).
const TSX = import.meta.resolve('tsx');
/**
 * The compiled server (dist/, what `npm start` runs: test/run.ts builds it first when a suite here
 * needs it) when it is current; otherwise the sources through tsx, so that a file run by itself
 * after an edit still tests that edit. The compiled one is what ships, and starts faster.
 */
export const COMPILED = distProblem() === undefined;
const SERVER_ARGS = COMPILED ? [ENTRY] : ['--import', TSX, SOURCE];
/** A guard against a hung child, not a timing assertion: a first PGlite start takes seconds. */
const START_LIMIT_MS = 120_000;

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  url: string;
  /** The JSON log lines written so far. */
  logs: Array<Record<string, any>>;
  stderr(): string;
  /** The first log line (already written, or to come within `timeoutMs`) that `matches`. */
  waitForLog(matches: (line: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  /** The first `count` log lines that `matches`, once that many have been written (within `timeoutMs`). */
  waitForLogs(matches: (line: Record<string, any>) => boolean, count: number, timeoutMs?: number): Promise<Array<Record<string, any>>>;
  /** The exit code once the process has ended. */
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

const running = new Set<ChildProcess>();

/**
 * The environment of a server child: only what is given (plus PATH), so that the variables of the
 * test run (DATABASE_URL, DATA_DIR, …) never leak into it by accident.
 */
export function serverEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  // LOG_LEVEL info: the tests read the server's start-up lines (NODE_ENV=test alone logs warnings up).
  const clean: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', ...TEST_ENV, LOG_LEVEL: 'info' };
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete clean[name];
    else clean[name] = value;
  }
  return clean;
}

function spawnServer(env: Record<string, string | undefined>, cwd?: string): ChildProcess {
  const child = spawn(process.execPath, SERVER_ARGS, { cwd, env: serverEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

/** The line that says the server serves: a single process's "listening", or a cluster's "cluster started" (after all its workers'). */
const isReady = (line: Record<string, any>) => (line.msg === 'listening' && line.worker === undefined) || line.msg === 'cluster started';

/**
 * Starts a server and resolves once it serves (see isReady); rejects with its stderr if it exits
 * first. `onSpawn` hears the process id at once, before it serves.
 */
export function startServer(env: Record<string, string | undefined>, cwd?: string, onSpawn?: (pid: number) => void): Promise<ServerProcess> {
  const child = spawnServer(env, cwd);
  onSpawn?.(child.pid!);
  const logs: Array<Record<string, any>> = [];
  type Matches = (line: Record<string, any>) => boolean;
  const waiting = new Set<{ matches: Matches; count: number; seen: number; found: () => void }>();
  const waitForLogs = (matches: Matches, count: number, timeoutMs = START_LIMIT_MS) => {
    const matching = () => logs.filter(matches).slice(0, count);
    const seen = logs.filter(matches).length;
    if (seen >= count) return Promise.resolve(matching());
    return new Promise<Array<Record<string, any>>>((resolve, reject) => {
      const waiter = {
        matches,
        count,
        seen,
        found: () => {
          clearTimeout(timer);
          waiting.delete(waiter);
          resolve(matching());
        },
      };
      const timer = setTimeout(() => {
        waiting.delete(waiter);
        reject(new Error(`${count} such log lines not written within ${timeoutMs} ms (${waiter.seen} were):\n${logs.map((l) => JSON.stringify(l)).join('\n')}\n${stderr}`));
      }, timeoutMs);
      waiting.add(waiter);
    });
  };
  const waitForLog = async (matches: Matches, timeoutMs = START_LIMIT_MS) => (await waitForLogs(matches, 1, timeoutMs))[0];
  let stderr = '';
  const shownLogs = () => logs.map((l) => JSON.stringify(l)).join('\n');
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within ${START_LIMIT_MS} ms\n${shownLogs()}\n${stderr}`));
    }, START_LIMIT_MS);
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    onJsonLines(child.stdout!, (entry) => {
      logs.push(entry);
      for (const waiter of waiting) if (waiter.matches(entry) && ++waiter.seen >= waiter.count) waiter.found();
      if (isReady(entry)) {
        clearTimeout(guard);
        const port = entry.port as number;
        resolve({
          child,
          port,
          url: `http://127.0.0.1:${port}`,
          logs,
          stderr: () => stderr,
          waitForLog,
          waitForLogs,
          exited,
          stop: async () => {
            child.kill('SIGTERM');
            return exited;
          },
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(guard);
      reject(new Error(`server exited with code ${code} before listening\n${shownLogs()}\n${stderr}`));
    });
  });
}

/** A server whose whole output is read once it has stopped: its pid now, its exit when it ends. */
export function startServerProcess(env: Record<string, string | undefined>, cwd?: string): { pid: number; exited: Promise<Exit> } {
  const child = spawnServer(env, cwd);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<Exit>((resolve, reject) => {
    const guard = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not stop within ${START_LIMIT_MS} ms\n${stdout}\n${stderr}`));
    }, START_LIMIT_MS);
    child.once('exit', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
  return { pid: child.pid!, exited };
}

/**
 * What a server that could not start said: exit code 1, stdout only JSON log lines without a
 * stack among them, the last at level fatal, and its message alone on stderr. Returns that line.
 */
export function startupFailure(exit: Exit): Record<string, any> {
  const shown = `exit code ${exit.code}\nstdout:\n${exit.stdout}\nstderr:\n${exit.stderr}`;
  if (exit.code !== 1) throw new Error(`expected exit code 1: ${shown}`);
  const lines = exit.stdout.split('\n').filter(Boolean).map((line) => {
    try {
      return JSON.parse(line) as Record<string, any>;
    } catch {
      throw new Error(`not a JSON log line: ${line}\n${shown}`);
    }
  });
  for (const line of lines) {
    // In JSON text a line break inside a value is written \n: a stack frame shows as \n    at.
    if (/\\n\s+at /.test(JSON.stringify(line))) throw new Error(`a stack in a log line: ${JSON.stringify(line)}`);
  }
  const fatal = lines.filter((l) => l.level === 'fatal');
  if (fatal.length !== 1 || lines[lines.length - 1] !== fatal[0]) throw new Error(`expected one fatal line, the last: ${shown}`);
  if (exit.stderr.trim() !== fatal[0].msg) throw new Error(`stderr is not the fatal line's message: ${shown}`);
  return fatal[0];
}

/** Runs a server that is expected to stop by itself (a start-up failure); resolves with its exit. */
export const runServerToExit = (env: Record<string, string | undefined>, cwd?: string): Promise<Exit> => startServerProcess(env, cwd).exited;

/** Whether a process of this pid still exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The child of `pid` that prepares a cluster or a new embedded data folder (Linux: /proc), waited
 * for up to 30 s. Told by its environment, which a process has only once it has been exec'd: a
 * child caught between fork and exec (tsx starts esbuild while the parent loads) still looks like
 * Node, and a signal sent on seeing it could reach the parent before its handlers are set.
 */
export async function preparingChildOf(pid: number): Promise<number | undefined> {
  for (let i = 0; i < 300; i++) {
    let children: number[];
    try {
      children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return undefined;
    }
    const preparing = children.find((child) => {
      try {
        return readFileSync(`/proc/${child}/environ`, 'utf8').split('\0').includes('CLUSTER_PREPARE=1');
      } catch {
        return false; // gone meanwhile
      }
    });
    if (preparing) return preparing;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return undefined;
}

/** For test.after: no server child outlives its test file. */
export function killServers() {
  for (const child of running) child.kill('SIGKILL');
}

/** `npm run <script> -- <args>` in the project folder, with only the given environment (plus PATH). */
export function runNpmScript(script: string, args: string[], env: Record<string, string | undefined>): Promise<Exit> {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const child = spawn('npm', ['run', '--silent', script, '--', ...args], { cwd: root, env: serverEnv({ HOME: process.env.HOME, ...env }), stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => {
    child.once('exit', (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

// For the suites whose server processes work in a PostgreSQL schema of their own (their test.after).
export { dropSchema } from './postgres-copies.js';
