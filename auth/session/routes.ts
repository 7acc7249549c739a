// POST /api/auth/refresh-token, GET /api/auth/check, GET /api/auth/authenticated, and signing out
// (POST /api/auth/logout, GET for Ever Gauzy clients), each declared once with its documentation.
import type { Context } from 'koa';
import { HttpError, unauthorized } from '../../engine/errors.js';
import { callerOf } from '../../engine/http/context.js';
import type { Engine } from '../../engine/module.js';
import { errorResponses, jsonResponse } from '../../engine/openapi/fragments.js';
import type { Route } from '../../engine/route.js';
import { validBody } from '../../engine/route.js';
import { OK } from '../answers.js';
import { optionalCaller, sessionOf } from '../authenticate.js';
import { checkAnswer, logoutOperation, tokenPair } from './openapi.js';
import { refreshSession } from './refresh.js';
import { revokeSession } from './revoke.js';

/** A JWT is a few hundred characters; the cap only keeps a hostile body from being hashed whole. */
const refreshSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['refresh_token'],
  properties: { refresh_token: { type: 'string', minLength: 1, maxLength: 4096 } },
};

/** Both spellings of signing out: POST, and the GET Ever Gauzy clients send. */
const LOGOUT_PATH = '/api/auth/logout';

export function sessionRoutes(engine: Engine): Route[] {
  const refresh: Route = {
    method: 'POST',
    path: '/api/auth/refresh-token',
    // The refresh token is the credential: a signed-out client holds no access token.
    access: 'public',
    schemas: { body: refreshSchema },
    async handler(ctx) {
      ctx.body = await refreshSession(engine, validBody<{ refresh_token: string }>(ctx).refresh_token);
    },
    docs: {
      tags: ['auth'],
      operationId: 'refreshToken',
      summary: 'Exchange a refresh token for a new token pair',
      description: [
        'Each refresh token is good for one exchange: the one sent is spent and the answer carries its successor.',
        'An expired, revoked, unknown or forged token, an access token, or a token of an inactive user is a 401.',
        'Sending a token that was already spent is a 401 and ends its whole session: the successor issued for it',
        'is revoked too, so whoever holds it must sign in again, and the access tokens of that session are refused',
        'from then on, as after a password reset or change. The new access token carries the role and employee',
        'of the user as they are now.',
      ].join(' '),
      responses: {
        '200': jsonResponse('A new access token and refresh token', tokenPair),
        ...errorResponses(400, 401, 413, 415, 500, 503),
      },
    },
  };

  const check: Route = {
    method: 'GET',
    path: '/api/auth/check',
    handler(ctx) {
      const caller = callerOf(ctx);
      // The bearer middleware verified the token and left its claims here; a token without exp
      // never gets this far (authenticate.ts).
      const { exp } = ctx.state.jwt as { exp: number };
      const expiresAt = new Date(exp * 1000).toISOString();
      ctx.body = { valid: true, userId: caller.userId, tenantId: caller.tenantId, role: caller.role, expiresAt };
    },
    docs: {
      tags: ['auth'],
      operationId: 'checkToken',
      summary: 'Check the access token',
      description:
        'The claims of the bearer token and when it expires, with the role its user has now (a role changed since the token was signed ' +
        'takes effect at once); any token the API would refuse is a 401, among them one whose session has ended (sign-out, password ' +
        'reset or change, a spent refresh token sent again), on every instance at once.',
      responses: {
        '200': jsonResponse('The token is valid', checkAnswer),
        ...errorResponses(401, 403, 500, 503),
      },
    },
  };

  // Ends the session of the access token presented: its refresh and access tokens are refused at
  // once, here and on every other process (live.ts: each is told before this answers). The
  // caller's other sessions (other devices) stay signed in. No body is read; one sent anyway is
  // parsed as any JSON body is (the parser runs before the route).
  const logout = async (ctx: Context) => {
    const caller = callerOf(ctx);
    const { userId } = caller;
    const sessionId = sessionOf(caller);
    // Authentication admits only tokens naming a live session: a caller without one is not ours.
    if (!sessionId) throw unauthorized();
    // HEAD (served by the GET route) asks what a GET would answer; it is a safe method and ends nothing.
    if (ctx.method !== 'HEAD') await revokeSession(engine.broadcast, engine.db, userId, sessionId);
    ctx.body = OK;
  };

  // Public, for clients that only ask "am I signed in?": any token the bearer middleware would
  // refuse (or none) is `false`, never a 401. A valid token with a Tenant-Id header naming another
  // tenant stays the 403 it is wherever a token is taken.
  const authenticated: Route = {
    method: 'GET',
    path: '/api/auth/authenticated',
    // The token is optional: it is what the answer is about.
    access: 'optional',
    handler(ctx) {
      let signedIn: boolean;
      try {
        signedIn = optionalCaller(ctx) !== undefined;
      } catch (err) {
        if (err instanceof HttpError && err.status === 403) throw err;
        signedIn = false;
      }
      ctx.body = signedIn;
    },
    docs: {
      tags: ['auth'],
      operationId: 'isAuthenticated',
      summary: 'Whether the bearer token (if any) is valid',
      description:
        'true for a token the API would accept; false without a token or with any other one (never a 401). ' +
        'A valid token with a Tenant-Id header naming another tenant is a 403, as everywhere a token is taken.',
      responses: {
        '200': jsonResponse('true or false', { type: 'boolean' }),
        ...errorResponses(403, 500, 503),
      },
    },
  };

  return [
    refresh,
    check,
    { method: 'POST', path: LOGOUT_PATH, handler: logout, docs: logoutOperation('logout', 'post') },
    { method: 'GET', path: LOGOUT_PATH, handler: logout, docs: { ...logoutOperation('logoutGet', 'get'), summary: 'Sign out (the GET Ever Gauzy clients send)' } },
    authenticated,
  ];
}
