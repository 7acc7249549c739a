// The examples of README.md and docs/ as a newcomer runs them: the fenced `sh` and `http` blocks of
// a page, read from the page itself, their commands sent in order in one bash session against a
// running server, each answer checked against what the page shows after the command.
//
// The format (docs/testing.md, "Examples in the docs"):
// - `sh` blocks are shell commands (a line ending in `\` continues). Comment lines right after a
//   command say what it answers: `# 201`, `# 201 {"items":[{"id":"…",…}]}` (the body, `…` standing
//   for anything), `# HTTP/1.1 304 Not Modified`, `# ETag: "…"` (a header of a `curl -i`), or
//   prose (`# prose: …`, not checked). A command whose comments name no status must answer 2xx
//   (each `curl` in it).
// - `http` blocks are requests, `METHOD /path` then an optional JSON body on the lines below,
//   sent with the session's `$TOKEN` (variables of the session work in the path and the body),
//   each followed by the same comments.
// - A block right after `<!-- not run: why -->` is not run; any other block language is not run
//   (output, definitions, diagrams), and a block of another language that looks like requests
//   (`curl `, or a line `GET /api…`) is an error.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

export interface Block {
  lang: string;
  /** The block's text, without the list item's indentation. */
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The reason of a `<!-- not run: … -->` right before it. */
  notRun?: string;
}

export interface Expectation {
  status?: number;
  /** A pattern for the last JSON line of the output (`…`: anything). */
  body?: string;
  headers: Array<{ name: string; value: string }>;
}

export interface Command {
  /** What the session runs. */
  shell: string;
  /** As the page shows it, for messages. */
  shown: string;
  expect: Expectation;
}

/** Every fenced block of a markdown page. */
export function blocksOf(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)```(\S*)/.exec(lines[i]);
    if (!open) continue;
    const indent = open[1].length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !new RegExp(`^ {0,${indent}}\`\`\`\\s*$`).test(lines[j]); j++) body.push(lines[j]);
    let k = i - 1;
    while (k >= 0 && lines[k].trim() === '') k--;
    const notRun = /^\s*<!-- not run: (.+?) -->\s*$/.exec(lines[k] ?? '')?.[1];
    blocks.push({ lang: open[2], text: body.map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n'), line: i + 1, notRun });
    i = j;
  }
  return blocks;
}

/** The blocks the runner runs: `sh` and `http`, unless marked not run. */
export const runnable = (block: Block) => (block.lang === 'sh' || block.lang === 'http') && !block.notRun;

/** A block of another language that holds requests: it would escape the runner. */
export const looksRunnable = (block: Block) => !['sh', 'http'].includes(block.lang) && (/(^|\s)curl /.test(block.text) || /^(GET|POST|PUT|PATCH|DELETE) \/api/m.test(block.text));

function expectation(comments: string[]): Expectation {
  const expect: Expectation = { headers: [] };
  for (const comment of comments) {
    const status = /^(?:HTTP\/[\d.]+ )?(\d{3})\b(.*)$/.exec(comment);
    const header = /^([A-Za-z][A-Za-z0-9-]*): (.+)$/.exec(comment);
    if (status) {
      expect.status = Number(status[1]);
      const rest = status[2].trim();
      if (/^[[{]/.test(rest)) expect.body = rest;
    } else if (/^[[{]/.test(comment)) {
      expect.body = comment;
    } else if (header && header[1].toLowerCase() !== 'prose') {
      expect.headers.push({ name: header[1], value: header[2] });
    }
  }
  return expect;
}

/** A `sh` block as commands, each with the comments after it. */
function shellCommands(text: string): Command[] {
  const commands: Command[] = [];
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n');
  let current: { shell: string; comments: string[] } | undefined;
  const close = () => current && commands.push({ shell: current.shell, shown: current.shell, expect: expectation(current.comments) });
  for (const line of lines) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    if (trimmed.startsWith('#')) {
      current?.comments.push(trimmed.replace(/^#\s?/, ''));
      continue;
    }
    close();
    // A command's own trailing comment (`npm test   # every suite…`) is prose.
    current = { shell: line.replace(/\s+#\s.*$/, ''), comments: [] };
  }
  close();
  return commands;
}

/** An `http` block as commands: each request sent with curl, the session's `$TOKEN` and variables. */
function httpCommands(text: string, origin: string): Command[] {
  const commands: Command[] = [];
  let current: { method: string; path: string; body: string[]; comments: string[] } | undefined;
  const close = () => {
    if (!current) return;
    const body = current.body.join('\n').trim();
    // The path in double quotes, so that `$VAR` expands; the body in an unquoted here-document, the same.
    const shell = [
      `curl -sg -X ${current.method} "${origin}${current.path}" -H "Authorization: Bearer $TOKEN"`,
      ...(body ? [`-H 'Content-Type: application/json' --data-binary "$(cat <<BODY_END\n${body}\nBODY_END\n)"`] : []),
    ].join(' ');
    commands.push({ shell, shown: `${current.method} ${current.path}${body ? `\n${body}` : ''}`, expect: expectation(current.comments) });
  };
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed) continue;
    const request = /^(GET|POST|PUT|PATCH|DELETE|HEAD) (\/\S*)$/.exec(trimmed);
    if (request) {
      close();
      current = { method: request[1], path: request[2], body: [], comments: [] };
    } else if (trimmed.startsWith('#')) {
      current?.comments.push(trimmed.replace(/^#\s?/, ''));
    } else if (current && current.comments.length === 0) {
      current.body.push(line);
    } else {
      throw new Error(`an http block's line is neither a request, a body right after one, nor a comment: ${line}`);
    }
  }
  close();
  return commands;
}

/** The commands of a runnable block; `localhost:3000` is the running server's address. */
export function commandsOf(block: Block, origin: string): Command[] {
  if (block.lang === 'http') return httpCommands(block.text, origin);
  return shellCommands(block.text).map((c) => ({ ...c, shell: c.shell.replace(/\blocalhost:3000\b/g, origin.replace(/^https?:\/\//, '')) }));
}

/** `…` stands for anything; spaces between JSON tokens do not matter. */
export function matchesPattern(pattern: string, actual: string): boolean {
  const compact = (text: string) => text.replace(/("(?:[^"\\]|\\.)*")|\s+/g, (_m, quoted: string | undefined) => quoted ?? '');
  const source = compact(pattern)
    .split('…')
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('[\\s\\S]*?');
  return new RegExp(`^${source}$`).test(compact(actual));
}

export interface Ran {
  stdout: string;
  /** The status of each `curl` the command ran, in order. */
  statuses: number[];
  /** Lines the command wrote to stderr (other than the statuses). */
  stderr: string;
}

/** What is wrong with a command's answer, by its page's comments (empty: nothing). */
export function problems(command: Command, ran: Ran): string[] {
  const found: string[] = [];
  const { expect } = command;
  if (expect.status !== undefined) {
    if (ran.statuses[ran.statuses.length - 1] !== expect.status) found.push(`status ${ran.statuses.join(', ') || 'none'}, the page shows ${expect.status}`);
  } else if (ran.statuses.some((s) => s < 200 || s > 299)) {
    found.push(`status ${ran.statuses.join(', ')}: not 2xx`);
  }
  if (expect.body !== undefined) {
    const json = ran.stdout.split(/\r?\n/).filter((l) => /^[[{]/.test(l.trim())).pop() ?? '';
    if (!matchesPattern(expect.body, json.trim())) found.push(`body ${json.trim() || '(none)'}\n    the page shows ${expect.body}`);
  }
  for (const header of expect.headers) {
    const lines = ran.stdout.split(/\r?\n/).filter((l) => l.toLowerCase().startsWith(`${header.name.toLowerCase()}:`));
    if (!lines.some((l) => matchesPattern(header.value, l.slice(header.name.length + 1).trim()))) {
      found.push(`header ${header.name}: ${lines.map((l) => l.slice(header.name.length + 1).trim()).join(' | ') || '(absent)'}, the page shows ${header.value}`);
    }
  }
  return found;
}

const STATUS = '@@status ';

/**
 * One bash session, as a reader's terminal: variables and functions a command sets stay for the
 * next. `curl` reports each answer's status on stderr, apart from its output.
 */
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
  async run(shell: string, timeoutMs = 60_000): Promise<Ran> {
    const n = ++this.count;
    const end = `@@end ${n}`;
    this.stdout = '';
    this.stderr = '';
    this.bash.stdin.write(`{\n${shell}\n} </dev/null\nprintf '\\n${end}\\n'; printf '\\n${end}\\n' >&2\n`);
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
      stderr: errLines.filter((l) => !l.startsWith(STATUS)).join('\n').trim(),
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
