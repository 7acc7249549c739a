// Where idempotent requests are kept: one entry per caller and key, claimed while the first
// request runs, then holding its answer until it expires. Every process and instance shares it
// (the database, or Redis when REDIS_URL is set), so a retry reaching another one finds it.
import type { KeyOwner } from './request.js';

/** What a request answered, as a retry replays it. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as sent (JSON text), '' for none. */
  body: string;
}

/**
 * A create's answer kept by its own statement (database store): its status and the written row's
 * JSON image, which the route answers again as it answered the row (route.ts: idempotent.replay).
 */
export interface StoredRow {
  status: number;
  row: string;
}

export type Kept = StoredAnswer | StoredRow;

export type Claim =
  /** The key is this request's: run it, then complete() or release() with `token` (its claim's own). */
  | { kind: 'claimed'; token: string }
  /** A request with this key and fingerprint finished: replay its answer. */
  | { kind: 'done'; answer: Kept }
  /** A request with this key is still running. */
  | { kind: 'running' }
  /** The key was used with another request (method, path or body). */
  | { kind: 'mismatch' };

export interface IdempotencyStore {
  /**
   * Claims the key for the request of `fingerprint`, or says what holds it. An entry past its
   * expiry, or one claimed longer than `runningMs` ago and never completed (its process died), is
   * claimed anew.
   */
  claim(owner: KeyOwner, key: string, fingerprint: string): Promise<Claim>;
  /**
   * Keeps the claimed request's answer until the entry expires. `token` is the claim's: a request
   * whose claim was taken over (it ran past the running time) changes nothing of the new claim.
   */
  complete(owner: KeyOwner, key: string, token: string, answer: StoredAnswer): Promise<void>;
  /** Gives the key back (the request failed and wrote nothing): a retry runs again. */
  release(owner: KeyOwner, key: string, token: string): Promise<void>;
  /** Resolves once the store can be used, or after `timeoutMs`. */
  ready(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface StoreTimes {
  /** How long a completed answer is kept (IDEMPOTENCY_KEY_TTL_SECONDS, at least runningMs). */
  ttlMs: number;
  /** After how long an entry still running is taken to be abandoned. */
  runningMs: number;
}
