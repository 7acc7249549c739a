// A cluster worker's rate-limit store when there is no Redis: the counts live in the primary
// process (primary-counts.ts). koa-ratelimit keeps counting, through its Redis driver: all that
// driver asks of its client is `ratelimiter(key, now, duration, max, peek)` answering
// [remaining, reset, max], and this client answers it from a lease the primary granted.
//
// Asking the primary for every request would cost a message each way per request (and the
// primary's time): a worker asks for a lease of requests instead, counts them itself, and asks
// again when they are gone. A lease is one request, twice the last one when that was used up
// within a second of being granted (a busy caller), at most leaseCap(limit): a caller that sends
// less than a request a second to a worker is counted request by request, a busy one with a
// message every few dozen requests. The primary never grants more than a window has left, so a
// caller is never let through beyond its limit; the price is that requests another worker holds
// for a caller but does not use are lost to it, so a caller spread over several workers may be
// refused up to about one lease (a hundredth of the limit, at most 64) early per other worker.
//
// The asks of one tick travel in one message. A primary that does not answer in time is a store
// outage: the request goes on uncounted, as with Redis.
import type { Redis } from 'ioredis';
import type { LogEvent } from '../log/log.js';
import { isCountsAnswered, type CountAnswered, type CountAsked, type CountsAsked } from './primary-counts.js';
import { ExpiringCounts, SWEEP_MS } from './expiring-counts.js';
import { outageTracker, type LimitStore } from './store.js';
import { oneByOneTakeMany } from './take-many.js';

/** The most requests one lease may hold. */
const MAX_LEASE = 64;
/** A lease used up sooner than this after it was granted was too small for its caller: the next is twice as big. */
const LEASE_BUSY_MS = 1000;

/** The largest lease for a limit: a hundredth of it, at least one request, at most MAX_LEASE. */
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
  /** Date.now() when it was granted. */
  grantedAt: number;
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

/** The worker's side of its IPC channel to the primary: the process itself, or a test's stand-in. */
export interface PrimaryChannel {
  send?(message: CountsAsked, callback: (error: Error | null) => void): boolean;
  readonly connected?: boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

export function primaryStore(log: LogEvent, maxKeys: number, timeoutMs: number, channel: PrimaryChannel = process): LimitStore {
  let queued: Waiting[] = [];
  /** In the order they were sent, hence of their deadlines. */
  const sent = new Map<number, Sent>();
  let lastId = 0;
  /** Bounded like any store of counts: a lease dropped early only loses its unused requests. */
  const leases = new ExpiringCounts<Lease>(maxKeys, SWEEP_MS);

  const fail = (waiting: Waiting[], err: Error) => {
    for (const w of waiting) w.reject(err);
  };

  // One timer for every batch in flight rather than one per batch (a request's cost), and only
  // while one is (an idle worker is not woken ten times a second for nothing): a batch times out
  // between timeoutMs and 1.2 × timeoutMs after it was sent.
  let expiry: NodeJS.Timeout | undefined;
  const expire = () => {
    const sentBefore = Date.now() - timeoutMs;
    for (const [id, batch] of sent) {
      if (batch.at > sentBefore) break;
      sent.delete(id);
      fail(batch.waiting, new Error(`no answer within ${timeoutMs} ms`));
    }
    if (!sent.size) {
      clearInterval(expiry);
      expiry = undefined;
    }
  };

  const flush = () => {
    const waiting = queued;
    queued = [];
    if (!channel.send || !channel.connected) return fail(waiting, new Error('no channel to the primary process'));
    const id = ++lastId;
    sent.set(id, { waiting, at: Date.now() });
    if (!expiry) {
      expiry = setInterval(expire, timeoutMs / 5);
      expiry.unref();
    }
    const message: CountsAsked = { rateLimitCounts: id, counts: waiting.map((w) => w.count) };
    channel.send(message, ignoreSendError);
  };

  const onMessage = (message: unknown) => {
    if (!isCountsAnswered(message)) return;
    const batch = sent.get(message.rateLimitCounts);
    if (!batch) return; // answered after its timeout: those requests went on uncounted
    sent.delete(message.rateLimitCounts);
    batch.waiting.forEach((w, i) => w.resolve(message.answers[i]));
  };
  channel.on('message', onMessage);

  const ask = (count: CountAsked) =>
    new Promise<CountAnswered>((resolve, reject) => {
      queued.push({ count, resolve, reject });
      if (queued.length === 1) setImmediate(flush);
    });

  /** The size of the next lease: doubled when the last one was used up within LEASE_BUSY_MS, else one request again. */
  const nextSize = (lease: Lease | undefined, max: number, now: number) =>
    lease && now - lease.grantedAt < LEASE_BUSY_MS ? Math.min(lease.size * 2, leaseCap(max)) : 1;

  /** The ask under way per key: a request that finds none left waits for it before asking itself. */
  const asking = new Map<string, Promise<unknown>>();

  /**
   * One request counted from the lease, if it says: a request left (taken), or the window used up
   * (refused). `fresh`: a grant just came, so its window counts as current whatever the clock says
   * (a window shorter than an answer must not make a request ask forever).
   */
  function fromLease(key: string, max: number, fresh: boolean): Counted | undefined {
    const lease = leases.get(key);
    // The primary's clock decides windows, so that every worker counts in the same one.
    if (!lease || (!fresh && lease.reset * 1000 <= Date.now())) return undefined;
    if (lease.tokens > 0) {
      lease.tokens -= 1;
      return [lease.left + lease.tokens + 1, lease.reset, max];
    }
    // Nothing left beyond the leases granted: refused until the window ends, without asking.
    return lease.left === 0 ? [0, lease.reset, max] : undefined;
  }

  /** Asks the primary for `size` requests and takes the first; the rest of the grant joins the lease. */
  async function askFor(key: string, durationMs: number, max: number, size: number): Promise<Counted> {
    const answer = ask([key, durationMs, max, size]);
    if (!asking.has(key)) {
      asking.set(key, answer);
      answer.then(
        () => asking.get(key) === answer && asking.delete(key),
        () => asking.get(key) === answer && asking.delete(key),
      );
    }
    const [granted, left, reset] = await answer;
    const current = leases.get(key);
    const rest = Math.max(0, granted - 1);
    if (current && current.reset === reset) {
      // Another request's grant for the same window came first: join them (the later answer knows less left).
      current.tokens += rest;
      current.left = Math.min(current.left, left);
      current.size = Math.max(current.size, size);
      if (granted > 0) current.grantedAt = Date.now();
    } else if (!current || current.reset < reset) {
      leases.set(key, { reset, tokens: rest, left, size, grantedAt: Date.now() });
    }
    return granted === 0 ? [0, reset, max] : [left + granted, reset, max];
  }

  /**
   * One request counted: from the lease when it can; else, when another request of this worker is
   * asking already, from what that ask brings; else (or if that was not enough) by an ask of its
   * own. A request waits for at most two answers, and concurrent requests of one caller ask once
   * between them when the grant suffices, so a worker does not hoard one lease per request.
   */
  async function take(key: string, durationMs: number, max: number): Promise<Counted> {
    const counted = fromLease(key, max, false);
    if (counted) return counted;
    const pending = asking.get(key);
    if (!pending) return askFor(key, durationMs, max, nextSize(leases.get(key), max, Date.now()));
    if (await pending.then(() => true, () => false)) {
      const fromGrant = fromLease(key, max, true);
      if (fromGrant) return fromGrant;
    }
    // The shared grant did not reach this request: it asks for itself alone, so that a burst of
    // requests does not leave the worker holding a lease per request.
    return askFor(key, durationMs, max, 1);
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
    takeMany: oneByOneTakeMany((key, durationMs, max) => take(key, durationMs, max)),
    ...outageTracker(log, 'the cluster primary process'),
    timeoutMs,
    async ready() {},
    async close() {
      channel.off('message', onMessage);
      clearInterval(expiry);
      sent.clear();
      leases.close();
    },
  };
}
