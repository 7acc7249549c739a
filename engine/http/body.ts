// JSON bodies only (1 MiB by default), read by koa-bodyparser: another content type is a 415, and
// so is a charset other than UTF-8; a UTF-8 byte order mark before the JSON is ignored; malformed
// JSON, bytes that are not UTF-8 and strings with a lone surrogate are a 400; a larger body a 413,
// one nested deeper or with a longer array than the limits a 400 (no route needs either, and a
// handler walking such a body would spend time or stack on it). Routes that read their own body
// (uploads, imports) are left alone, and so is a request no route answers: it is the router's 404
// (or 405), not a 415 for a body nobody would read.
import type { IncomingMessage } from 'node:http';
import type { Context, Next } from 'koa';
import bodyParser from 'koa-bodyparser';
import { badRequest, HttpError } from '../errors.js';
import { requestAborted, unreadableBody } from './body-bytes.js';
import { isWellFormed, otherCharset, utf8Text } from './text.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const JSON_TYPES = ['application/json', 'application/*+json'];

function hasBody(ctx: Context): boolean {
  const length = ctx.request.length;
  return (length !== undefined && length > 0) || ctx.get('transfer-encoding') !== '';
}

export interface JsonShapeLimits {
  /** Deepest nesting of objects and arrays (the body itself is level 1). */
  maxDepth: number;
  /** Most items in any one array. */
  maxArray: number;
  /** A __proto__ key is refused unless allowed (a reader that only names unknown keys takes it). */
  allowProtoKey?: boolean;
}

export const LONE_SURROGATE = 'strings must be valid Unicode: a \\ud800-\\udfff escape must be half of a pair';

/**
 * The first way `value` breaks the limits, or holds text no UTF-8 can carry (a lone surrogate, in
 * a key or a string), or a __proto__ key (prototype poisoning in whoever merges it), if it does;
 * `where` starts the message. Iterative, so no body can exhaust the stack here.
 */
export function shapeProblem(value: unknown, limits: JsonShapeLimits, where = 'body'): string | undefined {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length) {
    const [item, depth] = pending.pop()!;
    if (typeof item === 'string') {
      if (!isWellFormed(item)) return `${where}: ${LONE_SURROGATE}`;
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    if (depth > limits.maxDepth) return `${where} must not be nested deeper than ${limits.maxDepth} levels`;
    if (Array.isArray(item)) {
      if (item.length > limits.maxArray) return `${where}: an array must not have more than ${limits.maxArray} items`;
      for (const child of item) pending.push([child, depth + 1]);
    } else {
      for (const key in item) {
        if (key === '__proto__' && !limits.allowProtoKey) return `${where} must not contain the key __proto__`;
        if (!isWellFormed(key)) return `${where}: ${LONE_SURROGATE}`;
        pending.push([(item as Record<string, unknown>)[key], depth + 1]);
      }
    }
  }
  return undefined;
}

/**
 * koa-bodyparser reads the body as Latin-1, one character per byte, so no byte is lost: read as
 * UTF-8, a byte that is not UTF-8 would already be U+FFFD, indistinguishable from one sent. Only
 * a body with a byte outside ASCII reads differently as UTF-8 (its UTF-8 length then differs from
 * its length: a native count, far cheaper than a regular expression), and only then are the
 * bytes decoded again, strictly (a 400 if they are not UTF-8).
 */
const utf8Of = (latin1: string): string =>
  Buffer.byteLength(latin1, 'utf8') === latin1.length ? latin1 : utf8Text(Buffer.from(latin1, 'latin1'), 'Request body');

/** The body's Content-Encoding as inflation (in koa-bodyparser) expects it: the token is case-insensitive. */
function normalizeEncoding(req: IncomingMessage) {
  const coding = req.headers['content-encoding'];
  if (coding) req.headers['content-encoding'] = coding.trim().toLowerCase();
}

const isCompressed = (req: IncomingMessage) => Boolean(req.headers['content-encoding']) && req.headers['content-encoding'] !== 'identity';

/**
 * `parsing`, or a 400 once the client goes away before the end of a compressed body: raw-body
 * then waits on a decompressor that would never end (pipe() passes a request's end on, not its
 * abort). An uncompressed body's abort is raw-body's own 400.
 */
async function unlessAborted(req: IncomingMessage, parsing: Promise<unknown>): Promise<unknown> {
  let onClose!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onClose = () => {
      if (!req.complete) reject(requestAborted());
    };
  });
  req.once('close', onClose);
  if (req.destroyed) onClose();
  try {
    return await Promise.race([parsing, aborted]);
  } finally {
    req.off('close', onClose);
  }
}

/** koa-bodyparser's errors (co-body, raw-body, inflation, zlib) → our envelope, in our words. */
function parseFailure(err: any, ctx: Context): HttpError {
  // What a decompressor was reading stays piped to it, paused: cut, the rest of the body can be
  // drained or the connection closed (unread-body.ts).
  ctx.req.unpipe();
  if (err instanceof SyntaxError) {
    // Bytes that are not UTF-8 are named before the JSON they break, if they break it (co-body
    // hands the text it read along with the error).
    const read: unknown = (err as SyntaxError & { body?: unknown }).body;
    if (typeof read === 'string') utf8Of(read);
    // co-body's strict mode refuses a bare string, number, true, false or null at the top level.
    if (/only supports object and array/.test(err.message)) return badRequest('body must be an object');
    // co-body refuses __proto__ keys (prototype poisoning) with a SyntaxError of its own.
    if (/prototype property/.test(err.message)) return badRequest('body must not contain the key __proto__');
    return badRequest('Request body is not valid JSON');
  }
  const status = typeof err?.status === 'number' ? err.status : undefined;
  if (status === 413) return new HttpError(413, 'Request body is larger than the limit');
  if (status === 415) return new HttpError(415, `Unsupported content encoding ${ctx.get('content-encoding')}: send the body as it is, or gzip, deflate or br`);
  if (err?.type === 'request.aborted') return requestAborted();
  // A stream error: zlib's for a body that does not decompress, else the request's own.
  return isCompressed(ctx.req) ? badRequest('the request body could not be decompressed') : unreadableBody();
}

/** A UTF-8 byte order mark (EF BB BF) as koa-bodyparser reads a body: Latin-1, one character per byte. */
const BOM = '\xef\xbb\xbf';
/** co-body's test for strict mode: JSON text that starts, after whitespace, an object or an array. */
const OBJECT_OR_ARRAY = /^[\x20\x09\x0a\x0d]*[[{]/;

/**
 * The JSON after a byte order mark, parsed as co-body parses a body without one (strict mode;
 * a __proto__ key is left to shapeProblem, which names it as co-body would). RFC 8259 §8.1 lets a
 * parser ignore the mark, and .NET and PowerShell write one; co-body refuses it as no object or
 * array, so only a body it refused comes here. A failure carries the text as co-body's does.
 */
function parseAfterBom(read: string): unknown {
  const text = read.slice(BOM.length);
  try {
    if (!text) return {};
    if (!OBJECT_OR_ARRAY.test(text)) throw new SyntaxError('invalid JSON, only supports object and array');
    return JSON.parse(text);
  } catch (err) {
    throw Object.assign(err as SyntaxError, { body: text });
  }
}

/**
 * How the route answering a request reads its body (its declaration's `body`; `none`: it reads
 * none, a DELETE that declares no body), or undefined when no route answers it.
 */
type BodyReading = (ctx: Context) => 'json' | 'own' | 'none' | undefined;

/**
 * The JSON body parser: `limitBytes` and `shape` come from the configuration (BODY_LIMIT,
 * JSON_MAX_DEPTH, JSON_MAX_ARRAY); `readingOf` tells how the request's route reads its body.
 */
export function jsonBody(limitBytes: number, shape: JsonShapeLimits, readingOf: BodyReading = () => 'json') {
  // koa-bodyparser hands `encoding` on to co-body and raw-body (its type definitions spell it
  // `encode`). `binary` is Node's other name for Latin-1: iconv-lite hands it to Node's own
  // decoder, where its `latin1` is a table walked in JavaScript, several times slower.
  const options: bodyParser.Options & { encoding: string } = {
    enableTypes: ['json'],
    encoding: 'binary',
    jsonLimit: `${limitBytes}b`,
    strict: true,
    // Every JSON media type accepted below is parsed too: without this, koa-bodyparser reads only
    // its own short list, and an application/merge-patch+json body would silently become {}.
    detectJSON: (ctx) => Boolean(ctx.is(JSON_TYPES)),
    onerror: (err, ctx) => {
      const read: unknown = err instanceof SyntaxError ? (err as SyntaxError & { body?: unknown }).body : undefined;
      if (typeof read === 'string' && read.startsWith(BOM)) {
        // A byte order mark is ignored: the body is what follows it, refused as it would be alone.
        try {
          ctx.request.body = parseAfterBom(read);
          ctx.request.rawBody = read.slice(BOM.length);
          return;
        } catch (again) {
          throw parseFailure(again, ctx);
        }
      }
      throw parseFailure(err, ctx);
    },
  };
  const parse = bodyParser(options);
  return async function body(ctx: Context, next: Next) {
    if (!METHODS_WITH_BODY.has(ctx.method)) return next();
    const reading = readingOf(ctx);
    // A DELETE's body is read only for a route that declares it: any other DELETE leaves it unread, as it always has.
    if (reading === 'own' || reading === 'none' || (ctx.method === 'DELETE' && reading !== 'json')) return next();
    if (!hasBody(ctx)) {
      ctx.request.body = {};
      return next();
    }
    const refusal = ctx.is(JSON_TYPES) ? otherCharset(ctx) : new HttpError(415, 'Unsupported media type: send application/json');
    if (refusal) {
      if (reading === undefined) return next();
      throw refusal;
    }
    normalizeEncoding(ctx.req);
    const parsing = parse(ctx, () => {
      const read = ctx.request.rawBody;
      if (typeof read === 'string') {
        const text = utf8Of(read);
        // Bytes outside ASCII stand only inside JSON strings, and UTF-8 spells every character
        // outside ASCII with them alone: the text parses like the Latin-1 reading, strings as sent.
        if (text !== read) {
          ctx.request.rawBody = text;
          ctx.request.body = JSON.parse(text);
        }
      }
      const problem = shapeProblem(ctx.request.body, shape);
      if (problem) throw badRequest(problem);
      return next();
    });
    return isCompressed(ctx.req) ? unlessAborted(ctx.req, parsing) : parsing;
  };
}
