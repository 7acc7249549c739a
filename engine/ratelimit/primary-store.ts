// A cluster worker's rate-limit store when there is no Redis: the counts live in the primary
// process (primary-counts.ts). koa-ratelimit keeps counting, through its Redis driver: all that
// driver asks of its client is `ratelimiter(key, now, duration, max, peek)` answering
// [remaining, reset, max], and this client answers it from a lease the primary granted.
//
// Asking the primary for every request would cost a message each way per request (and the
// primary's time): a worker asks for a lease of requests instead, counts them itself, and asks
// again when they are gone. A lease starts at one request and doubles each time one is used up
// within its window, up to leaseCap(limit): a caller seen now and then is counted exactly, one
// request per message, a busy one with a message every few dozen requests. The primary never
// grants more than a window has left, so a caller is never let through beyond its limit; the
// price is that requests another worker holds for a caller but does not use are lost to it, so a
// caller spread over several workers may be refused up to leaseCap(limit) requests (at most 1 %)
// early per other worker.
//
// The asks of one tick travel in one message. A primary that does not answer in time is a store
// outage: the request goes on uncounted, as with Redis.
import type { Redis } from 'ioredis';
import type { LogEvent } from '../log.js';
import { isCountsAnswered, type CountAnswered, type CountAsked, type CountsAsked } from './primary-counts.js';
import { ExpiringCounts, SWEEP_MS } from './expiring-counts.js';
import { COUNT_TIMEOUT_MS, outageTracker, type LimitStore } from './store.js';

/** The most requests one lease may hold. */
const MAX_LEASE = 64;

/** The largest lease for a limit: a hundredth of it (at least one request, at most MAX_LEASE). */
export const leaseCap = (max: number) => Math.max(1, Math.min(MAX_LEASE, Math.floor(max / 100)));

/** What async-ratelimiter's Redis script answers: what was left before this request (0: refused), the window's end (Unix seconds), the limit. */
type Counted = [remaining: number, resetSeconds: number, max: number];

interface Lease {
  /** The primary's window end, Unix seconds. */
  reset: number;
  /** Requests this worker may still let through in that window. */
  tokens: number;
  /** What the window had left beyond every lease when this one was granted. */
  left: number;
  /** How many requests were asked for last. */
  size: number;
}

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

export function primaryStore(log: LogEvent, maxKeys: number, timeoutMs = COUNT_TIMEOUT_MS): LimitStore {
  let queued: Waiting[] = [];
  /** In the order they were sent, hence of their deadlines. */
  const sent = new Map<number, Sent>();
  let lastId = 0;
  /** Bounded like any store of counts: a lease dropped early only loses its unused requests. */
  const leases = new ExpiringCounts<Lease>(maxKeys, SWEEP_MS);
  /** The ask under way per key: requests that find no lease wait for it rather than ask again. */
  const asking = new Map<string, Promise<void>>();

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

  const ask = (count: CountAsked) =>
    new Promise<CountAnswered>((resolve, reject) => {
      queued.push({ count, resolve, reject });
      if (queued.length === 1) setImmediate(flush);
    });

  /** Asks the primary for a lease on `key` and keeps what it grants; concurrent callers share one ask. */
  const renew = (key: string, durationMs: number, max: number, previous: Lease | undefined): Promise<void> => {
    const size = previous ? Math.min(previous.size * 2, leaseCap(max)) : 1;
    const renewal = ask([key, durationMs, max, size])
      .then(([granted, left, reset]) => {
        leases.set(key, { reset, tokens: granted, left, size });
      })
      .finally(() => asking.delete(key));
    asking.set(key, renewal);
    return renewal;
  };

  async function take(key: string, durationMs: number, max: number): Promise<Counted> {
    for (;;) {
      const lease = leases.get(key);
      // The primary's clock decides windows, so that every worker counts in the same one.
      const live = lease !== undefined && lease.reset * 1000 > Date.now() ? lease : undefined;
      if (live && live.tokens > 0) {
        live.tokens -= 1;
        return [live.left + live.tokens + 1, live.reset, max];
      }
      // Nothing left beyond the leases granted: refused until the window ends, without asking.
      if (live && live.left === 0) return [0, live.reset, max];
      await (asking.get(key) ?? renew(key, durationMs, max, live));
    }
  }

  const client = {
    // async-ratelimiter defines its Lua script on a client without `ratelimiter`; this one has it.
    defineCommand() {},
    ratelimiter(key: string, _now: number, durationMs: number, max: number): Promise<Counted> {
      return take(key, durationMs, max);
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
      leases.close();
    },
  };
}
