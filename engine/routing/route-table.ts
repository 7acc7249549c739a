// The declared routes of an app, registered on its router, and found again per request before
// routing (engine/route.ts): authentication, the rate limits, the body parser and the request log
// read the matched declaration instead of lists of paths of their own.
import type Router from '@koa/router';
import type { Layer } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { authorize } from '../http/context.js';
import type { IdempotentDeclaration, Route, RouteMatch } from '../route.js';
import { setRouteMatch } from '../route.js';
import { compileValidator } from '../validation.js';
import { prefixOfPath } from './by-prefix.js';

/** Paths outside /api (the documentation) are served without a caller even when no route has them: they are a 404, not a 401. */
const OUTSIDE_API = /^\/(?!api(\/|$))/;

const isPublic = (route: Route) => route.access === 'public' || route.access === 'optional';

/** Wraps the handler of a route declared idempotent, as its declaration says (engine/idempotency/guard.ts). */
export type IdempotentWrapper = (handler: Middleware, declaration: IdempotentDeclaration) => Middleware;

/** The handler with the declaration's checks before it: the permission, then the body, then its idempotency key. */
function guarded(route: Route, idempotent?: IdempotentWrapper): Middleware {
  const { permission } = route;
  const handler =
    route.idempotent && idempotent ? idempotent(route.handler, typeof route.idempotent === 'object' ? route.idempotent : { headers: [] }) : route.handler;
  const validate = route.schemas?.body && compileValidator(route.schemas.body);
  if (!permission && !validate) return handler;
  return (ctx: Context, next: Next) => {
    if (permission) authorize(ctx, permission);
    if (validate) ctx.state.body = validate(ctx.request.body);
    return handler(ctx, next);
  };
}

type LayerMatcher = (method: string, path: string) => { path: Layer[]; pathAndMethod: Layer[] };

export class RouteTable {
  readonly routes: Route[] = [];
  private readonly byLayer = new Map<Layer, Route>();
  /** The distinct logPath masks of the routes under each routing prefix (/api/public), for a path none of them matches. */
  private readonly masksByPrefix = new Map<string, Array<(path: string) => string>>();

  /** `idempotent`: what wraps the routes declared idempotent; without it they run as any other. */
  constructor(
    private readonly router: Router,
    private readonly idempotent?: IdempotentWrapper,
  ) {}

  add(...routes: Route[]) {
    for (const route of routes) {
      this.routes.push(route);
      if (route.logPath) {
        const prefix = prefixOfPath(route.path);
        const masks = this.masksByPrefix.get(prefix) ?? [];
        if (!masks.includes(route.logPath)) this.masksByPrefix.set(prefix, [...masks, route.logPath]);
      }
      // A GET route answers HEAD already (@koa/router); a HEAD declared beside it only documents
      // that answer, and is found through the GET's layer.
      // Its own access and permission would never be checked: they must be the GET's.
      const get = route.method === 'HEAD' ? this.routes.find((r) => r.method === 'GET' && r.path === route.path) : undefined;
      if (get) {
        if ((get.access ?? 'caller') !== (route.access ?? 'caller') || get.permission !== route.permission) {
          throw new Error(`HEAD ${route.path} is answered by its GET: declare it with the GET's access and permission`);
        }
        continue;
      }
      const layer = this.router.register(route.path, [route.method], guarded(route, this.idempotent)) as Layer;
      this.byLayer.set(layer, route);
    }
  }

  /**
   * What a request meets, with `match` the router's own matching (routing/by-prefix.ts). A path
   * no route matches is not public (under /api), but it is logged with the masks of the routes
   * under its prefix (its first two segments): a near miss of a share link
   * (/api/public/<kind>/<id>/<token>/x) leaves no token in the log either.
   */
  matchOf(match: LayerMatcher, method: string, path: string): RouteMatch {
    const found = match(method, path);
    const onPath = found.path.flatMap((layer) => this.byLayer.get(layer) ?? []);
    const route = found.pathAndMethod.reduce<Route | undefined>((first, layer) => first ?? this.byLayer.get(layer), undefined);
    if (!onPath.length) return { public: OUTSIDE_API.test(path), anonymous: false, logPath: this.masksNear(path) };
    return {
      route,
      public: route ? isPublic(route) : onPath.some(isPublic),
      anonymous: onPath.some((r) => r.rateLimit === 'anonymous'),
      logPath: onPath.find((r) => r.logPath)?.logPath,
    };
  }

  /** The logPath masks of the routes under the path's prefix, one after the other. */
  private masksNear(path: string): RouteMatch['logPath'] {
    const masks = this.masksByPrefix.get(prefixOfPath(path));
    return masks && ((p) => masks.reduce((masked, mask) => mask(masked), p));
  }

  /** Outermost of what reads it: finds the request's route once, for everything after. */
  middleware(match: LayerMatcher): Middleware {
    return (ctx, next) => {
      setRouteMatch(ctx, this.matchOf(match, ctx.method, ctx.path));
      return next();
    };
  }
}
