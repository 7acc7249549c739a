// Server processes started by the bench: spawned with only the environment given, ready once
// their health URL answers 200, and never left behind (stopped on exit, Ctrl-C and SIGTERM).
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { call } from './http.js';

const TSX = import.meta.resolve('tsx');
/**
 * BENCH_CPU_PROF=<folder>: every server process (cluster workers inherit the flags) writes a V8
 * CPU profile there when it stops, for Chrome DevTools or `node --import tsx bench/profile-top.ts`.
 */
const PROFILE_FLAGS = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
/** Long: the first start on a seeded schema may build new indexes over millions of rows. */
const START_LIMIT_MS = 600_000;
const STOP_LIMIT_MS = 15_000;

export interface Child {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
const killAll = () => {
  for (const child of running) child.kill('SIGKILL');
};
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Runs `<script>` with PORT set to a free port (a .ts one through tsx, a compiled .js one with plain
 * node, as `npm start` runs dist/), and waits for `healthPath` to answer 200.
 */
export async function startChild(script: string, env: Record<string, string | undefined>, healthPath: string, nodeFlags: string[] = [], limitMs = START_LIMIT_MS): Promise<Child> {
  const port = await freePort();
  const clean: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port) };
  for (const [name, value] of Object.entries(env)) if (value !== undefined) clean[name] = value;
  // Logs go nowhere: reading them would cost this process CPU the load generator needs.
  const loader = script.endsWith('.ts') ? ['--import', TSX] : [];
  const child = spawn(process.execPath, [...PROFILE_FLAGS, ...nodeFlags, ...loader, script], { env: clean, stdio: ['ignore', 'ignore', 'pipe'] });
  running.add(child);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code) => {
      exitCode = code;
      running.delete(child);
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (exitCode !== undefined) throw new Error(`${script} exited with code ${exitCode} before answering\n${stderr}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${script} did not answer ${healthPath} within ${limitMs} ms\n${stderr}`);
    }
    const status = await call(url, 'GET', healthPath).then((r) => r.status, () => 0);
    if (status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    pid: child.pid!,
    url,
    async stop() {
      if (exitCode !== undefined) return;
      child.kill('SIGTERM');
      const guard = setTimeout(() => child.kill('SIGKILL'), STOP_LIMIT_MS);
      await exited;
      clearTimeout(guard);
    },
  };
}
