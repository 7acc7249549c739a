// Access and refresh tokens: HS256 JWTs signed with KeyObjects (a string secret makes
// jsonwebtoken try to parse a public key on every call: ~50× slower per verify).
import { createHash, createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Config } from '../engine/config.js';
import { unauthorized } from '../engine/errors.js';

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
  access: KeyObject;
  refresh: KeyObject;
  accessSeconds: number;
  refreshSeconds: number;
}

export function tokenKeys(config: Config): TokenKeys {
  return {
    access: createSecretKey(Buffer.from(config.jwt.secret)),
    refresh: createSecretKey(Buffer.from(config.jwt.refreshSecret)),
    accessSeconds: config.jwt.expiresIn,
    refreshSeconds: config.jwt.refreshExpiresIn,
  };
}

export function signAccessToken(keys: TokenKeys, claims: Omit<AccessClaims, 'typ'>): string {
  const { sub, ...rest } = claims;
  return jwt.sign({ ...rest, typ: 'access' }, keys.access, { algorithm: ALGORITHM, subject: sub, expiresIn: keys.accessSeconds });
}

/** A refresh token carries a jti, so that no two tokens (and their stored hashes) are ever the same. */
export function signRefreshToken(keys: TokenKeys, userId: string, tenantId: string): { token: string; jti: string; expiresAt: Date } {
  const jti = randomUUID();
  const token = jwt.sign({ tenantId, typ: 'refresh' }, keys.refresh, {
    algorithm: ALGORITHM,
    subject: userId,
    jwtid: jti,
    expiresIn: keys.refreshSeconds,
  });
  const { exp } = jwt.decode(token) as { exp: number };
  return { token, jti, expiresAt: new Date(exp * 1000) };
}

/**
 * The claims of a refresh token signed by us with HS256 and unexpired; anything else (alg none,
 * another algorithm or key, an access token, missing claims) is the same 401.
 */
export function verifyRefreshToken(keys: TokenKeys, token: string): RefreshClaims {
  let claims: Partial<RefreshClaims>;
  try {
    claims = jwt.verify(token, keys.refresh, { algorithms: [ALGORITHM] }) as Partial<RefreshClaims>;
  } catch {
    throw unauthorized();
  }
  if (claims?.typ !== 'refresh' || typeof claims.sub !== 'string' || typeof claims.tenantId !== 'string' || typeof claims.jti !== 'string') {
    throw unauthorized();
  }
  return claims as RefreshClaims;
}

/** What the database keeps of a refresh token: its SHA-256, so the table alone hands out nothing usable. */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
