// Bearer verification with koa-jwt, once per request, then the Caller that handlers use; every
// route but the public ones needs one. Only HS256 access tokens pass: alg "none", other
// algorithms, refresh tokens, tokens without an expiry or an issue time, issued in the future or
// for longer than JWT_EXPIRES_IN, tokens of an unknown role and tokens whose session has ended (or
// that name none) are 401; a Tenant-Id header or tenantId query parameter
// naming another tenant is 403 (engine/http/tenant-named.ts).
import type { Context, Middleware, Next } from 'koa';
import koaJwt from 'koa-jwt';
import type { Authenticator } from '../engine/authenticator.js';
import type { Caller, RoleTable } from '../engine/caller.js';
import { unauthorized } from '../engine/errors.js';
import { checkNamedTenant } from '../engine/http/tenant-named.js';
import type { Engine } from '../engine/module.js';
import { sessionCheck, type SessionCheck } from './session/live.js';
import { verificationKeys } from './keyring.js';
import { ALGORITHM, tokenKeys, withinLifetime, type AccessClaims, type TokenKeys } from './tokens.js';
import { bearerTokenOf, VerifiedTokens } from './verified-tokens.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A token's caller: its claims are the employee and organization it names, and its session. */
type LiveCaller = Caller & { claims: { sessionId: string; employeeId?: string; organizationId?: string } };

/** The session of a signed-in caller (every access token names one: see callerFrom). */
export const sessionOf = (caller: Caller): string => caller.claims.sessionId!;

function callerFrom(claims: unknown, roles: RoleTable, lifetimeSeconds: number): LiveCaller {
  const c = claims as Partial<AccessClaims> | undefined;
  if (!c || c.typ !== 'access' || typeof c.sub !== 'string' || typeof c.tenantId !== 'string' || typeof c.role !== 'string') {
    throw unauthorized();
  }
  // Every token we issue names its session (and its user, a UUID): one that does not cannot be revoked.
  if (typeof c.sid !== 'string' || !UUID.test(c.sid) || !UUID.test(c.sub)) throw unauthorized();
  // And it has the lifetime we issue: an exp no further than JWT_EXPIRES_IN past an iat not in the future (tokens.ts).
  if (!withinLifetime(c, lifetimeSeconds)) throw unauthorized();
  const permissions = roles.grants.get(c.role);
  if (!permissions) throw unauthorized();
  return {
    userId: c.sub,
    tenantId: c.tenantId,
    role: c.role,
    permissions,
    claims: { employeeId: c.employeeId, organizationId: c.organizationId, sessionId: c.sid },
  };
}

/**
 * What the bearer step found in the Authorization header, for the rate limiter and for
 * authentication to share: the token is verified and its session looked up once per request.
 */
interface Bearer {
  /** The caller of a valid access token of a known role, naming its session; none for any other token. */
  caller?: LiveCaller;
  /** Whether its session is live (a password reset or change, a reused refresh token, a social link end it). */
  live: boolean;
  /** Why the session could not be looked up; thrown where the answer matters. */
  lookupError?: unknown;
}

const BEARER = 'bearer';
/** Where koa-jwt puts the text of the token it verified. */
const TOKEN = 'bearerToken';
const bearerOf = (ctx: Context) => ctx.state[BEARER] as Bearer | undefined;

/**
 * The caller named by verified claims, worked out once per claims object: a token's claims are
 * kept (verified-tokens.ts) and come back as the same object, so its next requests skip this.
 * Undefined for claims that name no caller this service accepts.
 */
function callerCache(roles: RoleTable, lifetimeSeconds: number): (claims: unknown) => LiveCaller | undefined {
  const callers = new WeakMap<object, LiveCaller | null>();
  return (claims) => {
    if (typeof claims !== 'object' || claims === null) return undefined;
    let caller = callers.get(claims);
    if (caller === undefined) {
      try {
        caller = callerFrom(claims, roles, lifetimeSeconds);
      } catch {
        caller = null;
      }
      callers.set(claims, caller);
    }
    return caller ?? undefined;
  };
}

/**
 * The caller as its session stands now: a role changed since the token was issued is the role it
 * acts with (the token's claim is what it was then); a role this service does not know ends it.
 */
async function lookUp(caller: LiveCaller | undefined, liveSession: SessionCheck, roles: RoleTable): Promise<Bearer> {
  if (!caller) return { live: false };
  try {
    const { live, role } = await liveSession(caller.claims.sessionId, caller.userId);
    if (!live || role === undefined || role === caller.role) return { caller, live };
    const permissions = roles.grants.get(role);
    return permissions ? { caller: { ...caller, role, permissions }, live } : { caller, live: false };
  } catch (lookupError) {
    return { caller, live: false, lookupError };
  }
}

/**
 * Verifies the bearer token with koa-jwt on every path (its claims in ctx.state.jwt) without
 * refusing anything: the rate limiter, which runs next, keys a caller by it, and authentication
 * refuses later where a token is required. koa-jwt reads tokens from the Authorization header
 * only, so a request without one has nothing to verify; a token koa-jwt verified before (and
 * still unexpired) is not verified again (verified-tokens.ts).
 */
export function bearerToken(keys: TokenKeys, roles: RoleTable, liveSession: SessionCheck): Middleware {
  // The key a token's header names (keyring.ts); none for an unknown kid, which koa-jwt then refuses.
  const secret = (header: { kid?: unknown }) => {
    const found = verificationKeys(keys.access, header);
    return found.length > 1 ? found : found[0];
  };
  const verifyJwt = koaJwt({ secret: secret as unknown as string, algorithms: [ALGORITHM], key: 'jwt', tokenKey: TOKEN, passthrough: true });
  const verified = new VerifiedTokens();
  const callerOf = callerCache(roles, keys.accessSeconds);
  const withBearer = async (ctx: Context, next: Next) => {
    ctx.state[BEARER] = await lookUp(callerOf(ctx.state.jwt), liveSession, roles);
    return next();
  };
  return function bearer(ctx, next) {
    const header = ctx.headers.authorization;
    if (!header) return next();
    const token = bearerTokenOf(header);
    const claims = token === undefined ? undefined : verified.get(token);
    if (claims) {
      ctx.state.jwt = claims;
      return withBearer(ctx, next);
    }
    return verifyJwt(ctx, () => {
      if (ctx.state.jwt && ctx.state[TOKEN]) verified.remember(ctx.state[TOKEN], ctx.state.jwt);
      return withBearer(ctx, next);
    });
  };
}

/**
 * Who a request's access token names when it is valid (signature, expiry, kind, role) and its
 * session live: what rate limits key a caller by. A revoked session's token (a stolen one, say)
 * counts against its address, never against its user; so does a request whose session could
 * not be looked up.
 */
export function tokenHolder(ctx: Context): { userId: string; role: string } | undefined {
  const found = bearerOf(ctx);
  return found?.caller && found.live ? { userId: found.caller.userId, role: found.caller.role } : undefined;
}

/** Every route but the public ones needs a valid access token of a live session (bearerToken ran before). */
export function authenticate(isPublic: (ctx: Context) => boolean): Middleware {
  return function authenticated(ctx, next) {
    const found = bearerOf(ctx);
    if (found?.lookupError) throw found.lookupError;
    if (isPublic(ctx)) return next();
    if (!found?.caller || !found.live) throw unauthorized();
    checkNamedTenant(ctx, found.caller.tenantId);
    ctx.state.caller = found.caller;
    return next();
  };
}

/**
 * For public routes that act differently for a signed-in caller (registration): the caller of a
 * valid token whose session is live; 401 for any other token.
 */
export function optionalCaller(ctx: Context): Caller | undefined {
  if (!ctx.headers.authorization) return undefined;
  const found = bearerOf(ctx);
  if (!found?.caller || !found.live) throw unauthorized();
  checkNamedTenant(ctx, found.caller.tenantId);
  return found.caller;
}

/** Bearer access tokens of live sessions: how this application's callers authenticate (engine/authenticator.ts). */
export function tokenAuthenticator(engine: Engine): Authenticator {
  const liveSession = sessionCheck(engine.db, engine.config.sessionCheckTtlMs, engine.broadcast, engine.config.databaseTimeoutMs);
  return { identify: bearerToken(tokenKeys(engine.config), engine.roles, liveSession), holder: tokenHolder, authenticate };
}
