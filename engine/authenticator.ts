// How the engine learns who is asking: an application injects an Authenticator into createApp
// (app.ts); the engine knows no token format, session store or sign-in route. Its two steps sit
// around the rate limits: the limits key a request by whom it names, and a request with bad
// credentials must still count against its address before it is refused.
import type { Middleware, Context } from 'koa';

export interface Authenticator {
  /** Before the rate limits: works out whom the credentials name (once per request), refusing nothing. */
  identify: Middleware;
  /** Whom the rate limits count a request against; undefined counts it by client address. */
  holder(ctx: Context): { userId: string; role: string } | undefined;
  /**
   * After the rate limits: a request without a valid caller is refused (401) unless `isPublic`
   * says it is served without one (its route's declared access); a valid one gets its Caller in
   * ctx.state.caller (http/context.ts, callerOf).
   */
  authenticate(isPublic: (ctx: Context) => boolean): Middleware;
}
