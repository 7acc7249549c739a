// A request may name a tenant beside its token, as Ever Gauzy clients do: a `Tenant-Id` header or
// a `tenantId` query parameter. The token decides the tenant; naming the same one is redundant and
// ignored, naming any other (another tenant's id, or a value that is no tenant id at all) is a
// 403. Checked once per request, wherever a token is taken, so that every route
// (generated, hand-written, auth) answers alike; the query parameter is then taken out of the
// query string, so that no route's parameter check has to know of it.
import type { Context } from 'koa';
import { forbidden } from '../errors.js';

export const TENANT_HEADER = 'Tenant-Id';
export const TENANT_PARAMETER = 'tenantId';

const sameTenant = (value: string, tenantId: string) => value.toLowerCase() === tenantId.toLowerCase();

/** The query string may spell the parameter out: tenantId, tenantId[]…, or percent-encoded (tenant%49d). */
const mayNameTenant = (raw: string) => raw.includes(TENANT_PARAMETER) || raw.includes('%');

/**
 * Whether a query parameter name is tenantId as the query parser (qs) reads it: plain, with
 * brackets (tenantId[], tenantId[0]) or wrapped in a leading pair ([tenantId], which qs reads as
 * tenantId).
 */
function namesTenant(name: string): boolean {
  const bare = name.replace(/^\[([^[\]]*)\]/, '$1');
  return bare === TENANT_PARAMETER || bare.startsWith(`${TENANT_PARAMETER}[`);
}

/** One `name=value` piece of a query string, decoded as the query parser decodes it ('+' is a space). */
function decodedPair(piece: string): [string, string] {
  const [pair] = new URLSearchParams(piece);
  return pair ?? ['', ''];
}

/**
 * 403 when the Tenant-Id header or a tenantId query parameter names another tenant than
 * `tenantId` (the token's); the query parameters naming it are removed from ctx.querystring.
 */
export function checkNamedTenant(ctx: Context, tenantId: string): void {
  const header = ctx.get(TENANT_HEADER);
  if (header && !sameTenant(header, tenantId)) throw forbidden();
  const raw = ctx.querystring;
  if (!raw || !mayNameTenant(raw)) return;
  const pieces = raw.split('&');
  const kept = pieces.filter((piece) => {
    const [name, value] = decodedPair(piece);
    if (!namesTenant(name)) return true;
    if (!sameTenant(value, tenantId)) throw forbidden();
    return false;
  });
  if (kept.length !== pieces.length) ctx.querystring = kept.join('&');
}
