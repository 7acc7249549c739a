// Access tokens this process has already verified, by their exact text. A client sends the same
// token with every request until it expires; checking its HMAC signature and decoding it again
// each time is the largest cost of an authenticated request after the database. A token text
// that verified once verifies again until its `exp`, with the same claims (the signature covers
// them), so the claims are kept until then. Only what koa-jwt accepted is kept: a token never
// seen, or one that failed, is verified by koa-jwt every time. Nor is a token issued in the
// future: its refusal (authenticate.ts) holds only while its `iat` is ahead of the clock, and
// kept claims would carry that refusal on until `exp`.
//
// Kept per app (its keys), bounded: past MAX_ENTRIES the oldest goes. A key taken out of use
// would have to clear this; keys change only by a restart (a rotation, keyring.ts), which starts
// with an empty one.

import { issuedInFuture } from './tokens.js';

/** Enough for every client busy within an access token's lifetime on one instance, at well under 10 MB. */
const MAX_ENTRIES = 10_000;

interface Verified {
  claims: object;
  /** When the token expires, in milliseconds: jsonwebtoken refuses it once the clock's whole second reaches `exp`. */
  expiresAtMs: number;
}

export class VerifiedTokens {
  private readonly entries = new Map<string, Verified>();

  constructor(private readonly maxEntries = MAX_ENTRIES) {}

  /** The claims of `token` if it was verified before and has not expired since. */
  get(token: string, nowMs = Date.now()): object | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (nowMs < entry.expiresAtMs) return entry.claims;
    this.entries.delete(token);
    return undefined;
  }

  /**
   * Keeps the claims koa-jwt verified; a token without an expiry, or issued in the future, is
   * never kept (verified each time, then refused: authenticate.ts).
   */
  remember(token: string, claims: unknown, nowMs = Date.now()): void {
    const exp = (claims as { exp?: unknown } | undefined)?.exp;
    if (typeof exp !== 'number' || !Number.isFinite(exp) || issuedInFuture(claims as object, nowMs)) return;
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(token, { claims: Object.freeze(claims as object), expiresAtMs: exp * 1000 });
  }
}

/**
 * The token of an Authorization header exactly as koa-jwt reads it ("Bearer <token>", the scheme
 * in any case, one space): a header koa-jwt would not read never reaches a kept token.
 */
export function bearerTokenOf(header: string): string | undefined {
  const parts = header.trim().split(' ');
  return parts.length === 2 && /^Bearer$/i.test(parts[0]) ? parts[1] : undefined;
}
