// What a response says about the limits it was counted against: the X-RateLimit-* trio of the
// one with the fewest requests left, the IETF draft's RateLimit-Policy and RateLimit for all of them,
// and for a refusal the wait and the message. Times are Unix seconds; every header value is whole.
import { HttpError } from '../errors.js';
import type { LimitPolicy } from './policy.js';

/** One policy's count after this request. */
export interface Count {
  policy: LimitPolicy;
  limit: number;
  remaining: number;
  /** Unix seconds (may be fractional) at which the window frees up. */
  resetAt: number;
  refused: boolean;
}

/** Fewest requests left; between equals, the one that frees up last. */
export function byRestriction(a: Count, b: Count): number {
  return a.remaining - b.remaining || b.resetAt - a.resetAt;
}

const windowOf = (policy: LimitPolicy) => Math.max(1, Math.ceil(policy.windowSeconds));
/**
 * Whole seconds until a count's window frees up, never more than the window: koa-ratelimit times
 * windows with its own clock (hrtime counted from a Date.now() in whole milliseconds), which may
 * run a fraction of a millisecond ahead of `now`, and rounding that up made a 60 s window read 61.
 */
const secondsUntil = (count: Count, now: number) => Math.min(windowOf(count.policy), Math.max(0, Math.ceil(count.resetAt - now)));

/** A policy's RateLimit-Policy item never changes: written once per policy, not per request. */
const policyItems = new WeakMap<LimitPolicy, string>();
function policyItem(policy: LimitPolicy): string {
  let item = policyItems.get(policy);
  if (item === undefined) {
    item = `"${policy.name}";q=${policy.requests};w=${windowOf(policy)}`;
    policyItems.set(policy, item);
  }
  return item;
}

/** @param counts sorted by byRestriction, most restrictive first */
export function rateLimitHeaders(counts: Count[], now: number): Record<string, string> {
  const [tightest] = counts;
  return {
    'X-RateLimit-Limit': String(tightest.limit),
    'X-RateLimit-Remaining': String(tightest.remaining),
    'X-RateLimit-Reset': String(Math.ceil(tightest.resetAt)),
    'RateLimit-Policy': counts.map((c) => policyItem(c.policy)).join(', '),
    RateLimit: counts.map((c) => `"${c.policy.name}";r=${c.remaining};t=${secondsUntil(c, now)}`).join(', '),
  };
}

/** 429 naming the limit that frees up last, with Retry-After until then (at least 1 s). */
export function tooManyRequests(refused: Count[], now: number): HttpError {
  const last = refused.reduce((a, b) => (b.resetAt > a.resetAt ? b : a));
  const wait = Math.max(1, secondsUntil(last, now));
  const { name } = last.policy;
  return new HttpError(
    429,
    `Too Many Requests: the limit "${name}" (${last.limit} ${last.limit === 1 ? 'request' : 'requests'} per ${windowOf(last.policy)} s) is used up; retry in ${wait} s`,
    { 'Retry-After': String(wait) },
  );
}
