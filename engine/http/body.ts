// JSON bodies only (1 MiB by default): another content type is a 415, malformed JSON a 400,
// a larger body a 413. Routes that take other media (uploads) opt out by path prefix.
import type { Context, Next } from 'koa';
import bodyParser from 'koa-bodyparser';
import { HttpError } from '../errors.js';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH']);

function hasBody(ctx: Context): boolean {
  const length = ctx.request.length;
  return (length !== undefined && length > 0) || ctx.get('transfer-encoding') !== '';
}

export function jsonBody(limitBytes: number, rawPrefixes: string[] = []) {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: `${limitBytes}b`, strict: true });
  return async function body(ctx: Context, next: Next) {
    if (!METHODS_WITH_BODY.has(ctx.method) || rawPrefixes.some((p) => ctx.path.startsWith(p))) return next();
    if (hasBody(ctx) && !ctx.is('application/json', 'application/*+json')) {
      throw new HttpError(415, 'Unsupported media type: send application/json');
    }
    return parse(ctx, next);
  };
}
