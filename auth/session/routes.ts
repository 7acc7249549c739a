// POST /api/auth/refresh-token, GET /api/auth/check and GET /api/auth/authenticated.
import type Router from '@koa/router';
import { HttpError } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { compileValidator } from '../../engine/validation.js';
import { optionalCaller } from '../authenticate.js';
import { refreshSession } from './refresh.js';

/** A JWT is a few hundred characters; the cap only keeps a hostile body from being hashed whole. */
export const refreshSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['refresh_token'],
  properties: { refresh_token: { type: 'string', minLength: 1, maxLength: 4096 } },
};

export function registerSessionRoutes(router: Router, engine: Engine) {
  const validateRefresh = compileValidator<{ refresh_token: string }>(refreshSchema);

  router.post('/api/auth/refresh-token', async (ctx) => {
    const body = validateRefresh(ctx.request.body ?? {});
    ctx.body = await refreshSession(engine, body.refresh_token);
  });

  router.get('/api/auth/check', (ctx) => {
    const caller = callerOf(ctx);
    // The bearer middleware verified the token and left its claims here. Our tokens always have
    // an exp; one signed elsewhere with the secret might not, and gets null rather than a 500.
    const { exp } = ctx.state.jwt as { exp?: unknown };
    const expiresAt = typeof exp === 'number' && Number.isFinite(exp) ? new Date(exp * 1000).toISOString() : null;
    ctx.body = { valid: true, userId: caller.userId, tenantId: caller.tenantId, role: caller.role, expiresAt };
  });

  // Public, for clients that only ask "am I signed in?": any token the bearer middleware would
  // refuse (or none) is `false`, never a 401. A valid token with a Tenant-Id header naming another
  // tenant stays the 403 it is wherever a token is taken.
  router.get('/api/auth/authenticated', (ctx) => {
    let signedIn: boolean;
    try {
      signedIn = optionalCaller(ctx, engine.keys, engine.roles) !== undefined;
    } catch (err) {
      if (err instanceof HttpError && err.status === 403) throw err;
      signedIn = false;
    }
    ctx.body = signedIn;
  });
}
