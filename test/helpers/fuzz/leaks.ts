// What must never reach a client: SQL, driver text, a stack or a source path. The fuzzer's own
// strings are kept clear of these shapes, so that a value echoed in a message ("'x' is not
// filterable") can never be taken for a leak.
import { LEAKS } from '../error-envelope.js';

export const LEAK_PATTERNS: RegExp[] = [...LEAKS, /\brelation\s+"/i, /\sat\s\//];

/** Signed tokens are random base64url: one may spell "knex" by chance. They are looked at apart. */
const JWT = /\beyJ[\w-]*\.[\w-]*\.[\w-]*/g;

/** The first leak shape the text shows, if any. */
export function leakIn(text: string): RegExp | undefined {
  const plain = text.replace(JWT, 'jwt');
  return LEAK_PATTERNS.find((pattern) => pattern.test(plain));
}

/** A string the fuzzer may send: one that cannot look like a leak when a message repeats it. */
export const quiet = (text: string) => leakIn(text) === undefined;
