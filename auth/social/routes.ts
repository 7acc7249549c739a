// GET /api/auth/{provider} starts a social login, GET /api/auth/{provider}/callback completes it.
// Failures before the provider is trusted (a bad, expired, foreign or replayed state) are 400s and
// touch no account; failures at the provider send the browser back to the client's sign-in page
// with ?error=<code>, which it can show; neither is ever a 500.
import type { Context } from 'koa';
import * as oauth from 'oauth4webapi';
import { SOCIAL_PROVIDERS, socialProviders, type SocialProvider } from './config.js';
import { badRequest, HttpError } from '../../engine/errors.js';
import type { Engine } from '../../engine/module.js';
import { errorResponses } from '../../engine/openapi/fragments.js';
import type { Route } from '../../engine/route.js';
import { primaryEmployee } from '../accounts.js';
import { authModels } from '../models.js';
import { issueSession } from '../session/issue.js';
import { userForProfile } from './accounts.js';
import { authorizeUrl, exchangeCode, ProviderFailure, providerClient, readProfile, type ProviderClient } from './oauth.js';
import { LABEL, queryParameter, redirectAnswer } from './openapi.js';
import { PROVIDER_RULES } from './providers.js';
import { checkState, codeVerifier, newState, spendState, STATE_SECONDS, stateKey, type StateKey } from './state.js';

/** Binds a state to the browser that started the sign-in, so a callback URL sent to someone else (login CSRF) fails. */
export const COOKIE = 'social_login_state';

const disabled = (provider: SocialProvider) => new HttpError(404, `Sign-in with ${provider} is not enabled`);

/** A provider's error code is passed on to the client only when it looks like one (access_denied). */
const errorCode = (value: unknown) => (typeof value === 'string' && /^[a-z0-9_.-]{1,64}$/i.test(value) ? value : 'provider_error');

function redirect(ctx: Context, url: string) {
  // The success URL carries tokens: never cached, never sent on as a Referer.
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.redirect(url);
  // Koa writes "Redirecting to …" as a body; a redirect here says all in Location (and the document declares no body).
  ctx.body = '';
}

/**
 * One JSON line when the fault is on the server's side of the exchange (a wrong client secret, a
 * provider down), so that an operator sees it; a user who says no at the provider is not news.
 */
function logFailure(engine: Engine, provider: SocialProvider, failure: ProviderFailure) {
  if (engine.config.env === 'test' || !['token_exchange_failed', 'profile_unavailable'].includes(failure.code)) return;
  const cause = failure.cause instanceof Error ? failure.cause.message : undefined;
  console.warn(JSON.stringify({ level: 'warn', time: new Date().toISOString(), msg: 'social sign-in failed', provider, error: failure.code, cause }));
}

function cookiePath(p: ProviderClient) {
  return new URL(p.config.callbackUrl).pathname;
}

async function start(ctx: Context, p: ProviderClient, key: StateKey, provider: SocialProvider) {
  const { state, nonce } = newState(key, provider);
  ctx.cookies.set(COOKIE, nonce, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: cookiePath(p), maxAge: STATE_SECONDS * 1000, overwrite: true });
  redirect(ctx, await authorizeUrl(p, state, codeVerifier(key, nonce)));
}

/** The callback's parameters once its state is ours, unexpired, this browser's and unused; else 400. */
async function checkedCallback(ctx: Context, engine: Engine, p: ProviderClient, key: StateKey, provider: SocialProvider) {
  const state = ctx.query.state;
  const { nonce, expiresAt } = checkState(key, provider, state);
  if (ctx.cookies.get(COOKIE) !== nonce) throw badRequest('state was not issued to this browser: start the sign-in again');
  await spendState(engine.db, provider, nonce, expiresAt);
  ctx.cookies.set(COOKIE, null, { path: cookiePath(p) });
  const query = new URLSearchParams(ctx.querystring);
  // RFC 9207's iss guards against mix-up between providers sharing one callback; here each provider
  // has its own callback, and Microsoft's issuer differs per account, so it is not compared.
  query.delete('iss');
  try {
    return { nonce, parameters: oauth.validateAuthResponse(p.as, p.client, query, state as string) };
  } catch (err) {
    // The provider's own answer (the user said no, the app is misconfigured): back to the client.
    if (err instanceof oauth.AuthorizationResponseError) throw new ProviderFailure(errorCode(err.error), err);
    throw badRequest('the callback parameters are malformed');
  }
}

async function callback(ctx: Context, engine: Engine, p: ProviderClient, key: StateKey, provider: SocialProvider) {
  const { nonce, parameters } = await checkedCallback(ctx, engine, p, key, provider);
  if (!parameters.get('code')) throw badRequest('code should not be empty');
  const { accessToken, idClaims } = await exchangeCode(p, parameters, codeVerifier(key, nonce));
  const profile = await readProfile(p, accessToken, idClaims);
  const models = authModels(engine);
  const user = await userForProfile(engine.db, engine.broadcast, models, provider, profile);
  const role = await models.user.query().join('role', 'role.id', 'user.roleId').select('role.name').where('user.id', user.id).first();
  const employee = await primaryEmployee(models, user.id, user.tenantId);
  const session = await issueSession(engine, { id: user.id, tenantId: user.tenantId, role: role!.name, employeeId: employee?.id, organizationId: employee?.organizationId });
  const query = new URLSearchParams({ jwt: session.token, refresh_token: session.refresh_token, userId: user.id });
  redirect(ctx, `${engine.config.clientBaseUrl}/#/sign-in/success?${query}`);
}

export function socialRoutes(engine: Engine): Route[] {
  const key = stateKey(engine.config.jwt.secret);
  const providers = socialProviders(engine.config.vars, engine.config.apiBaseUrl);
  return SOCIAL_PROVIDERS.flatMap((provider): Route[] => {
    const config = providers[provider];
    const p = config && providerClient(config, PROVIDER_RULES[provider]);
    const label = LABEL[provider];
    // Starting a social login and its callback are how a signed-out user gets a token.
    return [
      {
        method: 'GET',
        path: `/api/auth/${provider}`,
        access: 'public',
        async handler(ctx) {
          if (!p) throw disabled(provider);
          await start(ctx, p, key, provider);
        },
        docs: {
          tags: ['social login'],
          operationId: `${provider}SignIn`,
          summary: `Start signing in with ${label}`,
          description: [
            `Redirects the browser to ${label}'s authorization page with a signed state (single use, valid 10 minutes,`,
            'bound to this browser by a cookie) and a PKCE S256 challenge. 404 when the provider has no client id and secret configured.',
          ].join(' '),
          responses: {
            '302': redirectAnswer(`${label}'s authorization page`, `${COOKIE}=<nonce>: binds the state to this browser (HttpOnly, SameSite=Lax, this provider's callback path, 10 minutes)`),
            ...errorResponses(404, 500, 503),
          },
        },
      },
      {
        method: 'GET',
        path: `/api/auth/${provider}/callback`,
        access: 'public',
        async handler(ctx) {
          if (!p) throw disabled(provider);
          try {
            await callback(ctx, engine, p, key, provider);
          } catch (err) {
            if (!(err instanceof ProviderFailure)) throw err;
            logFailure(engine, provider, err);
            redirect(ctx, `${engine.config.clientBaseUrl}/#/sign-in?${new URLSearchParams({ error: err.code })}`);
          }
        },
        docs: {
          tags: ['social login'],
          operationId: `${provider}SignInCallback`,
          summary: `Complete signing in with ${label}`,
          description: [
            `Where ${label} sends the browser back. Checks the state, exchanges the code, reads the profile, then signs in the user`,
            `linked to this ${label} account, else the user with the same email if ${label} has verified it (the account is linked),`,
            'else creates a user with a new tenant as its SUPER_ADMIN. Redirects to CLIENT_BASE_URL/#/sign-in/success?jwt=…&refresh_token=…&userId=….',
            'When the provider refuses or fails, redirects to CLIENT_BASE_URL/#/sign-in?error=<code>: the provider\'s own code (access_denied, …),',
            'token_exchange_failed, profile_unavailable, email_not_verified (no linked account and no verified email) or account_inactive.',
            'A missing, forged, expired, replayed or other provider\'s state, or a callback in another browser, is a 400 and changes nothing.',
          ].join(' '),
          parameters: [
            queryParameter('code', 'The authorization code'),
            queryParameter('state', 'The state sent with the authorization request'),
            queryParameter('error', "The provider's error code, when the user refused or the request failed"),
            queryParameter('error_description', "The provider's explanation of the error"),
          ],
          responses: {
            '302': redirectAnswer('The client: its sign-in success page with the tokens, or its sign-in page with ?error=', `Clears ${COOKIE}: the state is spent`),
            ...errorResponses(400, 404, 500, 503),
          },
        },
      },
    ];
  });
}
