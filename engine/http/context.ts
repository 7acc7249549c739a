// Small request helpers shared by generated routes and hand-written modules.
import type { Context } from 'koa';
import qs from 'qs';
import { grants, type Caller } from '../caller.js';
import { badRequest, forbidden, unauthorized } from '../errors.js';
import { isPlainObject } from '../objects.js';

/** The caller the authentication middleware attached; a route reached without one is a 401. */
export function callerOf(ctx: Context): Caller {
  const caller = ctx.state.caller as Caller | undefined;
  if (!caller) throw unauthorized();
  return caller;
}

/** The caller, if its role grants the permission; 403 otherwise. */
export function authorize(ctx: Context, permission: string): Caller {
  const caller = callerOf(ctx);
  if (!grants(caller, permission)) throw forbidden();
  return caller;
}

/** At most this many values of one query parameter (a=1&a=2, a[]=1, a[0]=1): the OpenAPI document's maxItems of every list-valued parameter. */
export const MAX_QUERY_VALUES = 100;

/** depth: the deepest the query language goes is where[or][0][relation][field][in][] (6). */
const QUERY_LIMITS = { depth: 6, arrayLimit: MAX_QUERY_VALUES, parameterLimit: 200 };

/** The key a query parameter without a name (`?=x`) is kept under: qs would drop it silently. */
export const NAMELESS_PARAMETER = '';

/** A parameter's name as a message shows it; a nameless one is said to be so. */
export const parameterLabel = (name: string) => (name === NAMELESS_PARAMETER ? 'a parameter without a name' : name);

/** `=x` first, or `&=x` anywhere: a parameter whose name is empty. */
const hasNameless = (raw: string) => raw.startsWith('=') || raw.includes('&=');

/**
 * Bracket syntax (where[user][id]=…, relations[]=…, order[name]=ASC) with tight limits, so a
 * hostile query string cannot build deep or huge objects. Going past a limit is a 400: qs would
 * otherwise drop the extra parameters silently, and a dropped filter widens a list.
 */
export function parseQueryString(raw: string): Record<string, unknown> {
  // Most requests have no query string: the same object qs would give, without running it.
  if (raw === '') return Object.create(null);
  // qs drops __proto__ keys whatever its options say; a dropped filter would widen a list. A
  // name can only spell it out plainly or percent-encoded.
  if (raw.includes('__proto__') || raw.includes('%')) {
    for (const name of new URLSearchParams(raw).keys()) {
      if (name.includes('__proto__')) throw badRequest('query parameter names must not contain __proto__');
    }
  }
  try {
    const parsed = qs.parse(raw, {
      ...QUERY_LIMITS,
      strictDepth: true,
      throwOnLimitExceeded: true,
      // Objects without a prototype: constructor or toString are plain names, which the
      // whitelists then refuse like any other unknown name.
      allowPrototypes: true,
      plainObjects: true,
    }) as Record<string, unknown>;
    // Kept, so that each route answers it as any parameter it does not know (a 400 where those
    // are refused) rather than never seeing it.
    if (hasNameless(raw)) parsed[NAMELESS_PARAMETER] = '';
    return parsed;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    const message = /depth/i.test(err.message)
      ? `query parameters must not be nested deeper than ${QUERY_LIMITS.depth} levels`
      : /array/i.test(err.message)
        ? `a query parameter must not have more than ${QUERY_LIMITS.arrayLimit} values`
        : `the query string must not have more than ${QUERY_LIMITS.parameterLimit} parameters`;
    throw badRequest(message);
  }
}

/** A search body may come plain or wrapped as {findInput: {...}} (the Ever Gauzy form). */
export function searchInput(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (!isPlainObject(body)) throw badRequest('body must be an object');
  const keys = Object.keys(body);
  if (keys.length === 1 && keys[0] === 'findInput') {
    if (!isPlainObject(body.findInput)) throw badRequest('findInput must be an object');
    return body.findInput;
  }
  return body;
}

/** Query parameters of a single-record read: relations only. */
export function readParameters(ctx: Context, supported: readonly string[] = ['relations']): Record<string, unknown> {
  const query = parseQueryString(ctx.querystring);
  const unknown = Object.keys(query).filter((k) => !supported.includes(k));
  if (unknown.length) throw badRequest(unknown.map((k) => `${parameterLabel(k)} is not a supported parameter when reading one record; supported: ${supported.join(', ')}`));
  return query;
}
