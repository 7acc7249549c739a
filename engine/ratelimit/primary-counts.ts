// Rate-limit counts of a cluster without Redis, kept in its primary process so that every worker
// counts a caller in the same window: N workers must not give a caller N times its limit. The
// workers ask over the cluster's IPC channel (primary-store.ts), every ask of a tick in one
// message, answered in one. A worker asks for a lease of several requests at once when a caller
// is busy (and the limit large), so that most requests are counted without a message at all.
import type { LogEvent } from '../log/log.js';
import { boundedCounts, SWEEP_MS, type ExpiringCounts } from './expiring-counts.js';

/** A lease to take: its key, the window length, the limit, and how many requests the worker would like to count. */
export type CountAsked = [key: string, durationMs: number, max: number, want: number];
/**
 * What the primary grants: how many requests the worker may count (0: the limit is used up), how
 * many the window has left beyond every lease granted so far, and when the window ends (Unix seconds).
 */
export type CountAnswered = [granted: number, left: number, resetSeconds: number];

export interface CountsAsked {
  rateLimitCounts: number;
  counts: CountAsked[];
}

export interface CountsAnswered {
  rateLimitCounts: number;
  answers: CountAnswered[];
}

export const isCountsAsked = (message: unknown): message is CountsAsked =>
  Array.isArray((message as CountsAsked | undefined)?.counts) && typeof (message as CountsAsked).rateLimitCounts === 'number';

export const isCountsAnswered = (message: unknown): message is CountsAnswered =>
  Array.isArray((message as CountsAnswered | undefined)?.answers) && typeof (message as CountsAnswered).rateLimitCounts === 'number';

/** A fixed window, like koa-ratelimit's memory driver: `reset` in Unix seconds (what the sweep reads). */
interface Window {
  reset: number;
  taken: number;
}

export class PrimaryCounts {
  private readonly windows: ExpiringCounts<Window>;

  constructor(maxKeys: number, log: LogEvent, sweepMs = SWEEP_MS) {
    this.windows = boundedCounts<Window>(maxKeys, log, sweepMs);
  }

  answer(asked: CountsAsked, nowMs = Date.now()): CountsAnswered {
    return { rateLimitCounts: asked.rateLimitCounts, answers: asked.counts.map((count) => this.take(count, nowMs)) };
  }

  /** Never more than the window has left: the leases of all workers together stay within the limit. */
  private take([key, durationMs, max, want]: CountAsked, nowMs: number): CountAnswered {
    let window = this.windows.get(key);
    if (!window || window.reset * 1000 <= nowMs) {
      window = { reset: (nowMs + durationMs) / 1000, taken: 0 };
      this.windows.set(key, window);
    }
    const granted = Math.max(0, Math.min(Math.floor(want), max - window.taken));
    window.taken += granted;
    return [granted, max - window.taken, window.reset];
  }

  close(): void {
    this.windows.close();
  }
}
