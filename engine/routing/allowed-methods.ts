// The answer to a known path asked with a method it does not have: 405 with the envelope and an
// Allow header naming exactly that path's methods. @koa/router's allowedMethods answers OPTIONS
// itself (200, an empty body) and a method outside its own list (TRACE, QUERY, PROPFIND…) with a
// 501; here every such method is a 405 alike. OPTIONS is no exception: the API answers it only
// as a CORS preflight (http/security.ts, before routing); otherwise OPTIONS is a method no path has.
import type { Layer } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { HttpError } from '../errors.js';

/** The order Allow lists methods in (reads first); others after, as the routes have them. */
const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const rank = (method: string) => (ORDER.includes(method) ? ORDER.indexOf(method) : ORDER.length);

/** The methods of the routes whose path matched the request (ctx.matched, left by the dispatch). */
export function methodsOfMatched(ctx: Context): string[] {
  const matched = (ctx as Context & { matched?: Layer[] }).matched ?? [];
  const methods = new Set<string>();
  for (const layer of matched) for (const method of layer.methods) methods.add(method);
  return [...methods].sort((a, b) => rank(a) - rank(b));
}

/** Runs after the routes (as @koa/router's allowedMethods does): acts only when no route answered. */
export function allowedMethods(): Middleware {
  return async function methodNotAllowed(ctx: Context, next: Next) {
    await next();
    if (ctx.status !== 404 || ctx.body != null) return;
    const allowed = methodsOfMatched(ctx);
    if (!allowed.length || allowed.includes(ctx.method)) return;
    const allow = allowed.join(', ');
    throw new HttpError(405, `${ctx.method} is not allowed on ${ctx.path}; allowed: ${allow}`, { Allow: allow });
  };
}
