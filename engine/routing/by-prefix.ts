// Route dispatch that stays cheap with hundreds of routes. @koa/router tests a request against
// the regular expression of every route it holds, in order; with every resource mounted under
// its path and aliases that is hundreds of tests per request. Here the routes of one router are
// shared out, once, among smaller routers by the literal segments their paths begin with, and a
// request goes to the one router whose routes can match its path (a Map lookup). Each smaller
// router is an ordinary @koa/router: matching and parameters behave as before, and what the
// dispatch leaves on ctx.matched tells allowed-methods.ts which methods the path has.
//
// One rule differs from a single router: a fixed path (a route path without parameters, such as
// /api/tags/search or /api/image-asset/upload) only ever reaches its own routes. A method it does
// not have is then a 405 naming its methods, never a generated /api/tags/:id reading "search" as
// an id, whichever was registered first.
import Router, { type Layer, type MatchResult } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';

/**
 * How many leading segments pick a router. Two tell /api/<one resource> from /api/<another>;
 * deeper would split a resource's own routes, which share their first two segments anyway.
 */
export const PREFIX_DEPTH = 2;

/** A segment the path syntax takes as itself, character for character (no :param, *, {, (, ?...). */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/**
 * The routing key of a request path: its first `depth` segments, or the whole path (without a
 * trailing slash, which routes ignore) when it has no more.
 */
export function prefixOfPath(path: string, depth = PREFIX_DEPTH): string {
  let end = 0;
  for (let i = 0; i < depth; i++) {
    const next = path.indexOf('/', end + 1);
    if (next < 0) return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    end = next;
  }
  return path.slice(0, end);
}

/**
 * The key of the only requests a route can match, or undefined when it may match under any key:
 * a route is keyed only when its regexp is anchored on literal, case-sensitive leading segments
 * (a whole path route, not a middleware mounted on a prefix).
 */
export function prefixOfLayer(layer: Layer, depth = PREFIX_DEPTH): string | undefined {
  const { path, opts, methods } = layer;
  if (typeof path !== 'string' || opts.pathAsRegExp || opts.end === false || !opts.sensitive || methods.length === 0) return undefined;
  const segments = path.split('/');
  if (segments[0] !== '') return undefined;
  const leading = segments.slice(1, depth + 1);
  if (!leading.every((s) => LITERAL_SEGMENT.test(s))) return undefined;
  // Shorter than `depth`: only that very path (or it with a trailing slash) matches.
  return `/${leading.join('/')}`;
}

/** A request or route path without its trailing slash (routes ignore one). */
const withoutTrailingSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

/**
 * The path of a route that has no parameter anywhere (/api/tags/search), the way a request path
 * spelling it exactly is compared; undefined for any other route or middleware.
 */
export function fixedPathOf(layer: Layer): string | undefined {
  const { path, opts, methods } = layer;
  if (typeof path !== 'string' || opts.pathAsRegExp || opts.end === false || !opts.sensitive || methods.length === 0) return undefined;
  if (!path.startsWith('/') || !path.split('/').slice(1).every((s) => s === '' || LITERAL_SEGMENT.test(s))) return undefined;
  return withoutTrailingSlash(path);
}

/**
 * The router's routes as a middleware that tries, per request, only those that can match its
 * path. Routes that may match any path are tried by every group, each group keeping the order
 * of registration, so the first route registered still wins. A request for a fixed path goes to
 * that path's routes alone (with the routes that may match any path). Routes registered on
 * `router` afterwards are not seen: call it last.
 */
export function routesByPrefix(router: Router, depth = PREFIX_DEPTH): Middleware & { router: Router; match(method: string, path: string): MatchResult } {
  const keyed = router.stack.map((layer) => ({ layer, key: prefixOfLayer(layer, depth), fixedPath: fixedPathOf(layer) }));
  const keys = new Set(keyed.flatMap(({ key }) => (key === undefined ? [] : [key])));
  const routerOf = (layers: Layer[]) => {
    const group = new Router(router.opts);
    group.stack = layers;
    return { group, routes: group.routes() as Middleware };
  };
  const groups = new Map<string, ReturnType<typeof routerOf>>();
  for (const key of keys) groups.set(key, routerOf(keyed.filter((k) => k.key === key || k.key === undefined).map((k) => k.layer)));
  const anyPath = routerOf(keyed.filter((k) => k.key === undefined).map((k) => k.layer));
  const fixed = new Map<string, ReturnType<typeof routerOf>>();
  for (const path of new Set(keyed.flatMap((k) => k.fixedPath ?? []))) {
    fixed.set(path, routerOf(keyed.filter((k) => k.key === undefined || k.fixedPath === path).map((k) => k.layer)));
  }
  const groupOf = (path: string) => fixed.get(withoutTrailingSlash(path)) ?? groups.get(prefixOfPath(path, depth)) ?? anyPath;
  const dispatch = (ctx: Context, next: Next) => groupOf(ctx.path).routes(ctx, next);
  /** The layers that match `path`, and those that also match `method`: for what must know a request's route before dispatch. */
  const match = (method: string, path: string) => groupOf(path).group.match(path, method);
  // Like @koa/router's own dispatch middleware, it names the router whose routes it serves.
  return Object.assign(dispatch, { router, match });
}
