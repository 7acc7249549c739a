// The examples of README.md and docs/ as a newcomer runs them: the fenced `sh` and `http` blocks of
// a page, read from the page itself, their commands sent in order in one bash session against a
// running server, each answer checked against what the page shows after the command.
//
// The format (docs/testing.md, "Examples in the docs"):
// - `sh` blocks are shell commands (a line ending in `\` continues). Comment lines right after a
//   command say what it answers: `# 201`, `# 201 {"items":[{"id":"…",…}]}` or `# {"id":"…",…}`
//   (the body, `…` standing for anything), `# HTTP/1.1 304 Not Modified`, and after a `curl -i`
//   `# ETag: "…"` (a header); any other comment is prose. Every command must exit 0, each of its
//   `curl`s must answer 2xx (but the last, when a status is shown: that one).
// - `http` blocks are requests, `METHOD /path` then an optional JSON body on the lines below,
//   sent with the session's `$TOKEN` (the body goes through the shell as a here-document:
//   variables of the session work in it and in the path), each followed by the same comments.
// - A block right after `<!-- not run: why -->` is not run; any other block language is not run
//   (output, definitions, diagrams), and a block of another language that looks like requests
//   (`curl `, or a line `GET /api…`) is an error.
import type { Ran } from './shell-session.js';

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

/** Comments after a command: a status, a JSON body, a header (only after `curl -i`); the rest is prose. */
function expectation(comments: string[], headersShown: boolean): Expectation {
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
    } else if (header && headersShown) {
      expect.headers.push({ name: header[1], value: header[2] });
    }
  }
  return expect;
}

/** A curl option that puts the answer's headers in its output (`-i`, `-si`, `--include`). */
const INCLUDES_HEADERS = /(^|\s)(-[A-Za-z]*i[A-Za-z]*|--include)(\s|$)/;

/** A `sh` block as commands, each with the comments after it. */
function shellCommands(text: string): Command[] {
  const commands: Command[] = [];
  const lines = text.replace(/\\\n\s*/g, ' ').split('\n');
  let current: { shell: string; comments: string[] } | undefined;
  const close = () => current && commands.push({ shell: current.shell, shown: current.shell, expect: expectation(current.comments, INCLUDES_HEADERS.test(current.shell)) });
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
    commands.push({ shell, shown: `${current.method} ${current.path}${body ? `\n${body}` : ''}`, expect: expectation(current.comments, false) });
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

/** What is wrong with a command's answer, by its page's comments (empty: nothing). */
export function problems(command: Command, ran: Ran): string[] {
  const found: string[] = [];
  const { expect } = command;
  const shown = (statuses: number[]) => statuses.join(', ') || 'none';
  if (ran.exit !== 0) found.push(`exit status ${ran.exit}`);
  if (/(^|[\s(|;&])curl\s/.test(command.shell) && ran.statuses.length === 0) found.push('no curl answered (its status was not reported)');
  const [last, earlier] = [ran.statuses[ran.statuses.length - 1], ran.statuses.slice(0, -1)];
  if (expect.status !== undefined && ran.statuses.length && last !== expect.status) found.push(`status ${shown(ran.statuses)}, the page shows ${expect.status}`);
  if ((expect.status === undefined ? ran.statuses : earlier).some((s) => s < 200 || s > 299)) found.push(`status ${shown(ran.statuses)}: not 2xx`);
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
