// The log: the flat-line writer (the request line's) writes what pino itself would, byte for byte;
// redaction reaches fields, bindings, errors and model instances; stdout written once per turn
// loses nothing when the process exits, throws, or hangs after an error line and is killed. The
// request line of a real request is checked in hardening.test.ts.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, flatLineWriter, REDACTED, type FlatFields } from '../../engine/log/log.js';

/** A logger like createLogger's, with a fixed time so that two lines can be compared whole. */
function capturingLogger(lines: string[], level = 'info') {
  return pino(
    { level, base: undefined, timestamp: () => ',"time":"2026-01-02T03:04:05.678Z"', formatters: { level: (label) => ({ level: label }) } },
    { write: (line: string) => void lines.push(line) },
  );
}

const FIELDS: FlatFields = {
  reqId: 'abc-123',
  method: 'GET',
  path: '/api/employee/"quoted"\\back\nslash/é/\u2028/\u0001',
  status: 200,
  ms: 3.5,
  userId: undefined,
  notANumber: Number.NaN,
  infinite: Number.POSITIVE_INFINITY,
  incomplete: true,
};

test('a flat line is the line pino writes for the same fields, bindings included', () => {
  for (const bindings of [undefined, { worker: 2, name: 'api "one"' }]) {
    const lines: string[] = [];
    const root = capturingLogger(lines);
    const logger = bindings ? root.child(bindings) : root;
    logger.info(FIELDS, 'request');
    const write = flatLineWriter(logger, 'request');
    // The fast path, not logger.info under another name:
    const info = logger.info;
    logger.info = (() => assert.unreachable('logger.info called')) as any;
    write(FIELDS);
    logger.info = info;
    assert.is(lines.length, 2);
    assert.is(lines[1], lines[0]);
    const parsed = JSON.parse(lines[1]);
    assert.is(parsed.path, FIELDS.path);
    assert.is(parsed.notANumber, null);
    assert.not.ok('userId' in parsed, 'undefined fields are left out');
  }
});

test("a flat line follows the logger's level and redacts what REDACTED_KEYS names", () => {
  const lines: string[] = [];
  const quiet = capturingLogger(lines, 'warn');
  flatLineWriter(quiet, 'request')(FIELDS);
  assert.is(lines.length, 0, 'nothing below the level');
  quiet.level = 'info';
  flatLineWriter(quiet, 'request')({ status: 200 });
  assert.is(lines.length, 1, 'a level changed later applies');

  const written: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void written.push(line) });
  flatLineWriter(logger, 'request')({ path: '/x', Token: 'secret.t.k', code: 123456 });
  const line = JSON.parse(written[0]);
  assert.is(line.Token, REDACTED);
  assert.is(line.code, REDACTED);
  assert.is(line.level, 'info');
  assert.match(line.time, /^\d{4}-\d\d-\d\dT/);
  assert.is(line.msg, 'request');
  assert.not.ok(written[0].includes('secret.t.k') || written[0].includes('123456'));
});

test('a logger set up unusually (a mixin) is written through logger.info: the line is still what pino writes', () => {
  const lines: string[] = [];
  const logger = pino({ base: undefined, timestamp: false, mixin: () => ({ host: 'h1' }) }, { write: (line: string) => void lines.push(line) });
  logger.info(FIELDS, 'request');
  flatLineWriter(logger, 'request')(FIELDS);
  assert.is(lines[1], lines[0]);
  assert.is(JSON.parse(lines[1]).host, 'h1');
});

test('redaction reaches bindings, errors under any key, model instances, and leaves absent values absent', () => {
  const lines: Array<Record<string, any>> = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  class Row {
    id = 'r1';
    hash = '$argon2id$secret-hash';
  }
  const failure = Object.assign(new Error('refused'), { token: 'err.t.k' });
  logger.child({ session: { token: 'bound.t.k' } }).info({ row: new Row(), err: failure, cause: failure, code: undefined, when: new Date(0) }, 'x');
  const [line] = lines;
  const text = JSON.stringify(line);
  for (const secret of ['bound.t.k', 'secret-hash', 'err.t.k']) assert.not.ok(text.includes(secret), `${secret} in ${text}`);
  assert.is(line.session.token, REDACTED);
  assert.equal(line.row, { id: 'r1', hash: REDACTED });
  assert.is(line.err.type, 'Error', "pino's own serialization of err is kept");
  assert.is(line.err.message, 'refused');
  assert.match(line.err.stack, /refused/);
  assert.is(line.cause.token, REDACTED);
  assert.not.ok('code' in line, 'an absent value is not written as [redacted]');
  assert.is(line.when, '1970-01-01T00:00:00.000Z', 'a Date is written as JSON writes it');
});

const FIXTURE = fileURLToPath(new URL('../helpers/log-fixture.ts', import.meta.url));
const TSX = import.meta.resolve('tsx');

/** Runs the fixture in `mode`; resolves with its exit and output. `onStderr` may act on what it writes there. */
function runFixture(mode: string, onStderr?: (text: string, kill: () => void) => void): Promise<{ code: number | null; signal: string | null; stdout: string }> {
  const child = spawn(process.execPath, ['--import', TSX, FIXTURE, mode], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info' } });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
  child.stderr.on('data', (chunk: Buffer) => onStderr?.(chunk.toString(), () => child.kill('SIGKILL')));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout })));
}

/** The numbered lines a fixture wrote, each whole JSON, in order. */
function numberedLines(stdout: string): number[] {
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
    .filter((line) => line.msg === 'line')
    .map((line) => line.i);
}

test('stdout written once per turn: nothing held is lost at process.exit or on an uncaught exception', async () => {
  const all = Array.from({ length: 200 }, (_, i) => i);
  const exited = await runFixture('exit');
  assert.is(exited.code, 3);
  assert.equal(numberedLines(exited.stdout), all);
  const thrown = await runFixture('throw');
  assert.is(thrown.code, 1);
  assert.equal(numberedLines(thrown.stdout), all);
});

test('an error line is written at once, with what was held before it: a process killed while hanging still shows it', async () => {
  const killed = await runFixture('hang', (text, kill) => {
    if (text.includes('hanging')) kill();
  });
  assert.is(killed.signal, 'SIGKILL');
  assert.equal(numberedLines(killed.stdout), Array.from({ length: 200 }, (_, i) => i));
  assert.ok(killed.stdout.includes('"msg":"about to hang"'), killed.stdout.slice(-300));
});

test.run();
