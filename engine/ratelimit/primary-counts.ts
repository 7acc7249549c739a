// Rate-limit counts of a cluster without Redis, kept in its primary process so that every worker
// counts a caller in the same window: N workers must not give a caller N times its limit. The
// workers ask over the cluster's IPC channel (primary-store.ts), every count of a tick in one
// message, answered in one.
import type { LogEvent } from '../log.js';
import { boundedCounts, SWEEP_MS, type ExpiringCounts } from './store.js';

/** One count to take: its key, the window length, the limit, and whether only to look (peek). */
export type CountAsked = [key: string, durationMs: number, max: number, peek: boolean];
/**
 * What async-ratelimiter's Redis script answers: what was left before this request (0: refused),
 * when the window ends (Unix seconds), and the limit.
 */
export type CountAnswered = [remaining: number, resetSeconds: number, max: number];

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

  private take([key, durationMs, max, peek]: CountAsked, nowMs: number): CountAnswered {
    let window = this.windows.get(key);
    if (!window || window.reset * 1000 <= nowMs) {
      window = { reset: (nowMs + durationMs) / 1000, taken: 0 };
      this.windows.set(key, window);
    }
    const remaining = max - window.taken;
    if (remaining <= 0) return [0, window.reset, max];
    if (!peek) window.taken++;
    return [remaining, window.reset, max];
  }

  close(): void {
    this.windows.close();
  }
}
