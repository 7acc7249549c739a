// X-Request-Id: the id a proxy or client gave the request, when it is a plain token, else a new
// UUID. It is echoed on every answer (errors included) and names the request in every log line
// about it, so a client's report and the server's log meet on one value.
import { randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** Letters, digits and a few separators, up to 128: nothing that could forge or split a log line or header. */
const ACCEPTED_ID = /^[A-Za-z0-9._:@-]{1,128}$/;

/** The request's id (set by requestId() before anything else runs). */
export const requestIdOf = (ctx: Context): string | undefined => ctx.state.requestId;

export function requestId() {
  return function requestIdentified(ctx: Context, next: Next) {
    const given = ctx.get(REQUEST_ID_HEADER);
    const id = ACCEPTED_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = id;
    ctx.set(REQUEST_ID_HEADER, id);
    return next();
  };
}
