// `npm start` as a supervisor runs it, in a project folder: npm's own pid is the one it knows and
// signals. The server's JSON log lines are collected as they come.
import { spawn, type ChildProcess } from 'node:child_process';
import { onJsonLines } from './json-lines.js';
import { serverEnv } from './server-process.js';

/** Guards against a hung start or stop, not timing assertions. */
const LISTEN_LIMIT_MS = 120_000;
const STOP_LIMIT_MS = 30_000;

export interface NpmStart {
  child: ChildProcess;
  /** The server's JSON log lines so far. */
  logs: Array<Record<string, any>>;
  /** The `listening` line; rejects if npm exits first. */
  listening: Promise<Record<string, any>>;
  /** npm's exit. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /**
   * Sends `signal` to npm's pid (none: waits for npm to end by itself), then npm's exit code; a
   * description of what is left running, killed, when npm has not ended within 30 s.
   */
  stop(signal?: NodeJS.Signals): Promise<number | null | string>;
}

const started = new Set<ChildProcess>();

export function npmStart(cwd: string, env: Record<string, string | undefined>): NpmStart {
  // Detached: a group of its own, which killNpmStarts ends whole (npm and the server).
  const child = spawn('npm', ['start', '--silent'], { cwd, env: serverEnv({ HOME: process.env.HOME, ...env }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let stderr = '';
  const logs: Array<Record<string, any>> = [];
  const shownLogs = () => logs.map((l) => JSON.stringify(l)).join('\n');
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      // Ended by itself (not killed): its server, an exec'd child, has ended with it.
      if (code !== null) started.delete(child);
      resolve({ code, signal });
    }),
  );
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const listening = new Promise<Record<string, any>>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`npm start did not listen within ${LISTEN_LIMIT_MS} ms\n${shownLogs()}\n${stderr}`)), LISTEN_LIMIT_MS);
    onJsonLines(child.stdout!, (entry) => {
      logs.push(entry);
      if (entry.msg === 'listening') {
        clearTimeout(guard);
        resolve(entry);
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(guard);
      reject(new Error(`npm start exited with code ${code}\n${shownLogs()}\n${stderr}`));
    });
  });
  listening.catch(() => {});
  const stop = async (signal?: NodeJS.Signals) => {
    if (signal) process.kill(child.pid!, signal);
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`still running ${STOP_LIMIT_MS} ms after ${signal ?? 'the start'}`), STOP_LIMIT_MS)));
    const ended = await Promise.race([exited.then(({ code }) => code), limit]);
    clearTimeout(timer);
    if (typeof ended === 'string') killGroup(child);
    return ended;
  };
  return { child, logs, listening, exited, stderr: () => stderr, stop };
}

function killGroup(child: ChildProcess) {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    // the whole group has ended
  }
}

/** For test.after: npm and its server, whatever a failed test left running. */
export function killNpmStarts() {
  for (const child of started) killGroup(child);
}
