// JSON bodies only (1 MiB by default): another content type is a 415, and so is a charset other
// than UTF-8; malformed JSON, bytes that are not UTF-8 and strings with a lone surrogate are a 400;
// a larger body a 413, one nested deeper or with a longer array than the limits a 400 (no route
// needs either, and a handler walking such a body would spend time or stack on it). Routes that
// read their own body (uploads, imports) are left alone, and so is a request no route answers: it
// is the router's 404 (or 405), not a 415 for a body nobody would read.
import type { Context, Next } from 'koa';
import { badRequest, HttpError } from '../errors.js';
import type { OwnBody } from '../module.js';
import { decodedBody, readBodyBytes } from './body-bytes.js';
import { isWellFormed, otherCharset, utf8Text } from './text.js';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body of a POST, PUT or PATCH ({} when it has none). */
    body: {} | null | undefined;
  }
}

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
const JSON_TYPES = ['application/json', 'application/*+json'];
/** JSON text whose top level is an object or an array (RFC 8259 whitespace before it). */
const OBJECT_OR_ARRAY = /^[\x20\x09\x0a\x0d]*[[{]/;

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

const tooLarge = () => new HttpError(413, 'Request body is larger than the limit');

/** The body's JSON: read up to `limitBytes` (after decompression), UTF-8, an object or an array. */
async function readJson(ctx: Context, limitBytes: number): Promise<unknown> {
  const source = decodedBody(ctx.req);
  if (source.length !== undefined && source.length > limitBytes) throw tooLarge();
  let bytes: Buffer;
  try {
    const unreadable = () => badRequest(source.stream === ctx.req ? 'the request body could not be read' : 'the request body could not be decompressed');
    bytes = await readBodyBytes(source.stream, limitBytes, tooLarge, unreadable);
  } finally {
    source.release();
  }
  const text = utf8Text(bytes, 'Request body');
  if (text === '') return {};
  if (!OBJECT_OR_ARRAY.test(text)) throw badRequest('body must be an object');
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON');
  }
}

export type RouteLookup = (method: string, path: string) => boolean;

/**
 * The JSON body parser: `limitBytes` and `shape` come from the configuration (BODY_LIMIT,
 * JSON_MAX_DEPTH, JSON_MAX_ARRAY); `hasRoute` tells whether a route answers a request, asked only
 * before refusing its body's type.
 */
export function jsonBody(limitBytes: number, ownBodies: OwnBody[], shape: JsonShapeLimits, hasRoute: RouteLookup = () => true) {
  const readsOwnBody = (ctx: Context) => ownBodies.some((route) => route.method === ctx.method && route.path.test(ctx.path));
  return async function body(ctx: Context, next: Next) {
    if (!METHODS_WITH_BODY.has(ctx.method) || readsOwnBody(ctx)) return next();
    if (!hasBody(ctx)) {
      ctx.request.body = {};
      return next();
    }
    const refusal = ctx.is(JSON_TYPES) ? otherCharset(ctx) : new HttpError(415, 'Unsupported media type: send application/json');
    if (refusal) {
      if (!hasRoute(ctx.method, ctx.path)) return next();
      throw refusal;
    }
    const parsed = await readJson(ctx, limitBytes);
    const problem = shapeProblem(parsed, shape);
    if (problem) throw badRequest(problem);
    ctx.request.body = parsed as {};
    return next();
  };
}
