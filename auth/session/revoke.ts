// Ending sessions: a password reset ends all of a user's, a password change all but the caller's,
// a spent refresh token shown again its own. An ended session's refresh token can no longer be
// exchanged and its access tokens are refused on the next request, on every process (live.ts).
import type { Knex } from 'knex';
import type { Broadcast } from '../../engine/db/broadcast.js';
import { announceChange, SESSION_TABLE } from './live.js';
import { TABLE } from './store.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

/** Whether any session these arguments would end is live. */
async function anyLive(db: Knex, userId: string, only?: string, keep?: string): Promise<boolean> {
  const live = db(SESSION_TABLE).first('id').where({ userId }).whereNull('revokedAt');
  if (only) live.where({ id: only });
  if (keep) live.whereNot({ id: keep });
  return (await live) !== undefined;
}

/**
 * Marks the sessions revoked, then their live refresh tokens. The mark is what counts: an exchange
 * running at this moment may still insert a successor token (this UPDATE cannot see a row being
 * inserted), but that token belongs to a revoked session and is refused wherever it is shown.
 * Returns how many refresh tokens were revoked.
 */
async function endSessions(broadcast: Broadcast, db: Knex, userId: string, only?: string, keep?: string): Promise<number> {
  const { tokens } = await transactionOnceMoreIfUndone(db, async (trx) => {
    // Every process stops trusting what it knows of these sessions before they end; sessions ended
    // already (a spent refresh token shown again and again) need no telling.
    if (await anyLive(trx, userId, only, keep)) await announceChange(broadcast, only ? { sessions: [only] } : { users: [userId] }, trx);
    const sessions = trx(SESSION_TABLE).where({ userId }).whereNull('revokedAt');
    const live = trx(TABLE).where({ userId, status: 'active' });
    if (only) {
      sessions.where({ id: only });
      live.where({ sessionId: only });
    }
    if (keep) {
      sessions.whereNot({ id: keep });
      live.whereNot({ sessionId: keep });
    }
    await sessions.update({ revokedAt: trx.fn.now() });
    return { tokens: await live.update({ status: 'revoked', updatedAt: trx.fn.now() }) };
  });
  return tokens;
}

/** Revokes every session of the user except keepSessionId (the caller's `sid`). */
export function revokeUserSessions(broadcast: Broadcast, db: Knex, userId: string, keepSessionId?: string): Promise<number> {
  return endSessions(broadcast, db, userId, undefined, keepSessionId);
}

/** Revokes one session of the user. */
export function revokeSession(broadcast: Broadcast, db: Knex, userId: string, sessionId: string): Promise<number> {
  return endSessions(broadcast, db, userId, sessionId);
}
