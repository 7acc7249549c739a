// Access and refresh tokens: HS256 JWTs signed with KeyObjects (a string secret makes
// jsonwebtoken try to parse a public key on every call: ~50× slower per verify), each naming its
// key in the header (`kid`) so that secrets can be rotated (keyring.ts).
import { createHash, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Config } from '../engine/config/config.js';
import { unauthorized } from '../engine/errors.js';
import { keyring, verificationKeysOf, type Keyring } from './keyring.js';

export const ALGORITHM = 'HS256';

export interface AccessClaims {
  sub: string;
  tenantId: string;
  role: string;
  employeeId?: string;
  organizationId?: string;
  /**
   * The session (refresh-token family) this token was issued with: what a password change keeps,
   * and what every request checks is still live. A token without one is refused.
   */
  sid?: string;
  typ: 'access';
}

export interface RefreshClaims {
  sub: string;
  tenantId: string;
  jti: string;
  typ: 'refresh';
}

export interface TokenKeys {
  access: Keyring;
  refresh: Keyring;
  accessSeconds: number;
  refreshSeconds: number;
}

const keysOfConfig = new WeakMap<Config, TokenKeys>();

/** The keys of a configuration's secrets, made once per configuration (every part of an app shares them). */
export function tokenKeys(config: Config): TokenKeys {
  let keys = keysOfConfig.get(config);
  if (!keys) {
    keys = {
      access: keyring(config.jwt.secret, config.jwt.previousSecret),
      refresh: keyring(config.jwt.refreshSecret, config.jwt.previousRefreshSecret),
      accessSeconds: config.jwt.expiresIn,
      refreshSeconds: config.jwt.refreshExpiresIn,
    };
    keysOfConfig.set(config, keys);
  }
  return keys;
}

export function signAccessToken(keys: TokenKeys, claims: Omit<AccessClaims, 'typ'>): string {
  const { sub, ...rest } = claims;
  const { kid, key } = keys.access.current;
  return jwt.sign({ ...rest, typ: 'access' }, key, { algorithm: ALGORITHM, keyid: kid, subject: sub, expiresIn: keys.accessSeconds });
}

/** A refresh token carries a jti, so that no two tokens (and their stored hashes) are ever the same. */
export function signRefreshToken(keys: TokenKeys, userId: string, tenantId: string): { token: string; jti: string; expiresAt: Date } {
  const jti = randomUUID();
  const { kid, key } = keys.refresh.current;
  const token = jwt.sign({ tenantId, typ: 'refresh' }, key, {
    algorithm: ALGORITHM,
    keyid: kid,
    subject: userId,
    jwtid: jti,
    expiresIn: keys.refreshSeconds,
  });
  const { exp } = jwt.decode(token) as { exp: number };
  return { token, jti, expiresAt: new Date(exp * 1000) };
}

/**
 * How far a token's `iat` may lie ahead of this clock, in seconds: the instances that issue and
 * verify tokens keep their own clocks, a few seconds apart at worst when synchronised, and a
 * token issued by one a little ahead must not be refused by another (jose's and jsonwebtoken's
 * `clockTolerance` serve the same purpose). Large enough for that, too small to matter to a forger.
 */
export const CLOCK_SKEW_SECONDS = 5;

/**
 * Whether verified claims have a lifetime this service could have issued: a numeric `exp` and
 * `iat`, `iat` not in the future (give or take CLOCK_SKEW_SECONDS), and `exp - iat` no longer
 * than the configured lifetime. jsonwebtoken refuses a token whose exp has passed but accepts
 * one without any, one issued in the future, and one valid for centuries; every token we sign has
 * `iat` and `exp = iat + lifetime`, so any other is forged with a leaked secret or comes from
 * another issuer, and must not outlive the secret's rotation. The lifetime is the one configured
 * now: after a restart with a shorter one, tokens issued for longer are refused (docs/authentication.md).
 */
export function withinLifetime(claims: object, lifetimeSeconds: number, nowMs = Date.now()): boolean {
  const { exp, iat } = claims as { exp?: unknown; iat?: unknown };
  if (typeof exp !== 'number' || !Number.isFinite(exp) || typeof iat !== 'number' || !Number.isFinite(iat)) return false;
  return !issuedInFuture(claims, nowMs) && exp - iat <= lifetimeSeconds;
}

/** Whether `iat` lies further ahead of the clock than CLOCK_SKEW_SECONDS: a refusal that time undoes. */
export function issuedInFuture(claims: object, nowMs = Date.now()): boolean {
  const { iat } = claims as { iat?: unknown };
  return typeof iat === 'number' && iat > nowMs / 1000 + CLOCK_SKEW_SECONDS;
}

/**
 * The claims of a refresh token signed by us with HS256 and unexpired; anything else (alg none,
 * another algorithm or key, an access token, missing claims, no exp or iat, a lifetime longer than
 * JWT_REFRESH_EXPIRES_IN or an iat in the future: withinLifetime) is the same 401.
 */
export function verifyRefreshToken(keys: TokenKeys, token: string): RefreshClaims {
  let claims: Partial<RefreshClaims> | undefined;
  for (const key of verificationKeysOf(keys.refresh, token)) {
    try {
      claims = jwt.verify(token, key, { algorithms: [ALGORITHM] }) as Partial<RefreshClaims>;
      break;
    } catch {
      // the next key, if the token names none (issued before key ids)
    }
  }
  if (!claims || !withinLifetime(claims, keys.refreshSeconds) || claims.typ !== 'refresh' || typeof claims.sub !== 'string' || typeof claims.tenantId !== 'string' || typeof claims.jti !== 'string') {
    throw unauthorized();
  }
  return claims as RefreshClaims;
}

/** What the database keeps of a refresh token: its SHA-256, so the table alone hands out nothing usable. */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
