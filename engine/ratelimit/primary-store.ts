// A cluster worker's rate-limit store when there is no Redis: the counts live in the primary
// process (primary-counts.ts). koa-ratelimit keeps counting, through its Redis driver: all that
// driver asks of its client is `ratelimiter(key, now, duration, max, peek)` answering
// [remaining, reset, max], and this client answers it by asking the primary. The counts of one
// tick (the 2-3 policies of a request, and the other requests that arrived with it) travel in
// one message. A primary that does not answer in time is a store outage: the request goes on
// uncounted, as with Redis.
import type { Redis } from 'ioredis';
import type { LogEvent } from '../log.js';
import { isCountsAnswered, type CountAnswered, type CountAsked, type CountsAsked } from './primary-counts.js';
import { COUNT_TIMEOUT_MS, outageTracker, type LimitStore } from './store.js';

interface Waiting {
  count: CountAsked;
  resolve(answer: CountAnswered): void;
  reject(err: Error): void;
}

interface Sent {
  waiting: Waiting[];
  /** Date.now() when it was sent. */
  at: number;
}

/** A send that failed (the channel closing) is left to time out like an unanswered one. */
const ignoreSendError = () => {};

export function primaryStore(log: LogEvent, timeoutMs = COUNT_TIMEOUT_MS): LimitStore {
  let queued: Waiting[] = [];
  /** In the order they were sent, hence of their deadlines. */
  const sent = new Map<number, Sent>();
  let lastId = 0;

  const fail = (waiting: Waiting[], err: Error) => {
    for (const w of waiting) w.reject(err);
  };

  // One timer for every batch in flight rather than one per batch (a request's cost): a batch
  // times out between timeoutMs and 1.2 × timeoutMs after it was sent.
  const expiry = setInterval(() => {
    const sentBefore = Date.now() - timeoutMs;
    for (const [id, batch] of sent) {
      if (batch.at > sentBefore) break;
      sent.delete(id);
      fail(batch.waiting, new Error(`no answer within ${timeoutMs} ms`));
    }
  }, timeoutMs / 5);
  expiry.unref();

  const flush = () => {
    const waiting = queued;
    queued = [];
    if (!process.send || !process.connected) return fail(waiting, new Error('no channel to the primary process'));
    const id = ++lastId;
    sent.set(id, { waiting, at: Date.now() });
    const message: CountsAsked = { rateLimitCounts: id, counts: waiting.map((w) => w.count) };
    process.send(message, ignoreSendError);
  };

  const onMessage = (message: unknown) => {
    if (!isCountsAnswered(message)) return;
    const batch = sent.get(message.rateLimitCounts);
    if (!batch) return; // answered after its timeout: those requests went on uncounted
    sent.delete(message.rateLimitCounts);
    batch.waiting.forEach((w, i) => w.resolve(message.answers[i]));
  };
  process.on('message', onMessage);

  const client = {
    // async-ratelimiter defines its Lua script on a client without `ratelimiter`; this one has it.
    defineCommand() {},
    ratelimiter(key: string, _now: number, durationMs: number, max: number, peek: string): Promise<CountAnswered> {
      return new Promise((resolve, reject) => {
        // The primary's clock decides windows, so that every worker counts in the same one.
        queued.push({ count: [key, durationMs, max, peek === '1'], resolve, reject });
        if (queued.length === 1) setImmediate(flush);
      });
    },
  };

  return {
    kind: 'primary',
    driver: 'redis',
    // koa-ratelimit's Redis driver calls nothing else of its client than the two methods above.
    db: client as unknown as Redis,
    ...outageTracker(log, 'the cluster primary process'),
    async ready() {},
    async close() {
      process.off('message', onMessage);
      clearInterval(expiry);
      sent.clear();
    },
  };
}
