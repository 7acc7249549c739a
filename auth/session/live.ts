// Is the session of an access token still live? Asked on every protected request, so it is one
// primary-key lookup, and its answer is kept in this process for a few seconds (SESSION_CHECK_TTL_MS).
// A revocation made through this process forgets the answers about the sessions it ended at once;
// another instance of the service notices when its own answer expires, within the TTL.
import type { Knex } from 'knex';

export const SESSION_TABLE = 'user_session';

/** Enough for every session busy within a TTL on one instance; past it the oldest answer goes. */
const MAX_ENTRIES = 10_000;

/**
 * One cache for the whole process, keyed by session id (a random UUID, so apps of one process
 * never collide): revocation only knows the database handle, not the app that asked.
 */
const answers = new Map<string, { live: boolean; at: number }>();
/** Bumped by every revocation: a lookup that was under way meanwhile may have read the old state. */
let revocations = 0;

export type SessionCheck = (sessionId: string, userId: string) => Promise<boolean>;

/** Forgets what this process knows of these sessions (they were just revoked). */
export function forgetSessions(sessionIds: readonly string[]) {
  revocations += 1;
  for (const id of sessionIds) answers.delete(id);
}

function remember(sessionId: string, live: boolean) {
  answers.delete(sessionId);
  if (answers.size >= MAX_ENTRIES) answers.delete(answers.keys().next().value as string);
  answers.set(sessionId, { live, at: Date.now() });
}

/** A session is live while its row exists and is not revoked; ttlMs 0 asks the database every time. */
export function sessionCheck(db: Knex, ttlMs: number): SessionCheck {
  return async (sessionId, userId) => {
    if (ttlMs > 0) {
      const known = answers.get(sessionId);
      if (known && Date.now() - known.at < ttlMs) return known.live;
    }
    const seen = revocations;
    const row = await db(SESSION_TABLE).select('revokedAt').where({ id: sessionId, userId }).first();
    const live = row !== undefined && row.revokedAt === null;
    // Not kept if a revocation happened while the database was being read.
    if (ttlMs > 0 && seen === revocations) remember(sessionId, live);
    return live;
  };
}

