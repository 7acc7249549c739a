// The typed client of the service: openapi-fetch over the types `npm run client` generates from
// the OpenAPI document (schema.d.ts), so a path, parameter or body the document does not have is
// a compile error, and answers come typed by status. It sends the signed-in caller's access token
// and renews it once on a 401 (session.ts).
import createClient, { type Client } from 'openapi-fetch';
import { bracketQuery } from './query.js';
import type { components, paths } from './schema.js';
import type { StrictClient } from './strict.js';
import { authorizedFetch, TokenSession, type Fetch, type Tokens } from './session.js';

export type { components, paths, Tokens };
export type Schemas = components['schemas'];

export interface ApiClientOptions {
  /** Where the service answers, e.g. http://localhost:3000 (the paths carry /api). */
  baseUrl: string;
  /** Tokens of an earlier sign-in, if any. */
  tokens?: Tokens;
  /** Told of each new token pair, and of undefined when the session has ended. */
  onTokens?: (tokens: Tokens | undefined) => void;
  /** The transport; the global fetch by default. */
  fetch?: Fetch;
}

/** The same object: only its methods' signatures are narrowed to the strict ones (strict.ts). */
const strict = (client: Client<paths>) => client as unknown as StrictClient & Pick<Client<paths>, 'use' | 'eject'>;

/** POST /api/auth/login; on success the client sends the new token from then on. */
function signInThrough(bare: StrictClient, session: TokenSession) {
  return async (email: string, password: string) => {
    const answer = await bare.POST('/api/auth/login', { body: { email, password } });
    if (answer.data) session.set({ token: answer.data.token, refresh_token: answer.data.refresh_token });
    return answer;
  };
}

export type ApiClient = ReturnType<typeof strict> & { session: TokenSession; signIn: ReturnType<typeof signInThrough> };

export function createApiClient(options: ApiClientOptions): ApiClient {
  const send: Fetch = options.fetch ?? ((request) => fetch(request));
  // Sign-in and renewal go out without the session's token, and a 401 to them renews nothing.
  const bare = strict(createClient<paths>({ baseUrl: options.baseUrl, fetch: send, querySerializer: bracketQuery }));
  const session = new TokenSession(
    async (refreshToken) => {
      const { data, response } = await bare.POST('/api/auth/refresh-token', { body: { refresh_token: refreshToken } });
      return data ?? response.status;
    },
    options.tokens,
    options.onTokens,
  );
  const api = createClient<paths>({ baseUrl: options.baseUrl, fetch: authorizedFetch(session, send), querySerializer: bracketQuery });
  return Object.assign(strict(api), { session, signIn: signInThrough(bare, session) });
}
