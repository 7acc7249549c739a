// The authorization-code flow with oauth4webapi: the authorize URL, the code exchange (client
// secret in the body, PKCE verifier) and the profile read with the access token.
import * as oauth from 'oauth4webapi';
import type { SocialProviderConfig } from './config.js';
import type { GithubEmail, Profile, ProviderRules } from './providers.js';

/** A provider that does not answer in time fails the sign-in instead of holding the request open. */
const PROVIDER_TIMEOUT_MS = 10_000;

/** Why a sign-in failed at the provider: the code that goes to the client in ?error=. */
export class ProviderFailure extends Error {
  constructor(readonly code: string, cause?: unknown) {
    super(code, { cause });
  }
}

export interface ProviderClient {
  config: SocialProviderConfig;
  rules: ProviderRules;
  as: oauth.AuthorizationServer;
  client: oauth.Client;
  options: { [oauth.allowInsecureRequests]?: boolean };
}

/** Plain http is refused by oauth4webapi, rightly; only loopback (a local stub or proxy) may use it. */
function isLoopbackHttp(...urls: string[]): boolean {
  return urls.every((raw) => {
    const url = new URL(raw);
    return url.protocol === 'https:' || ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  }) && urls.some((raw) => raw.startsWith('http:'));
}

export function providerClient(config: SocialProviderConfig, rules: ProviderRules): ProviderClient {
  return {
    config,
    rules,
    // No discovery: the endpoints come from configuration. The issuer is only an identifier here,
    // since the identity is read from the profile endpoint, not from an ID token.
    as: { issuer: new URL(config.authorizeUrl).origin, authorization_endpoint: config.authorizeUrl, token_endpoint: config.tokenUrl },
    client: { client_id: config.clientId },
    options: isLoopbackHttp(config.tokenUrl, config.profileUrl) ? { [oauth.allowInsecureRequests]: true } : {},
  };
}

export async function authorizeUrl(p: ProviderClient, state: string, verifier: string): Promise<string> {
  const url = new URL(p.config.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', p.config.clientId);
  url.searchParams.set('redirect_uri', p.config.callbackUrl);
  url.searchParams.set('scope', p.rules.scope);
  url.searchParams.set('state', state);
  // S256 for every provider: Google and Microsoft require it to be honoured, GitHub and Facebook
  // accept it, and a server that does not know the parameters ignores them (RFC 7636 §5).
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return url.href;
}

/** Claims of the ID token that came with the access token, when it was issued to this client. */
export type IdClaims = Record<string, unknown>;

/**
 * The ID token arrives straight from the token endpoint over TLS, which OpenID Connect accepts in
 * place of its signature; only its audience is checked (it must be this client). Its issuer is
 * not: Microsoft's differs per account tenant.
 */
function idTokenClaims(idToken: unknown, clientId: string): IdClaims | undefined {
  if (typeof idToken !== 'string') return undefined;
  try {
    const claims = JSON.parse(Buffer.from(idToken.split('.')[1] ?? '', 'base64url').toString('utf8'));
    const audience = Array.isArray(claims?.aud) ? claims.aud : [claims?.aud];
    return audience.includes(clientId) ? claims : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The token answer with its ID token (Google, Microsoft) set aside before oauth4webapi reads it:
 * oauth4webapi would check the issuer, which fails for Microsoft's multi-tenant endpoint. The
 * identity comes from the profile endpoint; the ID token only adds claims the profile lacks.
 */
function settingIdTokenAside(aside: { idToken?: unknown }): typeof fetch {
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.ok || !(response.headers.get('content-type') ?? '').includes('json')) return response;
    const body = await response.json().catch(() => undefined);
    if (body && typeof body === 'object') {
      aside.idToken = (body as Record<string, unknown>).id_token;
      delete (body as Record<string, unknown>).id_token;
    }
    return new Response(JSON.stringify(body ?? null), { status: response.status, headers: { 'content-type': 'application/json' } });
  };
}

/** The provider's access token for the code of this callback (whose state the caller has checked). */
export async function exchangeCode(p: ProviderClient, callback: URLSearchParams, verifier: string): Promise<{ accessToken: string; idClaims?: IdClaims }> {
  const aside: { idToken?: unknown } = {};
  try {
    const response = await oauth.authorizationCodeGrantRequest(p.as, p.client, oauth.ClientSecretPost(p.config.clientSecret), callback, p.config.callbackUrl, verifier, {
      ...p.options,
      [oauth.customFetch]: settingIdTokenAside(aside),
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
    });
    const tokens = await oauth.processAuthorizationCodeResponse(p.as, p.client, response);
    return { accessToken: tokens.access_token, idClaims: idTokenClaims(aside.idToken, p.config.clientId) };
  } catch (err) {
    throw new ProviderFailure('token_exchange_failed', err);
  }
}

async function getJson(p: ProviderClient, accessToken: string, url: string): Promise<unknown> {
  const headers = new Headers({ accept: 'application/json' });
  const response = await oauth.protectedResourceRequest(accessToken, 'GET', new URL(url), headers, null, {
    ...p.options,
    signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
  });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  return response.json();
}

/** GitHub's emails endpoint sits under its profile endpoint: https://api.github.com/user/emails (also on GitHub Enterprise's /api/v3). */
export const emailsUrl = (profileUrl: string) => {
  const url = new URL(profileUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/emails`;
  return url.href;
};

export async function readProfile(p: ProviderClient, accessToken: string, idClaims?: IdClaims): Promise<Profile> {
  let profile: Profile | undefined;
  try {
    const raw = await getJson(p, accessToken, p.config.profileUrl);
    // Without the emails (scope refused, endpoint down) the account still signs in by its identity;
    // it just has no verified email to be matched or created by.
    const emails = p.rules.readsEmails ? await getJson(p, accessToken, emailsUrl(p.config.profileUrl)).catch(() => undefined) : undefined;
    if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
      profile = p.rules.toProfile(raw as Record<string, unknown>, { emails: Array.isArray(emails) ? (emails as GithubEmail[]) : undefined, idClaims });
    }
  } catch (err) {
    throw new ProviderFailure('profile_unavailable', err);
  }
  if (!profile) throw new ProviderFailure('profile_unavailable');
  return profile;
}
