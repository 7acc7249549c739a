// Bearer verification with koa-jwt on every route but the public ones, then the Caller that
// handlers use. Only HS256 access tokens pass: alg "none", other algorithms, refresh tokens,
// tokens of an unknown role and tokens whose session has ended (or that name none) are 401; a
// Tenant-Id header naming another tenant is 403.
import type { Context, Next } from 'koa';
import koaJwt from 'koa-jwt';
import jwt from 'jsonwebtoken';
import type { Caller } from '../engine/caller.js';
import { forbidden, unauthorized } from '../engine/errors.js';
import type { RoleTable } from './roles.js';
import type { SessionCheck } from './session/live.js';
import { ALGORITHM, type AccessClaims, type TokenKeys } from './tokens.js';

/**
 * Paths served without a token: sign-in and everything a signed-out user needs to get a token back
 * (refresh, password reset, email verification, social login). /api/auth/authenticated answers
 * true/false itself, so it must never be refused here.
 */
export const PUBLIC_PATHS: RegExp[] = [
  /^\/api\/auth\/(login|register|refresh-token|reset-password|request-password|authenticated)\/?$/,
  /^\/api\/auth\/email\/verify\/code\/?$/,
  /^\/api\/email-check\/validate\/?$/,
  /^\/api\/auth\/(google|github|microsoft|facebook)(\/callback)?\/?$/,
  /^\/api\/health\/?$/,
  /^\/(?!api(\/|$))/,
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type LiveCaller = Caller & { sessionId: string };

function callerFrom(claims: unknown, roles: RoleTable): LiveCaller {
  const c = claims as Partial<AccessClaims> | undefined;
  if (!c || c.typ !== 'access' || typeof c.sub !== 'string' || typeof c.tenantId !== 'string' || typeof c.role !== 'string') {
    throw unauthorized();
  }
  // Every token we issue names its session (and its user, a UUID): one that does not cannot be revoked.
  if (typeof c.sid !== 'string' || !UUID.test(c.sid) || !UUID.test(c.sub)) throw unauthorized();
  const permissions = roles.grants.get(c.role);
  if (!permissions) throw unauthorized();
  return {
    userId: c.sub,
    tenantId: c.tenantId,
    role: c.role,
    employeeId: c.employeeId,
    organizationId: c.organizationId,
    sessionId: c.sid,
    permissions,
  };
}

function checkTenantHeader(ctx: Context, caller: Caller) {
  const header = ctx.get('tenant-id');
  if (header && header.toLowerCase() !== caller.tenantId) throw forbidden();
}

/** A password reset or change, a reused refresh token, a social link: its access tokens stop here. */
const isLive = (liveSession: SessionCheck, caller: LiveCaller) => liveSession(caller.sessionId, caller.userId);

/** The verified claims of the request's bearer token; undefined without one; 401 for any other. */
function bearerClaims(ctx: Context, keys: TokenKeys): unknown {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) throw unauthorized();
  try {
    return jwt.verify(match[1], keys.access, { algorithms: [ALGORITHM] });
  } catch {
    throw unauthorized();
  }
}

/**
 * Who a request's access token names when it is valid (signature, expiry, kind, role) and its
 * session live: what rate limits key a caller by, before authentication proper. A revoked
 * session's token (a stolen one, say) counts against its address, never against its user. Never
 * throws: without an answer about the session, the request counts as anonymous.
 */
export function tokenHolder(keys: TokenKeys, roles: RoleTable, liveSession: SessionCheck) {
  return async (ctx: Context): Promise<{ userId: string; role: string } | undefined> => {
    if (!ctx.get('authorization')) return undefined;
    try {
      const caller = callerFrom(bearerClaims(ctx, keys), roles);
      return (await isLive(liveSession, caller)) ? { userId: caller.userId, role: caller.role } : undefined;
    } catch {
      return undefined;
    }
  };
}

/**
 * Public routes read an optional token synchronously (optionalCaller); the session lookup is
 * asynchronous, so it is made here beforehand, and the live session's id left for optionalCaller.
 * A bad token is ignored here: optionalCaller refuses it where a token matters.
 */
async function noteLiveSession(ctx: Context, keys: TokenKeys, roles: RoleTable, liveSession: SessionCheck) {
  let caller: LiveCaller;
  try {
    caller = callerFrom(bearerClaims(ctx, keys), roles);
  } catch {
    return;
  }
  if (await isLive(liveSession, caller)) ctx.state.liveSessionId = caller.sessionId;
}

/** @param liveSession whether a token's session is still live (auth/session/live.ts) */
export function authenticate(keys: TokenKeys, roles: RoleTable, liveSession: SessionCheck) {
  const verifyJwt = koaJwt({ secret: keys.access as unknown as string, algorithms: [ALGORITHM], key: 'jwt' }).unless({ path: PUBLIC_PATHS });
  return async function authenticated(ctx: Context, next: Next) {
    await verifyJwt(ctx, async () => {
      if (ctx.state.jwt) {
        const caller = callerFrom(ctx.state.jwt, roles);
        if (!(await isLive(liveSession, caller))) throw unauthorized();
        checkTenantHeader(ctx, caller);
        ctx.state.caller = caller;
      } else if (ctx.get('authorization')) {
        // koa-jwt let it through without verifying: a public path.
        await noteLiveSession(ctx, keys, roles, liveSession);
      }
      await next();
    });
  };
}

/**
 * For public routes that act differently for a signed-in caller (registration): the caller of a
 * valid token whose session the bearer middleware found live; 401 for any other token.
 */
export function optionalCaller(ctx: Context, keys: TokenKeys, roles: RoleTable): Caller | undefined {
  const claims = bearerClaims(ctx, keys);
  if (claims === undefined) return undefined;
  const caller = callerFrom(claims, roles);
  if (ctx.state.liveSessionId !== caller.sessionId) throw unauthorized();
  checkTenantHeader(ctx, caller);
  return caller;
}
