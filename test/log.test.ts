// The log's flat-line writer (the request line's) writes what pino itself would, byte for byte,
// and redacts as the logger does; the request line of a real request is checked in hardening.test.ts.
import pino from 'pino';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger, flatLineWriter, REDACTED, type FlatFields } from '../engine/log.js';

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
    flatLineWriter(logger, 'request')(FIELDS);
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

test.run();
