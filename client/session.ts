// The signed-in caller's tokens, and the fetch that sends the access token and, when the API
// answers 401 to it, renews the pair once through POST /api/auth/refresh-token and sends the
// request once more. Requests refused while a renewal is under way wait for that one: the
// service spends a refresh token on its first use and treats a second use as theft (it ends the
// whole session), so two renewals with one refresh token must never be sent.

export interface Tokens {
  token: string;
  refresh_token: string;
}

export type Fetch = (request: Request) => Promise<Response>;

/** Sends a refresh token; the new pair, or the status of the answer when the service would not renew it. */
export type Renew = (refreshToken: string) => Promise<Tokens | number>;

export class TokenSession {
  #tokens: Tokens | undefined;
  #renewing: Promise<void> | undefined;

  constructor(
    private readonly renew: Renew,
    tokens?: Tokens,
    /** Told of every new pair (to keep it across restarts, say), and of undefined when the session has ended. */
    private readonly onChange?: (tokens: Tokens | undefined) => void,
  ) {
    this.#tokens = tokens;
  }

  get tokens(): Tokens | undefined {
    return this.#tokens;
  }

  set(tokens: Tokens | undefined): void {
    this.#tokens = tokens;
    this.onChange?.(tokens);
  }

  /**
   * After a 401 to `refused`: the access token to try once more, or undefined when there is
   * none (no session, or the service refused the refresh token: then the session is over).
   */
  async renewed(refused: string): Promise<string | undefined> {
    const current = this.#tokens;
    if (!current) return undefined;
    // Renewed since that request went out: the retry takes the new token, with no renewal of its own.
    if (current.token !== refused) return current.token;
    this.#renewing ??= this.#renew(current.refresh_token).finally(() => (this.#renewing = undefined));
    await this.#renewing;
    return this.#tokens && this.#tokens.token !== refused ? this.#tokens.token : undefined;
  }

  async #renew(refreshToken: string): Promise<void> {
    const answer = await this.renew(refreshToken);
    if (typeof answer !== 'number') return this.set(answer);
    // 401: the refresh token is spent, expired or its session ended; signing in again is the way.
    // Anything else (429, 503) says nothing about the token: it is kept for a later try.
    if (answer === 401) this.set(undefined);
  }
}

/** `send` with the session's access token, renewed and sent once more after a 401. */
export function authorizedFetch(session: TokenSession, send: Fetch): Fetch {
  return async (request) => {
    const token = session.tokens?.token;
    // No session, or a caller that set its own Authorization header: sent as it is.
    if (!token || request.headers.has('Authorization')) return send(request);
    const retry = request.clone(); // a body can be read only once
    request.headers.set('Authorization', `Bearer ${token}`);
    const first = await send(request);
    if (first.status !== 401) return first;
    const renewed = await session.renewed(token);
    if (!renewed) return first;
    await first.body?.cancel();
    retry.headers.set('Authorization', `Bearer ${renewed}`);
    return send(retry);
  };
}
