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
 * Whether verified claims carry a numeric `exp`. jsonwebtoken refuses a token whose exp has
 * passed but accepts one without any; every token we sign has one, and a token that never
 * expires (signed with a leaked secret, say) must not outlive the secret's rotation.
 */
export function hasExpiry(claims: object): boolean {
  const { exp } = claims as { exp?: unknown };
  return typeof exp === 'number' && Number.isFinite(exp);
}

/**
 * The claims of a refresh token signed by us with HS256 and unexpired; anything else (alg none,
 * another algorithm or key, an access token, missing claims, no exp) is the same 401.
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
  if (!claims || !hasExpiry(claims) || claims.typ !== 'refresh' || typeof claims.sub !== 'string' || typeof claims.tenantId !== 'string' || typeof claims.jti !== 'string') {
    throw unauthorized();
  }
  return claims as RefreshClaims;
}

/** What the database keeps of a refresh token: its SHA-256, so the table alone hands out nothing usable. */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
