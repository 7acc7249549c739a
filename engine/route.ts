// A route's one declaration: everything the engine needs to know about it, in one place.
// Authentication reads `public`, the rate limits `rateLimit`, the JSON body parser `body`, the
// request log `logPath`, the wrapper around the handler `permission` and `schemas`, and the
// OpenAPI document `docs` (docs/modules.md). Generated resources, hand-written modules and the
// engine's own routes (health, documentation) are declared alike.
import type { Context, Middleware } from 'koa';

export type RouteMethod = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** An OpenAPI operation object, as the document shows it. */
export type OperationDoc = Record<string, unknown>;

export interface Route {
  method: RouteMethod;
  /** As @koa/router takes it: `/api/tags/getByName/:name`. */
  path: string;
  handler: Middleware;
  /**
   * Who may call it. `caller` (the default): a valid caller, else 401. `public`: served without
   * one (sign-in, a link a customer opens). `optional`: public, and the handler reads a caller
   * when one is sent (registration by an admin). The document's `security` says the same.
   */
  access?: 'caller' | 'public' | 'optional';
  /**
   * How the request body is read. `json` (the default): the engine's JSON parser, its limits and
   * its 400/413/415 answers. `own`: the handler reads the stream itself (an upload, a CSV import)
   * and answers 415 for a type it does not take. A DELETE reads a body only when its route
   * declares `json` here (a bulk delete's ids); left out, a DELETE's body is left unread.
   */
  body?: 'json' | 'own';
  /**
   * Honours Idempotency-Key (engine/idempotency/guard.ts): a retry with the key of a request that
   * succeeded replays its answer instead of running again. For a route that creates, with a caller.
   * `headers`: request headers that change what it does (Organization-Id), part of the request's
   * fingerprint with its method, URL and body.
   */
  idempotent?: boolean | IdempotentDeclaration;
  /** The permission the caller's role must grant, checked before the handler runs (403). */
  permission?: string;
  /**
   * Validated before the handler runs (after `permission`), with the messages of every other 400;
   * the handler finds the valid body in ctx.state.body. Documented as the request body unless
   * `docs` says otherwise.
   */
  schemas?: { body?: object };
  /**
   * Whom the rate limits count a request against. `caller` (the default): the user of a valid
   * token, else the client address. `anonymous`: the anonymous tier by client address, whatever
   * token the request carries (a link opened by customers, where a token must buy no allowance).
   */
  rateLimit?: 'caller' | 'anonymous';
  /**
   * The path as request log lines show it, when it carries a secret (a share link's token). Also
   * applied to a path no route matches under the same first two segments (a near miss).
   */
  logPath?(path: string): string;
  /**
   * The OpenAPI operation, without `security` (access says it). `false` keeps the route out of the
   * document's paths: the documentation's own routes, and an alias (`aliasOf`).
   */
  docs: OperationDoc | false;
  /**
   * The path of the route this one serves under another spelling (a definition's alias:
   * `/api/notes/:id` for `/api/note/:id`), same method, same answers. The document shows that
   * route's operation once and lists this path in its path item's `x-aliases`, so a client
   * generator emits each operation once while every answer of the alias stays declared.
   * Declared with `docs: false`; every method of an alias path must alias one of that path.
   */
  aliasOf?: string;
}

/**
 * What the engine found for a request before routing. A path's facts (public, counted as
 * anonymous, logged masked) hold for every method of it: another method is then a 405 answered
 * as the path's routes are, not a 401, and its secret is masked all the same.
 */
export interface RouteMatch {
  /** The route answering this method on this path, if one does. */
  route?: Route;
  public: boolean;
  anonymous: boolean;
  logPath?(path: string): string;
}

const MATCH_KEY = 'routeMatch';

export function routeMatchOf(ctx: Context): RouteMatch | undefined {
  return ctx.state[MATCH_KEY] as RouteMatch | undefined;
}

export function setRouteMatch(ctx: Context, match: RouteMatch) {
  ctx.state[MATCH_KEY] = match;
}

/** The body a route's `schemas.body` validated. */
export function validBody<T>(ctx: Context): T {
  return ctx.state.body as T;
}

/**
 * How a route served under several spellings of its path (a resource's path and its aliases) is
 * documented: under the first spelling, its own operation (`docs` is asked for only then); under
 * any other, as an alias of that route (`aliasOf`).
 */
export function documentedOnce(path: string, canonical: string, docs: () => OperationDoc): Pick<Route, 'docs' | 'aliasOf'> {
  return path === canonical ? { docs: docs() } : { docs: false, aliasOf: canonical };
}

/** How an idempotent route (Route.idempotent) takes its key. */
export interface IdempotentDeclaration {
  /** Request headers that change what it does (Organization-Id), part of a request's fingerprint with its method, URL and body. */
  headers: readonly string[];
  /**
   * A create that can write its key in its own statement (engine/idempotency/keyed-create.ts):
   * answers a row it kept that way again, as the create answered it (status aside). The handler
   * then takes the key from keyedCreateOf(ctx).
   */
  replay?: (ctx: Context, row: Record<string, unknown>) => void;
}
