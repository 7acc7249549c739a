// Is the session of an access token still live, and what is its user's role now? Asked on every
// protected request, so it is one lookup by primary key, and its answer is kept in the process for
// SESSION_CHECK_TTL_MS. Kept only while the process hears every other process (the database's
// broadcast, engine/db/broadcast.ts): whatever ends a session or changes a user's role first tells
// every process (announceChange), each of which drops what it kept of those sessions and asks the
// database again until the change has long committed; the announcing request goes on once all
// have confirmed. A process that cannot hear the others keeps nothing and asks every time.
import type { Knex } from 'knex';
import type { Broadcast } from '../../engine/db/broadcast.js';

export const SESSION_TABLE = 'user_session';

/** The broadcast topic of announced changes. */
const TOPIC = 'sessions';

/** Enough for every session busy within a TTL on one instance; past it the oldest answer goes. */
const MAX_ENTRIES = 10_000;

/**
 * How long an announced change keeps its sessions from being kept: longer than what follows the
 * announcement in the transaction that makes the change can take (at most three statements, each
 * bounded by DATABASE_TIMEOUT_MS). After it, answers read since the change committed are kept
 * again. A process that starts listening while such a transaction is open keeps no live answer
 * for as long: its change may have been announced before this process could hear it.
 */
export const unkeptForMs = (databaseTimeoutMs: number) => 3 * databaseTimeoutMs;

/** At most this many ids in one announcement heard (anyone may NOTIFY: what is heard is checked). */
const MAX_IDS = 100;
const ids = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string' && id.length <= 64).slice(0, MAX_IDS) : [];

/** Sessions ended, or the users whose sessions are ended or whose role changes. */
export interface SessionChange {
  sessions?: string[];
  users?: string[];
}

export interface SessionState {
  live: boolean;
  /** The user's role as stored now (what the caller acts as: a role change takes effect at once). */
  role?: string;
}

interface Kept extends SessionState {
  userId: string;
  at: number;
}

export type SessionCheck = (sessionId: string, userId: string) => Promise<SessionState>;

const NOT_LIVE: SessionState = { live: false };

/** The liveness answers of one app, and the changes announced to it that keep some from being kept. */
class LiveSessions {
  private readonly kept = new Map<string, Kept>();
  private readonly unkeptSessions = new Map<string, number>();
  private readonly unkeptUsers = new Map<string, number>();
  /** Bumped by every change heard: a lookup that was under way meanwhile may have read the old state. */
  private changes = 0;
  /** No live answer is kept before this time (see unkeptForMs). */
  private keepLiveFrom = 0;

  constructor(private readonly db: Knex, private readonly ttlMs: number, private readonly broadcast: Broadcast, private readonly unkeptMs: number) {
    if (ttlMs <= 0) return;
    broadcast.subscribe(TOPIC, (message) => this.heard(message));
    // Deaf, or hearing again after being deaf: what was kept may have missed a change.
    broadcast.onListening((listening, pending) => {
      this.forgetAll();
      // A change told before this process listened may not have committed: its sessions are unknown.
      this.keepLiveFrom = listening && pending ? Date.now() + unkeptMs : 0;
    });
  }

  check: SessionCheck = async (sessionId, userId) => {
    const keeping = this.ttlMs > 0 && this.broadcast.listening;
    if (keeping) {
      const known = this.kept.get(sessionId);
      if (known && known.userId === userId && Date.now() - known.at < this.ttlMs) return known;
    }
    const seen = this.changes;
    const row = await this.db(`${SESSION_TABLE} as s`)
      .join('user as u', 'u.id', 's.userId')
      .join('role as r', 'r.id', 'u.roleId')
      .select('s.revokedAt', 'u.isActive', 'r.name as role')
      .where({ 's.id': sessionId, 's.userId': userId })
      .first();
    const state: SessionState = row && row.revokedAt === null && row.isActive ? { live: true, role: row.role } : NOT_LIVE;
    // An ended session stays ended: that answer is always safe to keep. A live one is kept only if
    // no change was heard while reading it and none announced for it is recent.
    if (keeping && this.broadcast.listening && (!state.live || (seen === this.changes && Date.now() >= this.keepLiveFrom && !this.unkept(sessionId, userId)))) {
      this.keep(sessionId, userId, state);
    }
    return state;
  };

  private unkept(sessionId: string, userId: string): boolean {
    const now = Date.now();
    const until = Math.max(this.unkeptSessions.get(sessionId) ?? 0, this.unkeptUsers.get(userId) ?? 0);
    return until > now;
  }

  private keep(sessionId: string, userId: string, state: SessionState) {
    this.kept.delete(sessionId);
    if (this.kept.size >= MAX_ENTRIES) this.kept.delete(this.kept.keys().next().value as string);
    this.kept.set(sessionId, { ...state, userId, at: Date.now() });
  }

  private heard(message: unknown) {
    this.changes += 1;
    const change = (typeof message === 'object' && message !== null ? message : {}) as Record<string, unknown>;
    const until = Date.now() + this.unkeptMs;
    const sessions = new Set(ids(change.sessions));
    const users = new Set(ids(change.users));
    for (const id of sessions) this.unkeptSessions.set(id, until);
    for (const id of users) this.unkeptUsers.set(id, until);
    for (const [id, known] of this.kept) if (sessions.has(id) || users.has(known.userId)) this.kept.delete(id);
    this.sweep();
  }

  /** Marks past their time go (each change heard sweeps: they are few). */
  private sweep() {
    const now = Date.now();
    for (const marks of [this.unkeptSessions, this.unkeptUsers]) for (const [id, until] of marks) if (until <= now) marks.delete(id);
  }

  private forgetAll() {
    this.changes += 1;
    this.kept.clear();
  }
}

/**
 * The answers of the apps that share a broadcast (one per embedded database in a process), by TTL:
 * what one app hears of a change, every app of that database in the process has heard.
 */
const liveSessionsOf = new WeakMap<Broadcast, Map<number, LiveSessions>>();

/** A session is live while its row exists, is not revoked, and its user is active; ttlMs 0 asks the database every time. */
export function sessionCheck(db: Knex, ttlMs: number, broadcast: Broadcast, databaseTimeoutMs: number): SessionCheck {
  let byTtl = liveSessionsOf.get(broadcast);
  if (!byTtl) liveSessionsOf.set(broadcast, (byTtl = new Map()));
  let sessions = byTtl.get(ttlMs);
  if (!sessions) byTtl.set(ttlMs, (sessions = new LiveSessions(db, ttlMs, broadcast, unkeptForMs(databaseTimeoutMs))));
  return sessions.check;
}

/**
 * Tells every process serving the database that these sessions end or these users change, inside
 * the transaction that changes them and before it writes: each drops what it kept of them and
 * asks the database again meanwhile. Resolves once every process has confirmed (or
 * BROADCAST_WAIT_MS passed: logged by the broadcast).
 */
export async function announceChange(broadcast: Broadcast, change: SessionChange, trx: Knex.Transaction): Promise<void> {
  await broadcast.publish(TOPIC, change, trx);
}
