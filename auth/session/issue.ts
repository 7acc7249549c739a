// The token pair of a new sign-in (login, social login): the refresh token starts a session, whose
// id the access token carries as `sid`.
import type { Engine } from '../../engine/module.js';
import { signAccessToken, signRefreshToken, tokenHash, tokenKeys } from '../tokens.js';
import { deleteExpiredTokens, storeFirstToken } from './store.js';

export interface Account {
  id: string;
  tenantId: string;
  role: string;
  employeeId?: string;
  organizationId?: string;
}

export interface TokenPair {
  token: string;
  refresh_token: string;
}

/** The access token of an account in a session. */
export function accessToken(engine: Engine, account: Account, sessionId: string): string {
  return signAccessToken(tokenKeys(engine.config), {
    sub: account.id,
    tenantId: account.tenantId,
    role: account.role,
    employeeId: account.employeeId,
    organizationId: account.organizationId,
    sid: sessionId,
  });
}

export async function issueSession(engine: Engine, account: Account): Promise<TokenPair> {
  const refresh = signRefreshToken(tokenKeys(engine.config), account.id, account.tenantId);
  await deleteExpiredTokens(engine.db, account.id);
  const { sessionId } = await storeFirstToken(engine.db, {
    userId: account.id,
    tenantId: account.tenantId,
    tokenHash: tokenHash(refresh.token),
    expiresAt: refresh.expiresAt,
  });
  return { token: accessToken(engine, account, sessionId), refresh_token: refresh.token };
}
