// The social login routes in the OpenAPI document: public, answering with redirects.
import type { OpenApiPaths } from '../../engine/module.js';
import { SOCIAL_PROVIDERS, type SocialProvider } from '../../engine/config/config.js';
import { errorResponses } from '../../engine/openapi/fragments.js';
import { COOKIE } from './routes.js';

const LABEL: Record<SocialProvider, string> = { google: 'Google', github: 'GitHub', microsoft: 'Microsoft', facebook: 'Facebook' };

/** A redirect, without a body, setting (start) or clearing (callback) the cookie that binds the state to the browser. */
const redirect = (description: string, cookie: string) => ({
  description,
  headers: {
    Location: { description: 'Where the browser goes next', schema: { type: 'string', format: 'uri' } },
    'Set-Cookie': { description: cookie, schema: { type: 'string' } },
  },
});

const queryParameter = (name: string, description: string) => ({ name, in: 'query', required: false, description, schema: { type: 'string' } });

function providerPaths(provider: SocialProvider): OpenApiPaths {
  const label = LABEL[provider];
  return {
    [`/api/auth/${provider}`]: {
      get: {
        tags: ['social login'],
        operationId: `${provider}SignIn`,
        summary: `Start signing in with ${label}`,
        description: [
          `Redirects the browser to ${label}'s authorization page with a signed state (single use, valid 10 minutes,`,
          'bound to this browser by a cookie) and a PKCE S256 challenge. 404 when the provider has no client id and secret configured.',
        ].join(' '),
        security: [],
        responses: {
          '302': redirect(`${label}'s authorization page`, `${COOKIE}=<nonce>: binds the state to this browser (HttpOnly, SameSite=Lax, this provider's callback path, 10 minutes)`),
          ...errorResponses(404, 500, 503),
        },
      },
    },
    [`/api/auth/${provider}/callback`]: {
      get: {
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
        security: [],
        parameters: [
          queryParameter('code', 'The authorization code'),
          queryParameter('state', 'The state sent with the authorization request'),
          queryParameter('error', "The provider's error code, when the user refused or the request failed"),
          queryParameter('error_description', "The provider's explanation of the error"),
        ],
        responses: {
          '302': redirect('The client: its sign-in success page with the tokens, or its sign-in page with ?error=', `Clears ${COOKIE}: the state is spent`),
          ...errorResponses(400, 404, 500, 503),
        },
      },
    },
  };
}

export function socialOpenApi(): OpenApiPaths {
  return Object.assign({}, ...SOCIAL_PROVIDERS.map(providerPaths));
}
