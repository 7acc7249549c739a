// A social-login provider on loopback for tests: authorize, token and profile endpoints for each
// provider under /{provider}/..., strict like the real ones (client credentials, single-use codes
// bound to their redirect_uri, PKCE S256), with switches to make the token or profile step fail.
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type StubProvider = 'google' | 'github' | 'microsoft' | 'facebook';

/** What the profile endpoint answers for the signed-in account (and GitHub's /user/emails). */
export interface StubAccount {
  profile: Record<string, unknown>;
  emails?: Array<{ email: string; primary: boolean; verified: boolean }>;
  /** Claims of the ID token the token endpoint returns (Google, Microsoft); without them, one no client may trust. */
  idToken?: Record<string, unknown>;
}

interface IssuedCode {
  provider: StubProvider;
  redirectUri: string;
  challenge?: string;
  account: StubAccount;
}

export interface OAuthProviderStub {
  url: string;
  /** The settings that point the app at this stub for the provider (GOOGLE_CLIENT_ID, GOOGLE_TOKEN_URL, ...). */
  env(provider: StubProvider): Record<string, string>;
  clientId(provider: StubProvider): string;
  /** Every authorize query received, in order. */
  authorizeRequests: Array<{ provider: StubProvider; query: URLSearchParams }>;
  /** Every token request body received, in order. */
  tokenRequests: Array<{ provider: StubProvider; body: URLSearchParams }>;
  /** The account the next authorize request of this provider signs in as. */
  signInAs(provider: StubProvider, account: StubAccount): void;
  /** Make the token endpoint answer this (status, JSON body) until reset; undefined resets. */
  failToken(answer?: { status: number; body: unknown }): void;
  /** Make the profile endpoint answer this status until reset; undefined resets. */
  failProfile(status?: number): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (data += chunk));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** An ID token with these claims. Unsigned: the app reads it only as it came, from the token endpoint. */
function idToken(claims: Record<string, unknown>): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.`;
}

/** Issued to another client, by another issuer, expired: nothing in it may count. */
const FOREIGN_ID_TOKEN = { iss: 'https://elsewhere.example', aud: 'someone-else', sub: 'x', email_verified: true, xms_edov: true, exp: 1 };

export async function startOAuthProvider(): Promise<OAuthProviderStub> {
  const secrets = new Map<StubProvider, string>();
  const nextAccount = new Map<StubProvider, StubAccount>();
  const codes = new Map<string, IssuedCode>();
  const tokens = new Map<string, { provider: StubProvider; account: StubAccount }>();
  const authorizeRequests: OAuthProviderStub['authorizeRequests'] = [];
  const tokenRequests: OAuthProviderStub['tokenRequests'] = [];
  let tokenFailure: { status: number; body: unknown } | undefined;
  let profileFailure: number | undefined;

  const clientId = (provider: StubProvider) => `${provider}-client-id`;
  const secretOf = (provider: StubProvider) => {
    if (!secrets.has(provider)) secrets.set(provider, `${provider}-secret-${randomBytes(6).toString('hex')}`);
    return secrets.get(provider)!;
  };

  function authorize(provider: StubProvider, url: URL, res: ServerResponse) {
    authorizeRequests.push({ provider, query: url.searchParams });
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri');
    const account = nextAccount.get(provider);
    if (q.get('client_id') !== clientId(provider) || !redirectUri || q.get('response_type') !== 'code' || !account) {
      return json(res, 400, { error: 'invalid_request' });
    }
    if (q.get('code_challenge') && q.get('code_challenge_method') !== 'S256') return json(res, 400, { error: 'invalid_request' });
    const code = randomBytes(12).toString('hex');
    codes.set(code, { provider, redirectUri, challenge: q.get('code_challenge') ?? undefined, account });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    if (q.get('state')) back.searchParams.set('state', q.get('state')!);
    // RFC 9207: Google names itself in the redirect; Microsoft's issuer names the account's own tenant.
    if (provider === 'google') back.searchParams.set('iss', `${url.origin}`);
    if (provider === 'microsoft') back.searchParams.set('iss', 'https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0');
    res.writeHead(302, { location: back.href });
    res.end();
  }

  async function token(provider: StubProvider, req: IncomingMessage, res: ServerResponse) {
    const body = new URLSearchParams(await readBody(req));
    tokenRequests.push({ provider, body });
    if (tokenFailure) return json(res, tokenFailure.status, tokenFailure.body);
    if (body.get('client_id') !== clientId(provider) || body.get('client_secret') !== secretOf(provider)) {
      return json(res, 401, { error: 'invalid_client' });
    }
    const code = codes.get(body.get('code') ?? '');
    codes.delete(body.get('code') ?? '');
    const verifier = body.get('code_verifier');
    const pkceOk = !code?.challenge || (verifier && createHash('sha256').update(verifier).digest('base64url') === code.challenge);
    if (body.get('grant_type') !== 'authorization_code' || !code || code.provider !== provider || code.redirectUri !== body.get('redirect_uri') || !pkceOk) {
      return json(res, 400, { error: 'invalid_grant' });
    }
    const accessToken = randomBytes(16).toString('hex');
    tokens.set(accessToken, { provider, account: code.account });
    const openId = provider === 'google' || provider === 'microsoft';
    const id = openId ? { id_token: idToken(code.account.idToken ?? FOREIGN_ID_TOKEN) } : {};
    json(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, ...id });
  }

  function profile(provider: StubProvider, req: IncomingMessage, res: ServerResponse, emails: boolean) {
    const bearer = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const grant = bearer ? tokens.get(bearer) : undefined;
    if (!grant || grant.provider !== provider) return json(res, 401, { error: 'invalid_token' });
    if (profileFailure) return json(res, profileFailure, { error: 'server_error' });
    if (emails) return grant.account.emails ? json(res, 200, grant.account.emails) : json(res, 404, { message: 'Not Found' });
    json(res, 200, grant.account.profile);
  }

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const [, provider, ...rest] = url.pathname.split('/') as [string, StubProvider, ...string[]];
    const step = rest.join('/');
    if (!['google', 'github', 'microsoft', 'facebook'].includes(provider)) return json(res, 404, {});
    if (step === 'authorize' && req.method === 'GET') return authorize(provider, url, res);
    if (step === 'token' && req.method === 'POST') return void token(provider, req, res).catch(() => json(res, 500, {}));
    if (step === 'user' && req.method === 'GET') return profile(provider, req, res, false);
    if (step === 'user/emails' && req.method === 'GET') return profile(provider, req, res, true);
    json(res, 404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    clientId,
    env(provider) {
      const prefix = provider.toUpperCase();
      return {
        [`${prefix}_CLIENT_ID`]: clientId(provider),
        [`${prefix}_CLIENT_SECRET`]: secretOf(provider),
        [`${prefix}_AUTHORIZE_URL`]: `${url}/${provider}/authorize`,
        [`${prefix}_TOKEN_URL`]: `${url}/${provider}/token`,
        // /user for every provider, so GitHub's emails endpoint is /user/emails as on api.github.com.
        [`${prefix}_PROFILE_URL`]: `${url}/${provider}/user`,
      };
    },
    authorizeRequests,
    tokenRequests,
    signInAs: (provider, account) => nextAccount.set(provider, account),
    failToken: (answer) => (tokenFailure = answer),
    failProfile: (status) => (profileFailure = status),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // The app's fetch keeps connections alive; they would hold close() open.
        server.closeAllConnections();
      }),
  };
}
