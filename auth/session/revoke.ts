// Ending sessions: a password reset ends all of a user's, a password change all but the caller's.
import type { Knex } from 'knex';
import { TABLE } from './store.js';

/**
 * Revokes every live refresh token of the user, except those of the session keepSessionId (the
 * caller's `sid`). Returns how many were revoked. Access tokens already issued stay valid until
 * they expire (JWT_EXPIRES_IN): they are not looked up on each request.
 */
export async function revokeUserSessions(db: Knex, userId: string, keepSessionId?: string): Promise<number> {
  const live = db(TABLE).where({ userId, status: 'active' });
  if (keepSessionId) live.whereNot({ sessionId: keepSessionId });
  return live.update({ status: 'revoked', updatedAt: db.fn.now() });
}
