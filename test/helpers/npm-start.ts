// `npm start` as a supervisor runs it, in a project folder: npm's own pid is the one it knows and
// signals. The server's JSON log lines are collected as they come.
import { spawn, type ChildProcess } from 'node:child_process';
import { serverEnv } from './server-process.js';

/** A guard against a hung start, not a timing assertion. */
const LISTEN_LIMIT_MS = 120_000;

export interface NpmStart {
  child: ChildProcess;
  /** The server's JSON log lines so far. */
  logs: Array<Record<string, any>>;
  /** The `listening` line; rejects if npm exits first. */
  listening: Promise<Record<string, any>>;
  /** npm's exit. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

const started = new Set<ChildProcess>();

export function npmStart(cwd: string, env: Record<string, string | undefined>): NpmStart {
  // Detached: a group of its own, which killNpmStarts ends whole (npm and the server).
  const child = spawn('npm', ['start', '--silent'], { cwd, env: serverEnv({ HOME: process.env.HOME, ...env }), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  started.add(child);
  let stdout = '';
  let stderr = '';
  const logs: Array<Record<string, any>> = [];
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const listening = new Promise<Record<string, any>>((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error(`npm start did not listen within ${LISTEN_LIMIT_MS} ms\n${stdout}\n${stderr}`)), LISTEN_LIMIT_MS);
    child.stdout!.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const lines = stdout.split('\n');
      stdout = lines.pop()!;
      for (const line of lines.filter((l) => l.startsWith('{'))) {
        const entry = JSON.parse(line);
        logs.push(entry);
        if (entry.msg === 'listening') {
          clearTimeout(guard);
          resolve(entry);
        }
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(guard);
      reject(new Error(`npm start exited with code ${code}\n${logs.map((l) => JSON.stringify(l)).join('\n')}\n${stderr}`));
    });
  });
  listening.catch(() => {});
  return { child, logs, listening, exited, stderr: () => stderr };
}

/** For test.after: npm and its server, whatever a failed test left running. */
export function killNpmStarts() {
  for (const child of started) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // the whole group has ended
    }
  }
}
