// JSON bodies only (1 MiB by default): another content type is a 415, malformed JSON a 400,
// a larger body a 413, one nested deeper or with a longer array than the limits a 400 (no route
// needs either, and a handler walking such a body would spend time or stack on it). Routes that
// read their own body (uploads, imports) are left alone.
import type { Context, Next } from 'koa';
import bodyParser from 'koa-bodyparser';
import { badRequest, HttpError } from '../errors.js';
import type { OwnBody } from '../module.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);
const JSON_TYPES = ['application/json', 'application/*+json'];

function hasBody(ctx: Context): boolean {
  const length = ctx.request.length;
  return (length !== undefined && length > 0) || ctx.get('transfer-encoding') !== '';
}

/** The parser's own errors (raw-body, co-body) → our envelope, with sentences instead of library text. */
function parseFailure(err: any): HttpError {
  const status = typeof err?.status === 'number' ? err.status : 400;
  if (status === 413) return new HttpError(413, 'Request body is larger than the limit');
  if (status === 415) return new HttpError(415, 'Unsupported content encoding');
  // co-body's strict mode refuses a bare string, number, true, false or null at the top level.
  if (err instanceof SyntaxError && /only supports object and array/.test(err.message)) return badRequest('body must be an object');
  // co-body refuses __proto__ keys (prototype poisoning) with a SyntaxError of its own.
  if (err instanceof SyntaxError && /prototype property/.test(err.message)) return badRequest('body must not contain the key __proto__');
  return badRequest('Request body is not valid JSON');
}

export interface JsonShapeLimits {
  /** Deepest nesting of objects and arrays (the body itself is level 1). */
  maxDepth: number;
  /** Most items in any one array. */
  maxArray: number;
}

/** The first way `value` breaks the limits, if it does; iterative, so no body can exhaust the stack here. */
export function shapeProblem(value: unknown, limits: JsonShapeLimits): string | undefined {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length) {
    const [item, depth] = pending.pop()!;
    if (typeof item !== 'object' || item === null) continue;
    if (depth > limits.maxDepth) return `body must not be nested deeper than ${limits.maxDepth} levels`;
    if (Array.isArray(item)) {
      if (item.length > limits.maxArray) return `body: an array must not have more than ${limits.maxArray} items`;
      for (const child of item) pending.push([child, depth + 1]);
    } else {
      for (const key in item) pending.push([(item as Record<string, unknown>)[key], depth + 1]);
    }
  }
  return undefined;
}

/** The JSON body parser: `limitBytes` and `shape` come from the configuration (BODY_LIMIT, JSON_MAX_DEPTH, JSON_MAX_ARRAY). */
export function jsonBody(limitBytes: number, ownBodies: OwnBody[], shape: JsonShapeLimits) {
  const readsOwnBody = (ctx: Context) => ownBodies.some((route) => route.method === ctx.method && route.path.test(ctx.path));
  const parse = bodyParser({
    enableTypes: ['json'],
    jsonLimit: `${limitBytes}b`,
    strict: true,
    // Every JSON media type accepted below is parsed too: without this, koa-bodyparser reads only
    // its own short list, and an application/merge-patch+json body would silently become {}.
    detectJSON: (ctx) => Boolean(ctx.is(JSON_TYPES)),
    onerror: (err) => {
      throw parseFailure(err);
    },
  });
  return async function body(ctx: Context, next: Next) {
    if (!METHODS_WITH_BODY.has(ctx.method) || readsOwnBody(ctx)) return next();
    if (hasBody(ctx) && !ctx.is(JSON_TYPES)) {
      throw new HttpError(415, 'Unsupported media type: send application/json');
    }
    return parse(ctx, () => {
      const problem = shapeProblem(ctx.request.body, shape);
      if (problem) throw badRequest(problem);
      return next();
    });
  };
}
