// Assertions on the error envelope every failure answers: {statusCode, message, error}, a 400 message as
// an array of strings, and never SQL, a stack or driver text in what the client sees.
import { STATUS_CODES } from 'node:http';
import * as assert from 'uvu/assert';

interface Response {
  status: number;
  body: any;
  headers: Record<string, string | string[] | undefined>;
}

/** Words and shapes that only appear when a query, a driver message or a stack trace escaped. */
export const LEAKS: RegExp[] = [
  /\bselect\s/i,
  /\binsert\s+into\b/i,
  /\bupdate\s+"/i,
  /\bdelete\s+from\b/i,
  /\bviolates\b/i,
  /\bconstraint\b/i,
  /\bsyntax error\b/i,
  /\$\d+/,
  /\n\s+at\s/,
  /\sat\s\S+\s\(/,
  /\.(ts|js|cjs|mjs):\d+/,
  /node_modules/,
  /pglite|knex|objection|postgres/i,
];

export function assertNoLeak(res: Response) {
  const text = typeof res.body === 'object' ? JSON.stringify(res.body) : String(res.body ?? '');
  for (const leak of LEAKS) assert.not.match(text, leak, `response leaks ${leak}: ${text}`);
}

/** The list of messages of an error body, whether it carries one string or an array. */
export function messagesOf(res: Response): string[] {
  return Array.isArray(res.body?.message) ? res.body.message : [res.body?.message];
}

/**
 * The response is an error envelope with this status; when `expected` is given, its messages
 * include each expected text exactly (a string) or match it (a RegExp).
 */
export function assertError(res: Response, status: number, ...expected: Array<string | RegExp>) {
  const shown = JSON.stringify(res.body);
  assert.is(res.status, status, shown);
  assert.ok(res.headers['content-type']?.toString().startsWith('application/json'), `content-type of ${shown}`);
  // A bulk write's failure also names its items (docs/api-conventions.md#bulk-writes).
  const { errors, ...envelope } = res.body;
  assert.equal(Object.keys(envelope).sort(), ['error', 'message', 'statusCode'], shown);
  if (errors !== undefined) {
    assert.ok(Array.isArray(errors) && errors.length > 0, `errors must be a non-empty array: ${shown}`);
    for (const e of errors) assert.ok(Number.isInteger(e.index) && e.index >= 0 && typeof e.message === 'string' && Object.keys(e).length === 2, `errors: ${shown}`);
  }
  assert.is(res.body.statusCode, status);
  assert.is(res.body.error, STATUS_CODES[status]);
  if (status === 400) {
    assert.ok(Array.isArray(res.body.message) && res.body.message.length > 0, `400 message must be a non-empty array: ${shown}`);
    for (const m of res.body.message) assert.type(m, 'string');
  } else {
    assert.type(res.body.message, 'string', shown);
  }
  const messages = messagesOf(res);
  for (const want of expected) {
    const found = messages.some((m) => (typeof want === 'string' ? m === want : want.test(m)));
    assert.ok(found, `expected a message ${want} in ${shown}`);
  }
  assertNoLeak(res);
}

export const assertForbidden = (res: Response) => assertError(res, 403, 'Forbidden resource');
export const assertNotFound = (res: Response) => assertError(res, 404, 'The requested record was not found');

export function assertUnauthorized(res: Response) {
  assertError(res, 401, 'Unauthorized');
  assert.is(res.headers['www-authenticate'], 'Bearer');
}
