// One bash session, as a reader's terminal, for the examples of the docs (doc-examples.ts):
// variables and functions a command sets stay for the next; `curl` reports each answer's status
// on stderr, apart from its output, and each command its exit status.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface Ran {
  stdout: string;
  /** The status of each `curl` the command ran, in order. */
  statuses: number[];
  /** The command's exit status. */
  exit: number;
  /** What the command wrote to stderr (other than the statuses). */
  stderr: string;
}

const STATUS = '@@status ';
const EXIT = '@@exit ';
/** A guard against a command that hangs, not a timing assertion: a generator run takes seconds. */
const COMMAND_LIMIT_MS = 180_000;

export class ShellSession {
  private readonly bash: ChildProcessWithoutNullStreams;
  private stdout = '';
  private stderr = '';
  private count = 0;

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env, stdio: 'pipe' });
    this.bash.stdout.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    this.bash.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
    this.bash.stdin.write(`curl() { command curl -w '%{stderr}${STATUS}%{http_code}\\n' "$@"; }\n`);
  }

  /** Runs one command (its stdin empty) and resolves with what it wrote, once it has ended. */
  async run(shell: string, timeoutMs = COMMAND_LIMIT_MS): Promise<Ran> {
    const n = ++this.count;
    const end = `@@end ${n}`;
    this.stdout = '';
    this.stderr = '';
    this.bash.stdin.write(`{\n${shell}\n} </dev/null\nprintf '\\n${EXIT}%d\\n' $? >&2; printf '\\n${end}\\n'; printf '\\n${end}\\n' >&2\n`);
    const began = Date.now();
    while (!this.stdout.includes(`${end}\n`) || !this.stderr.includes(`${end}\n`)) {
      if (this.bash.exitCode !== null) throw new Error(`bash ended (exit ${this.bash.exitCode}) running: ${shell}\n${this.stderr}`);
      if (Date.now() - began > timeoutMs) throw new Error(`no end within ${timeoutMs} ms of: ${shell}\nstdout: ${this.stdout}\nstderr: ${this.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const stdout = this.stdout.slice(0, this.stdout.indexOf(`\n${end}\n`));
    const errLines = this.stderr.slice(0, this.stderr.indexOf(`\n${end}\n`)).split('\n');
    return {
      stdout,
      statuses: errLines.filter((l) => l.startsWith(STATUS)).map((l) => Number(l.slice(STATUS.length))),
      exit: Number(errLines.find((l) => l.startsWith(EXIT))?.slice(EXIT.length) ?? NaN),
      stderr: errLines.filter((l) => !l.startsWith(STATUS) && !l.startsWith(EXIT)).join('\n').trim(),
    };
  }

  /** A variable of the session. */
  async variable(name: string): Promise<string> {
    return (await this.run(`printf '%s' "$${name}"`)).stdout;
  }

  close() {
    this.bash.stdin.end();
    this.bash.kill();
  }
}
