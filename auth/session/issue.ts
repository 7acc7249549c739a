// STUB (the session part of auth replaces it): the token pair a successful login (or social
// login) hands out.
import type { Engine } from '../../engine/module.js';
import { signAccessToken, signRefreshToken } from '../tokens.js';

export interface Account {
  id: string;
  tenantId: string;
  role: string;
  employeeId?: string;
  organizationId?: string;
}

export async function issueSession(engine: Engine, account: Account): Promise<{ token: string; refresh_token: string }> {
  const token = signAccessToken(engine.keys, {
    sub: account.id,
    tenantId: account.tenantId,
    role: account.role,
    employeeId: account.employeeId,
    organizationId: account.organizationId,
  });
  return { token, refresh_token: signRefreshToken(engine.keys, account.id, account.tenantId).token };
}
