// One log line per answered request: id, method, path, status, duration and the caller. Never the
// query string or a body: they carry codes, tokens and passwords (a social callback's ?code=, a
// reset link's token), and the redaction of log/log.ts works by key, not inside a URL; a path that
// carries a secret (a share link's token) is masked as its route declares. Its fields are
// fixed and flat, so it is written by log/log.ts's flat-line writer: a line on every request is then
// a small share of the request's cost (and no closure is made per request for it).
import { Stream } from 'node:stream';
import type { Context, Next } from 'koa';
import { flatLineWriter, type Logger } from '../log/log.js';
import { routeMatchOf } from '../route.js';
import { requestIdOf } from './request-id.js';

export function requestLog(logger: Logger) {
  const writeLine = flatLineWriter(logger, 'request');
  const logged = (ctx: Context) => {
    const mask = routeMatchOf(ctx)?.logPath;
    return mask ? mask(ctx.path) : ctx.path;
  };
  const write = (ctx: Context, started: number, incomplete?: true) => {
    const caller = ctx.state.caller as { userId?: string; tenantId?: string } | undefined;
    writeLine({
      reqId: requestIdOf(ctx),
      method: ctx.method,
      path: logged(ctx),
      status: ctx.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
      userId: caller?.userId,
      tenantId: caller?.tenantId,
      incomplete,
    });
  };
  return async function logged(ctx: Context, next: Next) {
    if (!logger.isLevelEnabled('info')) return next();
    const started = performance.now();
    try {
      await next();
    } catch (err) {
      write(ctx, started);
      throw err;
    }
    // A streamed answer (an export) is written after this returns: its line waits for the end,
    // and says so when the stream broke off before it (the status was sent long before).
    if (ctx.body instanceof Stream) ctx.res.once('close', () => write(ctx, started, ctx.res.writableFinished ? undefined : true));
    else write(ctx, started);
  };
}
