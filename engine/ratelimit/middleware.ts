// Counts each request against every limit that matches it (its caller's tier, its method, its
// endpoint) and refuses it with 429 when any is used up. koa-ratelimit does the counting: one of
// its middlewares per policy, each run as a probe, because one koa-ratelimit middleware is one
// policy and its own answers (fractional reset, plain-text 429) are not this API's.
import type { Context, Middleware, Next } from 'koa';
import ratelimit from 'koa-ratelimit';
import type { ClientAddress } from './client-ip.js';
import { byRestriction, rateLimitHeaders, tooManyRequests, type Count } from './headers.js';
import { PolicyMatcher, type LimitPolicy, type LimitTable } from './policy.js';
import type { LimitStore } from './store.js';
import { bucketOf, offerCharge, type Charging } from './item-charge.js';

/** The user of a valid access token, and the role it carries. */
export interface TokenHolder {
  userId: string;
  role: string;
}

export interface RateLimitOptions {
  table: LimitTable;
  store: LimitStore;
  /** Start of every key in the store. */
  prefix: string;
  /**
   * The holder of the request's access token when it is valid and its session live; undefined for
   * any other request, and for one whose route counts it as anonymous (a share link).
   */
  identify(ctx: Context): TokenHolder | undefined;
  clientAddress: ClientAddress;
  /** Hears each policy that refused a request (the refusal metric); a request may be refused by several. */
  onRefused?(policy: string): void;
  /** Unix seconds now; the store keeps its own clock, this one only words the headers. */
  now?: () => number;
}

/**
 * What a probe hands koa-ratelimit instead of the request's context. Its middleware only asks
 * `id` for the bucket and writes its figures (through `set`), a status, a body and state: given
 * this, the figures land here instead of on the response, where they would have to be read back
 * and removed, and a refusal stays ours to word (tooManyRequests).
 */
class ProbeContext {
  state: Record<string, unknown> = {};
  status = 200;
  body: unknown;
  /** Requests left after this one, the window's end (Unix seconds) and the limit: set once counted. */
  remaining = NaN;
  reset = NaN;
  total = NaN;

  constructor(readonly key: string) {}

  set(figures: string | Record<string, number>) {
    // The single-header form is only its Retry-After on refusal, which tooManyRequests words instead.
    if (typeof figures === 'string') return;
    this.remaining = figures.remaining;
    this.reset = figures.reset;
    this.total = figures.total;
  }
}

/** The figure names koa-ratelimit reports through ProbeContext.set. */
const FIGURES = { remaining: 'remaining', reset: 'reset', total: 'total' };

interface Probe {
  policy: LimitPolicy;
  middleware: Middleware;
  /**
   * Seconds to add to the reset a probe reports: the Redis driver rounds it down to a whole
   * second, and a client told to come back early would only be refused again.
   */
  resetLag: number;
}

/** A window scaled below a millisecond would be 0: never counted by memory, refused by Redis. */
const windowMsOf = (policy: LimitPolicy) => Math.max(1, Math.round(policy.windowSeconds * 1000));

function probes(options: RateLimitOptions): Map<LimitPolicy, Probe> {
  const { table, store, prefix } = options;
  return new Map(
    [...table.tiers, ...table.endpoints].map((policy) => {
      const middleware = ratelimit({
        driver: store.driver,
        db: store.db,
        namespace: `${prefix}:${policy.name}`,
        max: policy.requests,
        duration: windowMsOf(policy),
        id: (ctx) => (ctx as unknown as ProbeContext).key,
        headers: FIGURES,
      }) as Middleware;
      return [policy, { policy, middleware, resetLag: store.driver === 'redis' ? 1 : 0 }];
    }),
  );
}

/** One policy's count for this request, in the bucket `key`; the store's error when it could not take it. */
async function count(probe: Probe, key: string): Promise<Count | { error: unknown }> {
  const figures = new ProbeContext(key);
  let passed = false;
  try {
    // koa-ratelimit calls next only when the request is within the limit.
    await probe.middleware(figures as unknown as Context, async () => {
      passed = true;
    });
  } catch (error) {
    return { error };
  }
  return { policy: probe.policy, remaining: figures.remaining, resetAt: figures.reset + probe.resetLag, limit: figures.total, refused: !passed };
}

/** `n` more requests of one policy in its bucket, at once (take-many.ts), keyed as its probe keys them. */
async function takeMore(options: RateLimitOptions, policy: LimitPolicy, bucket: string, n: number): Promise<Count> {
  const durationMs = windowMsOf(policy);
  const taken = await options.store.takeMany(`${options.prefix}:${policy.name}:${bucket}`, policy.requests, durationMs, n);
  const resetLag = options.store.driver === 'redis' ? 1 : 0;
  return { policy, limit: policy.requests, remaining: taken.left, resetAt: taken.resetAt + resetLag, refused: !taken.taken };
}

/**
 * The counts of a request, waited for at most `timeoutMs` all together: one bound per request,
 * whatever the store does underneath. Each Redis command has its own timeout, but with
 * auto-pipelining the commands of a request that arrives while a round trip is under way wait for
 * that one to end before they are even sent: against a hung Redis, up to twice the timeout. The
 * cluster primary's store may likewise wait for a lease another request asked for, then ask. A
 * count not taken by then is a failed one (it may still be made late); the others stand (a window
 * the cluster worker knows is used up still refuses).
 *
 * A count that fails (the store's error) is a failed one too, never the request's failure.
 *
 * The counts of almost every request are taken at once (from memory, a lease, a pipelined reply),
 * so rather than a timer and a race per count on every request, one timer per middleware waits
 * for the oldest wait's end: waits end in the order they began (one bound for all). It keeps no
 * process alive: a request that waits holds its own socket.
 */
function boundedWaits(timeoutMs: number | undefined): <T>(counting: Array<Promise<T>>) => Promise<Array<T | { error: unknown }>> {
  const failedAs = (error: unknown) => ({ error });
  if (timeoutMs === undefined) return (counting) => Promise.all(counting.map((count) => count.catch(failedAs)));
  /** In the order they began, hence of their ends. */
  const waiting = new Set<{ endsAt: number; giveUp(): void }>();
  let timer: NodeJS.Timeout | undefined;
  const endDue = () => {
    timer = undefined;
    const now = performance.now();
    for (const wait of waiting) {
      if (wait.endsAt > now) {
        timer = setTimeout(endDue, wait.endsAt - now).unref();
        return;
      }
      wait.giveUp();
    }
  };
  return <T>(counting: Array<Promise<T>>) =>
    !counting.length
      ? Promise.resolve([])
      : new Promise<Array<T | { error: unknown }>>((resolve) => {
          const results: Array<T | { error: unknown }> = new Array(counting.length);
          const taken: boolean[] = new Array(counting.length).fill(false);
          let left = counting.length;
          const wait = {
            endsAt: performance.now() + timeoutMs,
            giveUp() {
              waiting.delete(wait);
              const late = new Error(`the rate-limit store did not answer within ${timeoutMs} ms`);
              for (let i = 0; i < results.length; i++) if (!taken[i]) results[i] = { error: late };
              resolve(results);
            },
          };
          waiting.add(wait);
          if (!timer) timer = setTimeout(endDue, timeoutMs).unref();
          counting.forEach((count, i) =>
            count.catch(failedAs).then((result) => {
              if (!waiting.has(wait)) return;
              results[i] = result;
              taken[i] = true;
              if (--left === 0) {
                waiting.delete(wait);
                resolve(results);
              }
            }),
          );
        });
}

export function rateLimits(options: RateLimitOptions): Middleware {
  const matcher = new PolicyMatcher(options.table);
  const byPolicy = probes(options);
  const now = options.now ?? (() => Date.now() / 1000);
  const countedWithin = boundedWaits(options.store.timeoutMs);
  const charging: Charging = {
    take: (policy, bucket, n) => takeMore(options, policy, bucket, n),
    within: countedWithin,
    failed: (err) => options.store.failed(err),
    now,
  };
  return async function rateLimited(ctx: Context, next: Next) {
    // While the store is known to be failing, requests go on uncounted without waiting for it.
    if (matcher.isExempt(ctx.method, ctx.path) || !options.store.available()) return next();
    const holder = options.identify(ctx);
    const address = `ip:${options.clientAddress(ctx.req)}`;
    const caller = holder ? `sub:${holder.userId}` : address;
    const policies = [matcher.tierOf(holder?.role), ...matcher.endpointPolicies(ctx.method, ctx.path)];
    const counting = policies.map((policy) => count(byPolicy.get(policy)!, bucketOf(policy, address, caller)));
    const counted = await countedWithin(counting);
    // A count the store could not take is skipped (fail-open). The store hears once per request,
    // so an outage that begins between two counts of one request is still one outage in the log.
    const failure = counted.find((c): c is { error: unknown } => 'error' in c);
    if (failure) options.store.failed(failure.error);
    else options.store.worked();
    const counts = counted.filter((c): c is Count => !('error' in c)).sort(byRestriction);
    if (counts.length) {
      const at = now();
      ctx.set(rateLimitHeaders(counts, at));
      // Refused by one limit; the wait lasts until every limit with nothing left frees up.
      if (counts.some((c) => c.refused)) {
        if (options.onRefused) for (const c of counts) if (c.refused) options.onRefused(c.policy.name);
        throw tooManyRequests(counts.filter((c) => c.remaining === 0), at);
      }
      // A bulk write's handler counts its other items against the same limits and buckets.
      offerCharge(ctx, { charging, counts, address, caller });
    }
    return next();
  };
}
