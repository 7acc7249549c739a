// Exchanging a refresh token for a new pair. Each refresh token is good for one exchange: the
// presented one is spent and its successor joins the same session. Presenting a spent token again
// means two parties hold it (a thief, or a client that sent it twice): the whole session is
// revoked, so whichever of them holds the successor must sign in again.
import { unauthorized } from '../../engine/errors.js';
import type { Engine } from '../../engine/module.js';
import { primaryEmployee } from '../accounts.js';
import { authModels, type AuthModels } from '../models.js';
import { signRefreshToken, tokenHash, tokenKeys, verifyRefreshToken } from '../tokens.js';
import { accessToken, type Account, type TokenPair } from './issue.js';
import { revokeSession } from './revoke.js';
import { deleteExpiredTokens, exchangeToken, findToken } from './store.js';

/**
 * The claims of the new access token, read now: a role or employee changed since login takes
 * effect. The refresh token names the user; no caller exists yet to scope the read by.
 */
async function currentAccount(models: AuthModels, userId: string): Promise<Account | undefined> {
  const user = await models.user.query().select('user.id', 'user.tenantId', 'role.name as role')
    .join('role', 'role.id', 'user.roleId').where({ 'user.id': userId, 'user.isActive': true }).first();
  if (!user) return undefined;
  const employee = await primaryEmployee(models, user.id, user.tenantId);
  return { id: user.id, tenantId: user.tenantId, role: user.role, employeeId: employee?.id, organizationId: employee?.organizationId };
}

export async function refreshSession(engine: Engine, presented: string): Promise<TokenPair> {
  const { db } = engine;
  const keys = tokenKeys(engine.config);
  const claims = verifyRefreshToken(keys, presented);
  const next = signRefreshToken(keys, claims.sub, claims.tenantId);
  const hash = tokenHash(presented);
  const spent = await exchangeToken(db, hash, { tokenHash: tokenHash(next.token), expiresAt: next.expiresAt });
  if (!spent) {
    const known = await findToken(db, hash);
    if (known?.status === 'spent') await revokeSession(engine.broadcast, db, known.userId, known.sessionId);
    throw unauthorized();
  }
  const account = await currentAccount(authModels(engine), spent.userId);
  if (!account) {
    // Deactivated between the exchange and now: the successor was never handed out.
    await revokeSession(engine.broadcast, db, spent.userId, spent.sessionId);
    throw unauthorized();
  }
  await deleteExpiredTokens(db, account.id);
  return { token: accessToken(engine, account, spent.sessionId), refresh_token: next.token };
}
