// Rate-limit counts kept in a process's memory (one process's own store, or a cluster primary's
// counts for its workers): a Map whose ended windows are swept and whose size is bounded. Kept
// apart from the stores so that a cluster's primary loads only this, not the Redis client.
import type { LogEvent } from '../log/log.js';

/**
 * The memory driver's Map never forgets a caller. This one drops counts whose window has passed
 * (swept every `sweepMs`) and, should a flood of distinct callers outrun the sweep, the oldest
 * counts beyond `maxKeys`: memory stays bounded whatever the number of callers.
 */
export class ExpiringCounts<Entry extends { reset: number } = { reset: number }> extends Map<string, Entry> {
  private readonly timer: NodeJS.Timeout;
  /** Whether counts are being dropped to make room (told once per episode, not per drop). */
  private full = false;

  constructor(
    private readonly maxKeys: number,
    sweepMs: number,
    private readonly onFull: (full: boolean) => void = () => {},
  ) {
    super();
    this.timer = setInterval(() => this.sweep(), sweepMs);
    this.timer.unref();
  }

  override set(key: string, entry: Entry): this {
    // Re-inserted at the end, so iteration order is (nearly) the order windows began in.
    if (super.has(key)) super.delete(key);
    else if (this.size >= this.maxKeys) this.dropOldest(Math.ceil(this.maxKeys / 100));
    return super.set(key, entry);
  }

  /**
   * In one pass: a Map keeps deleted entries as holes at its start until it rehashes, so a fresh
   * iterator per eviction would walk them all, every time, just when a flood is under way.
   */
  private dropOldest(count: number): void {
    if (!this.full) {
      this.full = true;
      this.onFull(true);
    }
    let left = count;
    for (const key of this.keys()) {
      super.delete(key);
      if (--left === 0) return;
    }
  }

  /** Drops every count whose window ended (koa-ratelimit's memory driver keeps `reset` in Unix seconds). */
  sweep(nowSeconds = Date.now() / 1000): void {
    for (const [key, entry] of this) if (entry.reset < nowSeconds) super.delete(key);
    if (this.full && this.size < this.maxKeys * 0.9) {
      this.full = false;
      this.onFull(false);
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.clear();
  }
}

/** Counts bounded by RATE_LIMIT_MAX_KEYS, saying so in the log when they are full and when they have room again. */
export function boundedCounts<Entry extends { reset: number }>(maxKeys: number, log: LogEvent, sweepMs: number): ExpiringCounts<Entry> {
  return new ExpiringCounts<Entry>(maxKeys, sweepMs, (full) =>
    full
      ? log('warn', `rate limits: the in-memory store holds ${maxKeys} counts (RATE_LIMIT_MAX_KEYS); the oldest are dropped to make room`)
      : log('info', 'rate limits: the in-memory store has room again'),
  );
}

/** How often counts whose window ended are dropped. */
export const SWEEP_MS = 10_000;
