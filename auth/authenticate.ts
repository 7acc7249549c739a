// Bearer verification with koa-jwt on every route but the public ones, then the Caller that
// handlers use. Only HS256 access tokens pass: alg "none", other algorithms, refresh tokens and
// tokens of an unknown role are 401; a Tenant-Id header naming another tenant is 403.
import type { Context, Next } from 'koa';
import koaJwt from 'koa-jwt';
import jwt from 'jsonwebtoken';
import type { Caller } from '../engine/caller.js';
import { forbidden, unauthorized } from '../engine/errors.js';
import type { RoleTable } from './roles.js';
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

function callerFrom(claims: unknown, roles: RoleTable): Caller {
  const c = claims as Partial<AccessClaims> | undefined;
  if (!c || c.typ !== 'access' || typeof c.sub !== 'string' || typeof c.tenantId !== 'string' || typeof c.role !== 'string') {
    throw unauthorized();
  }
  const permissions = roles.grants.get(c.role);
  if (!permissions) throw unauthorized();
  return {
    userId: c.sub,
    tenantId: c.tenantId,
    role: c.role,
    employeeId: c.employeeId,
    organizationId: c.organizationId,
    sessionId: typeof c.sid === 'string' ? c.sid : undefined,
    permissions,
  };
}

function checkTenantHeader(ctx: Context, caller: Caller) {
  const header = ctx.get('tenant-id');
  if (header && header.toLowerCase() !== caller.tenantId) throw forbidden();
}

export function authenticate(keys: TokenKeys, roles: RoleTable) {
  const verifyJwt = koaJwt({ secret: keys.access as unknown as string, algorithms: [ALGORITHM], key: 'jwt' }).unless({ path: PUBLIC_PATHS });
  return async function authenticated(ctx: Context, next: Next) {
    await verifyJwt(ctx, async () => {
      if (ctx.state.jwt) {
        const caller = callerFrom(ctx.state.jwt, roles);
        checkTenantHeader(ctx, caller);
        ctx.state.caller = caller;
      }
      await next();
    });
  };
}

/** For public routes that act differently for a signed-in caller (registration). */
export function optionalCaller(ctx: Context, keys: TokenKeys, roles: RoleTable): Caller | undefined {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) throw unauthorized();
  let claims: unknown;
  try {
    claims = jwt.verify(match[1], keys.access, { algorithms: [ALGORITHM] });
  } catch {
    throw unauthorized();
  }
  const caller = callerFrom(claims, roles);
  checkTenantHeader(ctx, caller);
  return caller;
}
