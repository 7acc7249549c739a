// Ending sessions: a password reset ends all of a user's, a password change all but the caller's,
// a spent refresh token shown again its own. An ended session's refresh token can no longer be
// exchanged and its access tokens are refused on the next request (see live.ts for how soon on
// other instances).
import type { Knex } from 'knex';
import { forgetSessions, SESSION_TABLE } from './live.js';
import { TABLE } from './store.js';
import { transactionOnceMoreIfUndone } from '../../engine/db/undone.js';

/**
 * Marks the sessions revoked, then their live refresh tokens. The mark is what counts: an exchange
 * running at this moment may still insert a successor token (this UPDATE cannot see a row being
 * inserted), but that token belongs to a revoked session and is refused wherever it is shown.
 * Returns how many refresh tokens were revoked.
 */
async function endSessions(db: Knex, userId: string, only?: string, keep?: string): Promise<number> {
  const { ended, tokens } = await transactionOnceMoreIfUndone(db, async (trx) => {
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
    const rows: Array<{ id: string }> = await sessions.update({ revokedAt: trx.fn.now() }).returning('id');
    return { ended: rows.map((r) => r.id), tokens: await live.update({ status: 'revoked', updatedAt: trx.fn.now() }) };
  });
  forgetSessions(ended);
  // Inside a caller's transaction, a lookup may read the still-uncommitted-live row until it
  // commits: forget once more then.
  if (db.isTransaction) {
    const again = () => forgetSessions(ended);
    (db as Knex.Transaction).executionPromise.then(again, again);
  }
  return tokens;
}

/** Revokes every session of the user except keepSessionId (the caller's `sid`). */
export function revokeUserSessions(db: Knex, userId: string, keepSessionId?: string): Promise<number> {
  return endSessions(db, userId, undefined, keepSessionId);
}

/** Revokes one session of the user. */
export function revokeSession(db: Knex, userId: string, sessionId: string): Promise<number> {
  return endSessions(db, userId, sessionId);
}
