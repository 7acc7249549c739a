// POST /api/auth/refresh-token, GET /api/auth/check, GET /api/auth/authenticated, and signing out
// (POST /api/auth/logout, GET for Ever Gauzy clients).
import type Router from '@koa/router';
import type { Context } from 'koa';
import { HttpError, unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { compileValidator } from '../../engine/validation.js';
import { OK } from '../answers.js';
import { optionalCaller, sessionOf } from '../authenticate.js';
import { refreshSession } from './refresh.js';
import { revokeSession } from './revoke.js';

/** A JWT is a few hundred characters; the cap only keeps a hostile body from being hashed whole. */
export const refreshSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['refresh_token'],
  properties: { refresh_token: { type: 'string', minLength: 1, maxLength: 4096 } },
};

/** Both spellings of signing out: POST, and the GET Ever Gauzy clients send. */
export const LOGOUT_PATH = '/api/auth/logout';

export function registerSessionRoutes(router: Router, engine: Engine) {
  const validateRefresh = compileValidator<{ refresh_token: string }>(refreshSchema);

  router.post('/api/auth/refresh-token', async (ctx) => {
    const body = validateRefresh(ctx.request.body ?? {});
    ctx.body = await refreshSession(engine, body.refresh_token);
  });

  router.get('/api/auth/check', (ctx) => {
    const caller = callerOf(ctx);
    // The bearer middleware verified the token and left its claims here; a token without exp
    // never gets this far (authenticate.ts).
    const { exp } = ctx.state.jwt as { exp: number };
    const expiresAt = new Date(exp * 1000).toISOString();
    ctx.body = { valid: true, userId: caller.userId, tenantId: caller.tenantId, role: caller.role, expiresAt };
  });

  // Ends the session of the access token presented: its refresh tokens are refused at once, its
  // access tokens at once here and within SESSION_CHECK_TTL_MS on other instances (live.ts). The
  // caller's other sessions (other devices) stay signed in. No body is read; one sent anyway is
  // parsed as any JSON body is (the parser runs before the route).
  const logout = async (ctx: Context) => {
    const caller = callerOf(ctx);
    const { userId } = caller;
    const sessionId = sessionOf(caller);
    // Authentication admits only tokens naming a live session: a caller without one is not ours.
    if (!sessionId) throw unauthorized();
    // HEAD (served by the GET route) asks what a GET would answer; it is a safe method and ends nothing.
    if (ctx.method !== 'HEAD') await revokeSession(engine.db, userId, sessionId);
    ctx.body = OK;
  };
  router.post(LOGOUT_PATH, logout);
  router.get(LOGOUT_PATH, logout);

  // Public, for clients that only ask "am I signed in?": any token the bearer middleware would
  // refuse (or none) is `false`, never a 401. A valid token with a Tenant-Id header naming another
  // tenant stays the 403 it is wherever a token is taken.
  router.get('/api/auth/authenticated', (ctx) => {
    let signedIn: boolean;
    try {
      signedIn = optionalCaller(ctx) !== undefined;
    } catch (err) {
      if (err instanceof HttpError && err.status === 403) throw err;
      signedIn = false;
    }
    ctx.body = signedIn;
  });
}
