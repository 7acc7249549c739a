// Access and refresh tokens: HS256 JWTs signed with KeyObjects (a string secret makes
// jsonwebtoken try to parse a public key on every call: ~50× slower per verify).
import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Config } from '../engine/config.js';

export const ALGORITHM = 'HS256';

export interface AccessClaims {
  sub: string;
  tenantId: string;
  role: string;
  employeeId?: string;
  organizationId?: string;
  typ: 'access';
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

/** A refresh token carries a jti so that a later issue can store its hash and spend it once. */
export function signRefreshToken(keys: TokenKeys, userId: string, tenantId: string): { token: string; jti: string } {
  const jti = randomUUID();
  const token = jwt.sign({ tenantId, typ: 'refresh' }, keys.refresh, {
    algorithm: ALGORITHM,
    subject: userId,
    jwtid: jti,
    expiresIn: keys.refreshSeconds,
  });
  return { token, jti };
}
