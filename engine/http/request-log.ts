// One log line per answered request: id, method, path, status, duration and the caller. Never the
// query string or a body: they carry codes, tokens and passwords (a social callback's ?code=, a
// reset link's token), and the redaction of log.ts works by key, not inside a URL.
import { Stream } from 'node:stream';
import type { Context, Next } from 'koa';
import type { Logger } from '../log.js';
import { requestIdOf } from './request-id.js';

export function requestLog(logger: Logger) {
  return async function logged(ctx: Context, next: Next) {
    if (!logger.isLevelEnabled('info')) return next();
    const started = performance.now();
    const write = (extra: Record<string, unknown> = {}) => {
      const caller = ctx.state.caller as { userId?: string; tenantId?: string } | undefined;
      logger.info(
        {
          reqId: requestIdOf(ctx),
          method: ctx.method,
          path: ctx.path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          ...(caller ? { userId: caller.userId, tenantId: caller.tenantId } : {}),
          ...extra,
        },
        'request',
      );
    };
    try {
      await next();
    } catch (err) {
      write();
      throw err;
    }
    // A streamed answer (an export) is written after this returns: its line waits for the end,
    // and says so when the stream broke off before it (the status was sent long before).
    if (ctx.body instanceof Stream) ctx.res.once('close', () => write(ctx.res.writableFinished ? {} : { incomplete: true }));
    else write();
  };
}
