// Every failure leaves the service in the envelope of errors.ts. Handlers throw HttpError;
// anything else (driver errors, body-parser errors, bugs) is mapped here, and nothing a client
// sees ever carries SQL, a stack or driver text.
import { STATUS_CODES } from 'node:http';
import type { Context, Next } from 'koa';
import { mapDatabaseError } from '../db/errors.js';
import { badRequest, errorBody, HttpError, unauthorized } from '../errors.js';
import { isStorageFull, storageFull } from '../storage-full.js';

/**
 * Errors thrown with a status by libraries we use (koa-jwt, koa, http-errors): their message
 * only when the library marks it safe to show. Body-parser errors are worded in http/body.ts.
 */
function fromLibrary(err: any): HttpError | undefined {
  const status = typeof err?.status === 'number' ? err.status : undefined;
  if (!status || status < 400 || status >= 500) return undefined;
  if (status === 401) return unauthorized();
  const message = err.expose && typeof err.message === 'string' ? err.message : STATUS_CODES[status] ?? 'Error';
  return status === 400 ? badRequest(message) : new HttpError(status, message);
}

export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  // A file the service writes (an upload) on a full disk: a 503 like the database's own disk_full.
  if (isStorageFull(err)) return storageFull();
  return fromLibrary(err) ?? mapDatabaseError(err) ?? new HttpError(500, 'Internal server error');
}

function answer(ctx: Context, error: HttpError) {
  ctx.status = error.status;
  ctx.set(error.headers);
  ctx.body = errorBody(error.status, error.messages, error.details);
}

/**
 * Maps every error to the envelope. `notFoundHints`: paths no route serves, each with a sentence
 * saying where to go instead, added to their 404.
 */
export function errorMiddleware(log: (err: unknown, ctx: Context, status: number) => void = (err) => console.error(err), notFoundHints = new Map<string, string>()) {
  return async function errors(ctx: Context, next: Next) {
    try {
      await next();
    } catch (err) {
      const http = toHttpError(err);
      if (http.status >= 500) log(err, ctx, http.status);
      return answer(ctx, http);
    }
    if (ctx.status >= 400 && ctx.body == null) {
      // Nothing answered (no route matched: 404, as NestJS words it), or a middleware set only a
      // status (the router's 405 with its Allow header): the client still gets the envelope.
      const hint = ctx.status === 404 ? notFoundHints.get(ctx.path.replace(/(.)\/+$/, '$1')) : undefined;
      const message = ctx.status === 404 ? `Cannot ${ctx.method} ${ctx.path}${hint ? `: ${hint}` : ''}` : STATUS_CODES[ctx.status] ?? 'Error';
      answer(ctx, new HttpError(ctx.status, ctx.status === 400 ? [message] : message));
    }
  };
}
